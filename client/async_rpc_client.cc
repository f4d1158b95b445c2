#include "client/async_rpc_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

#include "client/rpc_wire.h"

namespace nfs3d::client {
namespace {

constexpr uint32_t kLastFragment = 0x80000000u;
constexpr size_t kMaxRecord = 64u << 20;
constexpr size_t kUdpMaxDatagram = 65536;
constexpr size_t kTcpReadChunk = 256 * 1024;
// Datagrams read per Poll round, so sends and timers are not starved.
constexpr int kUdpReadBurst = 64;

absl::Status ErrnoStatus(absl::string_view what, int err) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(err)));
}

const char* AcceptStatName(uint32_t s) {
  switch (s) {
    case 1:
      return "PROG_UNAVAIL (program not served)";
    case 2:
      return "PROG_MISMATCH (version not served)";
    case 3:
      return "PROC_UNAVAIL (procedure not served)";
    case 4:
      return "GARBAGE_ARGS (server could not decode the arguments)";
    case 5:
      return "SYSTEM_ERR";
  }
  return "unknown accept_stat";
}

bool SetSocketBuffer(int fd, int option, int force_option, int size) {
  if (setsockopt(fd, SOL_SOCKET, force_option, &size, sizeof(size)) == 0) return true;
  return setsockopt(fd, SOL_SOCKET, option, &size, sizeof(size)) == 0;
}

int PollMillis(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(d) + 1, 60000));
}

}  // namespace

absl::Status ParseReplyHeader(absl::Span<const uint8_t> message, uint32_t* xid,
                              absl::Span<const uint8_t>* results) {
  ReplyHeader h;
  const bool complete = DecodeReplyHeader(message, &h, results);
  *xid = h.xid;
  if (!complete) return absl::DataLossError("malformed RPC reply header");
  if (h.reply_stat == 0) {
    if (h.accept_stat == 0) return absl::OkStatus();
    if (h.accept_stat == 2) {
      return absl::FailedPreconditionError(absl::StrCat("RPC ", AcceptStatName(h.accept_stat),
                                                        ": server has ", h.mismatch_low, "..",
                                                        h.mismatch_high));
    }
    return absl::FailedPreconditionError(absl::StrCat("RPC ", AcceptStatName(h.accept_stat)));
  }
  if (h.reject_stat == 0) return absl::FailedPreconditionError("RPC MSG_DENIED: RPC_MISMATCH");
  return absl::PermissionDeniedError(absl::StrCat(
      "RPC MSG_DENIED: AUTH_ERROR auth_stat=", h.auth_stat,
      h.auth_stat == 5 ? " (AUTH_TOOWEAK: server wants a privileged source port?)" : ""));
}

AsyncRpcClient::AsyncRpcClient(int fd, const AsyncRpcOptions& options)
    : fd_(fd), options_(options), tcp_(options.transport == rpc::Transport::kTcp) {
  if (getrandom(&next_xid_, sizeof(next_xid_), 0) != sizeof(next_xid_)) next_xid_ = getpid();
  rbuf_.resize(tcp_ ? 2 * kTcpReadChunk : kUdpMaxDatagram);
}

AsyncRpcClient::~AsyncRpcClient() { close(fd_); }

absl::StatusOr<std::unique_ptr<AsyncRpcClient>> AsyncRpcClient::Connect(
    const std::string& host, uint16_t port, const AsyncRpcOptions& options) {
  sockaddr_storage addr;
  socklen_t len;
  absl::Status parsed = ParseNumericAddress(host, port, &addr, &len);
  if (!parsed.ok()) return parsed;
  bool tcp = options.transport == rpc::Transport::kTcp;
  int fd =
      socket(addr.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return ErrnoStatus("socket", errno);
  SetSocketBuffer(fd, SO_SNDBUF, SO_SNDBUFFORCE, options.socket_buffer);
  SetSocketBuffer(fd, SO_RCVBUF, SO_RCVBUFFORCE, options.socket_buffer);
  if (tcp) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  if (options.reserved_port && !BindReservedPort(fd, addr.ss_family)) {
    int err = errno;
    close(fd);
    return ErrnoStatus("bind reserved port", err);
  }
  std::string where = absl::StrCat(tcp ? "tcp " : "udp ", host, ":", port);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
  if (rc < 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int n;
    do {
      n = poll(&p, 1, PollMillis(options.connect_timeout));
    } while (n < 0 && errno == EINTR);
    int err = 0;
    socklen_t err_len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
    if (n == 0) {
      close(fd);
      return absl::DeadlineExceededError(absl::StrCat("connect to ", where, ": timed out"));
    }
    if (err != 0) {
      close(fd);
      return ErrnoStatus(absl::StrCat("connect to ", where), err);
    }
  } else if (rc < 0) {
    int err = errno;
    close(fd);
    return ErrnoStatus(absl::StrCat("connect to ", where), err);
  }
  if (tcp && options.tls != nullptr && !options.tls->ca.empty()) {
    absl::StatusOr<int> plain = StartTls(fd, *options.tls);
    if (!plain.ok()) {
      close(fd);
      return plain.status();
    }
    fd = *plain;
  }
  return std::unique_ptr<AsyncRpcClient>(new AsyncRpcClient(fd, options));
}

std::shared_ptr<AsyncRpcClient::Message> AsyncRpcClient::EncodeCall(
    uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
    absl::FunctionRef<void(xdr::Encoder&)> encode_args, uint32_t* token) const {
  auto m = std::make_shared<Message>();
  if (options_.security != nullptr) {
    xdr::BufferChain plain;
    xdr::Encoder pe(&plain);
    encode_args(pe);
    options_.security->Encode(xid, prog, vers, proc, std::move(plain), &m->body, token);
  } else {
    xdr::Encoder e(&m->body);
    EncodeCallHeader(e, xid, prog, vers, proc, options_.cred);
    encode_args(e);
  }
  m->size = m->body.size();
  if (tcp_) {
    uint32_t mark = htonl(kLastFragment | static_cast<uint32_t>(m->size));
    std::memcpy(m->mark, &mark, 4);
    m->iov.push_back(iovec{m->mark, 4});
    m->size += 4;
  }
  m->body.AppendIovecs(&m->iov);
  return m;
}

uint32_t AsyncRpcClient::Start(uint32_t prog, uint32_t vers, uint32_t proc,
                               absl::FunctionRef<void(xdr::Encoder&)> encode_args,
                               ReplyCallback done) {
  uint32_t xid = next_xid_++;
  ++stats_.calls;
  if (!broken_.ok()) {
    failed_.emplace_back(std::move(done), broken_);
    return xid;
  }
  Pending p;
  p.message = EncodeCall(xid, prog, vers, proc, encode_args, &p.security_token);
  p.done = std::move(done);
  absl::Time now = absl::Now();
  p.first_sent = now;
  p.deadline = now + options_.call_timeout;
  p.rto = options_.udp_timeout;
  p.retransmit_at = now + p.rto;
  send_queue_.push_back(Outgoing{p.message, 0});
  pending_.emplace(xid, std::move(p));
  return xid;
}

absl::Status AsyncRpcClient::Flush() {
  std::vector<iovec> iov;
  while (!send_queue_.empty()) {
    // TCP: the unsent bytes of as many queued calls as one sendmsg takes
    // (CREATE+SETATTR+REMOVE made one sendmsg per call, 77% of the load
    // client's system time); UDP: one datagram.
    iov.clear();
    for (const Outgoing& out : send_queue_) {
      size_t skip = out.offset;  // already written (TCP partial write)
      for (const iovec& v : out.message->iov) {
        if (skip >= v.iov_len) {
          skip -= v.iov_len;
          continue;
        }
        iov.push_back(iovec{static_cast<uint8_t*>(v.iov_base) + skip, v.iov_len - skip});
        skip = 0;
      }
      if (!tcp_ || options_.send_per_call || iov.size() >= IOV_MAX) break;
    }
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = std::min<size_t>(iov.size(), IOV_MAX);
    ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
      if (!tcp_ && errno == ENOBUFS) return absl::OkStatus();  // try again on the next round
      if (!tcp_ && errno == EMSGSIZE) {
        return absl::InvalidArgumentError(
            absl::StrCat("UDP datagram of ", send_queue_.front().message->size,
                         " bytes too large: use a smaller block size"));
      }
      if (errno == ECONNREFUSED) {
        return absl::UnavailableError("server refused (nothing listens on that port any more)");
      }
      return ErrnoStatus("send", errno);
    }
    stats_.bytes_sent += static_cast<uint64_t>(n);
    if (!tcp_) {
      send_queue_.pop_front();
      continue;
    }
    // Retire the calls written, in order; the last may be partly out.
    for (size_t left = static_cast<size_t>(n); left > 0;) {
      Outgoing& out = send_queue_.front();
      const size_t rest = out.message->size - out.offset;
      if (left < rest) {
        out.offset += left;
        break;
      }
      left -= rest;
      send_queue_.pop_front();
    }
  }
  return absl::OkStatus();
}

bool AsyncRpcClient::HandleReply(absl::Span<uint8_t> message) {
  uint32_t xid = 0;
  absl::Span<const uint8_t> results;
  absl::Status status = ParseReplyHeader(message, &xid, &results);
  if (message.size() < 4) return false;
  auto it = pending_.find(xid);
  if (it == pending_.end()) {
    ++stats_.stale_replies;
    return false;
  }
  Pending p = std::move(it->second);
  pending_.erase(it);
  ++stats_.replies;
  stats_.total_latency += absl::Now() - p.first_sent;
  if (options_.security != nullptr && status.ok()) {
    absl::StatusOr<absl::Span<const uint8_t>> plain =
        options_.security->Open(message, p.security_token);
    p.done(plain.status(), plain.ok() ? *plain : absl::Span<const uint8_t>());
    return true;
  }
  p.done(status, results);
  return true;
}

absl::Status AsyncRpcClient::ReadUdp(int* completed) {
  for (int i = 0; i < kUdpReadBurst; ++i) {
    ssize_t n = recv(fd_, rbuf_.data(), rbuf_.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
      if (errno == ECONNREFUSED) {
        return absl::UnavailableError(
            "server unreachable: ICMP port unreachable (nothing listens on that UDP port)");
      }
      return ErrnoStatus("recv", errno);
    }
    stats_.bytes_received += static_cast<uint64_t>(n);
    if (HandleReply(absl::MakeSpan(rbuf_.data(), static_cast<size_t>(n)))) ++*completed;
  }
  return absl::OkStatus();
}

absl::Status AsyncRpcClient::ReadTcp(int* completed) {
  for (;;) {
    // Parse every complete fragment in the buffer.
    while (rend_ - rstart_ >= 4) {
      uint32_t mark;
      std::memcpy(&mark, rbuf_.data() + rstart_, 4);
      mark = ntohl(mark);
      size_t len = mark & ~kLastFragment;
      if (len > kMaxRecord || fragments_.size() + len > kMaxRecord) {
        return absl::DataLossError("reply record too large");
      }
      if (rend_ - rstart_ < 4 + len) {
        // Make room for the whole fragment.
        if (rbuf_.size() - rstart_ < 4 + len) {
          std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
          rend_ -= rstart_;
          rstart_ = 0;
          if (rbuf_.size() < 4 + len + kTcpReadChunk) rbuf_.resize(4 + len + kTcpReadChunk);
        }
        break;
      }
      uint8_t* body = rbuf_.data() + rstart_ + 4;
      rstart_ += 4 + len;
      if (!(mark & kLastFragment)) {
        fragments_.append(reinterpret_cast<const char*>(body), len);
        continue;
      }
      bool handled;
      if (fragments_.empty()) {
        handled = HandleReply(absl::MakeSpan(body, len));
      } else {
        fragments_.append(reinterpret_cast<const char*>(body), len);
        std::string record = std::move(fragments_);
        fragments_.clear();
        handled =
            HandleReply(absl::MakeSpan(reinterpret_cast<uint8_t*>(record.data()), record.size()));
      }
      if (handled) ++*completed;
    }
    if (rstart_ == rend_) rstart_ = rend_ = 0;
    if (rbuf_.size() - rend_ < kTcpReadChunk / 4) {
      std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
      rend_ -= rstart_;
      rstart_ = 0;
      if (rbuf_.size() - rend_ < kTcpReadChunk / 4) rbuf_.resize(rbuf_.size() + kTcpReadChunk);
    }
    ssize_t n = recv(fd_, rbuf_.data() + rend_, rbuf_.size() - rend_, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
      return ErrnoStatus("connection to server lost: recv", errno);
    }
    if (n == 0) return absl::UnavailableError("connection closed by server");
    stats_.bytes_received += static_cast<uint64_t>(n);
    rend_ += static_cast<size_t>(n);
  }
}

int AsyncRpcClient::ExpireTimers(absl::Time now) {
  int completed = 0;
  std::vector<uint32_t> expired;
  for (auto& [xid, p] : pending_) {
    if (now >= p.deadline) {
      expired.push_back(xid);
    } else if (!tcp_ && now >= p.retransmit_at) {
      p.rto = std::min(p.rto * 2, options_.udp_max_timeout);
      p.retransmit_at = now + p.rto;
      ++stats_.retransmits;
      send_queue_.push_back(Outgoing{p.message, 0});
    }
  }
  for (uint32_t xid : expired) {
    auto it = pending_.find(xid);
    if (it == pending_.end()) continue;
    Pending p = std::move(it->second);
    pending_.erase(it);
    ++stats_.timeouts;
    ++completed;
    p.done(absl::DeadlineExceededError(
               absl::StrCat("no reply within ", absl::FormatDuration(options_.call_timeout),
                            tcp_ ? "" : " (UDP, retransmitted)", ": server not answering")),
           {});
  }
  return completed;
}

absl::Time AsyncRpcClient::NextTimer() const {
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [xid, p] : pending_) {
    next = std::min(next, p.deadline);
    if (!tcp_) next = std::min(next, p.retransmit_at);
  }
  return next;
}

void AsyncRpcClient::Break(absl::Status why) {
  if (broken_.ok()) broken_ = std::move(why);
  send_queue_.clear();
  std::unordered_map<uint32_t, Pending> pending = std::move(pending_);
  pending_.clear();
  for (auto& [xid, p] : pending) failed_.emplace_back(std::move(p.done), broken_);
}

int AsyncRpcClient::RunFailed() {
  int n = 0;
  while (!failed_.empty()) {
    auto batch = std::move(failed_);
    failed_.clear();
    for (auto& [done, status] : batch) {
      done(status, {});
      ++n;
    }
  }
  return n;
}

absl::Status AsyncRpcClient::Poll(absl::Duration max_wait) {
  absl::Time end = absl::Now() + max_wait;
  for (;;) {
    int completed = RunFailed();
    if (!broken_.ok()) return broken_;
    if (absl::Status s = Flush(); !s.ok()) {
      Break(s);
      RunFailed();
      return broken_;
    }
    absl::Time now = absl::Now();
    completed += ExpireTimers(now);
    if (completed > 0 && !send_queue_.empty()) {
      if (absl::Status s = Flush(); !s.ok()) {
        Break(s);
        RunFailed();
        return broken_;
      }
    }
    if (completed > 0 || now >= end) return broken_;
    pollfd p{fd_, POLLIN, 0};
    if (!send_queue_.empty()) p.events |= POLLOUT;
    int n = poll(&p, 1, PollMillis(std::min(end, NextTimer()) - now));
    if (n < 0) {
      if (errno == EINTR) return absl::OkStatus();  // let the caller look at its stop flag
      Break(ErrnoStatus("poll", errno));
      continue;
    }
    if (n == 0) continue;
    absl::Status read = absl::OkStatus();
    if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
      read = tcp_ ? ReadTcp(&completed) : ReadUdp(&completed);
    }
    if (!read.ok()) Break(read);
    if (completed > 0) {
      // Callbacks usually queued new calls: send them before returning.
      if (absl::Status s = Flush(); !s.ok()) Break(s);
      RunFailed();
      return broken_;
    }
  }
}

absl::Status AsyncRpcClient::Drain(absl::Time deadline) {
  while (!pending_.empty() || !failed_.empty()) {
    absl::Time now = absl::Now();
    if (now >= deadline) return absl::DeadlineExceededError("calls still outstanding");
    absl::Status s = Poll(deadline - now);
    if (!s.ok()) return s;
  }
  return broken_;
}

absl::Status AsyncRpcClient::WaitFor(const bool* done) {
  absl::Time deadline = absl::Now() + options_.call_timeout + absl::Seconds(1);
  while (!*done) {
    absl::Time now = absl::Now();
    if (now >= deadline) return absl::DeadlineExceededError("no reply");
    Poll(deadline - now).IgnoreError();  // the call's callback reports the error
    if (!broken_.ok() && failed_.empty() && !*done) return broken_;
  }
  return absl::OkStatus();
}

}  // namespace nfs3d::client
