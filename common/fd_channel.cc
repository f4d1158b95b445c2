#include "common/fd_channel.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

#include "common/unix_socket.h"

namespace nfs3d {

namespace {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// Reads exactly n bytes; EOF before that is an error.
absl::Status ReadFully(int fd, char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Errno("handover channel read");
    if (r == 0) return absl::UnavailableError("handover channel closed by the peer");
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace

OwnedFd& OwnedFd::operator=(OwnedFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.Release();
  }
  return *this;
}

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) close(fd_);
}

int OwnedFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

absl::StatusOr<FdChannel> FdChannel::Connect(const std::string& path) {
  absl::StatusOr<sockaddr_un> addr = UnixSocketAddress(path);
  if (!addr.ok()) return addr.status();
  OwnedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Errno("socket");
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return Errno(absl::StrCat("connect to ", path));
  }
  return FdChannel(std::move(fd));
}

int FdChannel::PeerPid() const {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  return cred.pid;
}

int FdChannel::PeerUid() const {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  return static_cast<int>(cred.uid);
}

absl::Status FdChannel::SetTimeout(int seconds) {
  timeval tv{seconds, 0};
  if (setsockopt(fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
      setsockopt(fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
    return Errno("setsockopt");
  }
  return absl::OkStatus();
}

absl::Status FdChannel::Send(std::string_view payload, absl::Span<const int> fds) {
  if (fds.size() > kMaxFds) return absl::InvalidArgumentError("too many descriptors in a frame");
  const uint32_t length = htonl(static_cast<uint32_t>(payload.size()));
  iovec iov[2] = {{const_cast<uint32_t*>(&length), sizeof(length)},
                  {const_cast<char*>(payload.data()), payload.size()}};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  size_t total = sizeof(length) + payload.size();
  ssize_t n;
  do {
    n = sendmsg(fd(), &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Errno("handover channel send");
  // The descriptors went with the first byte; the rest is plain data.
  size_t sent = static_cast<size_t>(n);
  while (sent < total) {
    const char* base = sent < sizeof(length) ? reinterpret_cast<const char*>(&length) + sent
                                             : payload.data() + (sent - sizeof(length));
    size_t chunk = sent < sizeof(length) ? sizeof(length) - sent : total - sent;
    ssize_t w = send(fd(), base, chunk, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Errno("handover channel send");
    sent += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::StatusOr<FdFrame> FdChannel::Receive(size_t max_payload) {
  FdFrame frame;
  uint32_t length = 0;
  iovec iov{&length, sizeof(length)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = recvmsg(fd(), &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Errno("handover channel receive");
  if (n == 0) return absl::UnavailableError("handover channel closed by the peer");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      frame.fds.emplace_back(fd);
    }
  }
  if (msg.msg_flags & MSG_CTRUNC) return absl::DataLossError("descriptors truncated");
  if (static_cast<size_t>(n) < sizeof(length)) {
    absl::Status s = ReadFully(fd(), reinterpret_cast<char*>(&length) + n, sizeof(length) - n);
    if (!s.ok()) return s;
  }
  length = ntohl(length);
  if (length > max_payload) {
    return absl::InvalidArgumentError(absl::StrCat("handover frame of ", length, " bytes"));
  }
  frame.payload.resize(length);
  if (absl::Status s = ReadFully(fd(), frame.payload.data(), length); !s.ok()) return s;
  return frame;
}

absl::StatusOr<OwnedFd> ListenUnixStream(const std::string& path) {
  OwnedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Errno("socket");
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path.c_str());
  if (absl::Status s = BindUnixSocket(fd.get(), path, 0600); !s.ok()) return s;
  if (listen(fd.get(), 4) != 0) return Errno(absl::StrCat("listen on ", path));
  return fd;
}

}  // namespace nfs3d
