#include "client/rpc_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "client/rpc_wire.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::client {
namespace {

constexpr uint32_t kLastFragment = 0x80000000u;
constexpr size_t kMaxReply = 64u << 20;

absl::Status ErrnoStatus(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

RpcClient::RpcClient(int fd, const RpcClientOptions& options) : fd_(fd), options_(options) {
  if (getrandom(&next_xid_, sizeof(next_xid_), 0) != sizeof(next_xid_)) next_xid_ = getpid();
}

RpcClient::~RpcClient() { close(fd_); }

absl::StatusOr<std::unique_ptr<RpcClient>> RpcClient::Connect(const std::string& host,
                                                              uint16_t port,
                                                              const RpcClientOptions& options) {
  sockaddr_storage addr;
  socklen_t len;
  absl::Status parsed = ParseNumericAddress(host, port, &addr, &len);
  if (!parsed.ok()) return parsed;
  return Connect(reinterpret_cast<sockaddr*>(&addr), len, options);
}

absl::StatusOr<std::unique_ptr<RpcClient>> RpcClient::Connect(const sockaddr* server,
                                                              socklen_t server_len,
                                                              const RpcClientOptions& options) {
  bool tcp = options.transport == rpc::Transport::kTcp;
  int fd = socket(server->sa_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus("socket");
  if (options.reserved_port && !BindReservedPort(fd, server->sa_family)) {
    close(fd);
    return ErrnoStatus("bind reserved port");
  }
  // A connected UDP socket only receives datagrams from the server.
  if (tcp) {
    // Non-blocking connect bounded by the call timeout.
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, server, server_len);
    if (rc < 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(options.timeout)));
      int err = 0;
      socklen_t err_len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
      if (rc <= 0 || err != 0) {
        errno = rc == 0 ? ETIMEDOUT : err;
        rc = -1;
      } else {
        rc = 0;
      }
    }
    fcntl(fd, F_SETFL, flags);
    if (rc < 0) {
      absl::Status status = ErrnoStatus("connect");
      close(fd);
      return status;
    }
  } else if (connect(fd, server, server_len) < 0) {
    absl::Status status = ErrnoStatus("connect");
    close(fd);
    return status;
  }
  return std::unique_ptr<RpcClient>(new RpcClient(fd, options));
}

std::string RpcClient::EncodeCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                  absl::Span<const uint8_t> args) const {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  EncodeCallHeader(e, xid, prog, vers, proc, options_.cred);
  chain.Append(args.data(), args.size());
  return chain.Flatten();
}

absl::Status RpcClient::Send(const std::string& message) {
  std::string framed;
  const std::string* out = &message;
  if (options_.transport == rpc::Transport::kTcp) {
    uint32_t mark = htonl(kLastFragment | static_cast<uint32_t>(message.size()));
    framed.assign(reinterpret_cast<const char*>(&mark), 4);
    framed += message;
    out = &framed;
  }
  size_t sent = 0;
  while (sent < out->size()) {
    ssize_t n = send(fd_, out->data() + sent, out->size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("send");
    }
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RpcClient::Receive(absl::Time deadline) {
  bool tcp = options_.transport == rpc::Transport::kTcp;
  std::string record;
  for (;;) {
    if (tcp) {
      // Complete fragments already buffered?
      while (tcp_buffer_.size() >= 4) {
        uint32_t mark;
        std::memcpy(&mark, tcp_buffer_.data(), 4);
        mark = ntohl(mark);
        size_t len = mark & ~kLastFragment;
        if (len > kMaxReply || record.size() + len > kMaxReply) {
          return absl::DataLossError("reply record too large");
        }
        if (tcp_buffer_.size() < 4 + len) break;
        record.append(tcp_buffer_, 4, len);
        tcp_buffer_.erase(0, 4 + len);
        if (mark & kLastFragment) return record;
      }
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return absl::DeadlineExceededError("no reply");
    pollfd p{fd_, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return ErrnoStatus("poll");
    if (rc == 0) continue;
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      // UDP: ECONNREFUSED when nothing listens.
      return ErrnoStatus("recv");
    }
    if (!tcp) return std::string(buf, static_cast<size_t>(n));
    if (n == 0) return absl::UnavailableError("connection closed by server");
    tcp_buffer_.append(buf, static_cast<size_t>(n));
  }
}

absl::StatusOr<RpcReply> RpcClient::Call(uint32_t prog, uint32_t vers, uint32_t proc,
                                         absl::Span<const uint8_t> args) {
  return CallWithXid(next_xid_++, prog, vers, proc, args);
}

absl::StatusOr<RpcReply> RpcClient::CallWithXid(uint32_t xid, uint32_t prog, uint32_t vers,
                                                uint32_t proc, absl::Span<const uint8_t> args) {
  std::string message = EncodeCall(xid, prog, vers, proc, args);
  absl::Time deadline = absl::Now() + options_.timeout;
  bool udp = options_.transport == rpc::Transport::kUdp;
  for (;;) {
    absl::Status sent = Send(message);
    if (!sent.ok()) return sent;
    absl::Time wait_until =
        udp ? std::min(deadline, absl::Now() + options_.udp_retransmit) : deadline;
    for (;;) {
      absl::StatusOr<std::string> got = Receive(wait_until);
      if (!got.ok()) {
        if (udp && absl::IsDeadlineExceeded(got.status()) && absl::Now() < deadline) break;
        return got.status();
      }
      RpcReply reply;
      if (!ParseReply(
              absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(got->data()), got->size()),
              &reply)) {
        return absl::DataLossError("malformed reply");
      }
      if (reply.xid != xid) continue;  // a late reply to an earlier call
      reply.raw = std::move(*got);
      return reply;
    }
  }
}

absl::StatusOr<std::string> RpcClient::SendRaw(absl::Span<const uint8_t> message,
                                               absl::Duration wait) {
  absl::Status sent =
      Send(std::string(reinterpret_cast<const char*>(message.data()), message.size()));
  if (!sent.ok()) return sent;
  return Receive(absl::Now() + wait);
}

bool ParseReply(absl::Span<const uint8_t> message, RpcReply* reply) {
  absl::Span<const uint8_t> results;
  if (!DecodeReplyHeader(message, reply, &results)) return false;
  reply->results.assign(reinterpret_cast<const char*>(results.data()), results.size());
  return true;
}

}  // namespace nfs3d::client
