// TcpConnection's side of a handover to another process (nfs3d --takeover,
// daemon/handover.h): the connection stops reading calls, lets the ones it
// read finish and their replies go out whole, then gives up its socket with
// the bytes it read and did not run. The successor's connection reads those
// first. A connection in TLS goes along when the kernel keeps its records
// (kTLS); one whose records a relay in this process keeps ends cleanly and
// its client makes a new session with the successor. The rest of the
// connection is in tcp_server.cc and tcp_splice.cc.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "boost/asio/post.hpp"

#include "common/log.h"
#include "rpc/tcp_server.h"
#include "rpc/tls/kernel_tls.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// An adopted connection's read buffer is at least this big (as a new one's).
constexpr size_t kAdoptedReadBuffer = 4 << 10;
}  // namespace

void TcpConnection::StopReadingForHandover() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->handing_over_ = true;
    self->capacity_timer_.cancel();
    self->record_timer_.cancel();  // the successor watches the record begun
    // Ends a pending read or wait for data; a pending wait to write is
    // cancelled with it and taken up again (WaitWritable).
    error_code ec;
    self->socket_.cancel(ec);
  });
}

TcpConnection::HandOverStep TcpConnection::TryHandOver(HandedConnection* out) {
  if (closed_) return HandOverStep::kClosed;
  // A handshake half done lives in this process: the client starts TLS again
  // with the successor.
  if (tls_handshaking_) {
    DoClose();
    return HandOverStep::kClosed;
  }
  // A read cancelled may still deliver what it read: its handler runs first.
  if (reading_ || inflight_.load() > 0 || unsent_bytes_.load() > 0 || held_inline_replies_ > 0 ||
      !metadata_batch_.empty()) {
    return HandOverStep::kNotYet;
  }
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (writer_busy_ || !queue_.empty()) return HandOverStep::kNotYet;
  }
  if (info_.security != TransportSecurity::kNone && !kernel_tls_) return EndRelayForHandover();
  if (eof_) {  // the client is done sending: nothing to hand over
    DoClose();
    return HandOverStep::kClosed;
  }
  // WRITE data spliced into a pipe goes back into the record begun.
  if (splice_.hole.size > 0 && !SpillPipe()) {
    DoClose();
    return HandOverStep::kClosed;
  }
  splice_.active = false;
  out->pending.clear();
  reassembler_.AppendUnfinished(&out->pending);
  out->pending.append(reinterpret_cast<const char*>(read_buf_.data()) + buffered_begin_,
                      buffered_end_ - buffered_begin_);
  // The successor's reader starts from a low-water mark of one byte.
  SetReadLowWater(1);
  error_code ec;
  const int fd = socket_.release(ec);
  if (ec) {
    NFS3D_LOG_WARNING("tcp: handing a connection over: %s", ec.message());
    DoClose();
    return HandOverStep::kClosed;
  }
  closed_ = true;
  context_->Remove(this);
  out->fd = fd;
  // With kTLS the session is the socket's: what is left is what the
  // connection knows of it. (A session is in the kernel only when GnuTLS
  // had read no record past the handshake: nothing of it stays here.)
  if (kernel_tls_) out->tls = tls_security_;
  return HandOverStep::kHanded;
}

TcpConnection::HandOverStep TcpConnection::EndRelayForHandover() {
  // The relay's session (keys, sequence numbers, GnuTLS's buffers) is this
  // process's memory and cannot go along. Every call read is answered and
  // its reply is in the pair: shutting the plain end makes the relay send
  // what it holds, then close_notify, then close the TCP connection. The
  // client reconnects and makes a new session with the successor, and sends
  // again what it sent after the last reply (never read here).
  const int fd = socket_.native_handle();
  if (!relay_ending_) {
    relay_ending_ = true;
    shutdown(fd, SHUT_WR);
    return HandOverStep::kNotYet;
  }
  // The relay closed its end once done.
  pollfd p{fd, POLLRDHUP, 0};
  if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0) {
    DoClose();
    return HandOverStep::kClosed;
  }
  return HandOverStep::kNotYet;
}

void TcpConnection::PostTryHandOver(std::function<void(HandOverStep, HandedConnection)> done) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), done = std::move(done)] {
    HandedConnection handed;
    const HandOverStep step = self->TryHandOver(&handed);
    done(step, std::move(handed));
  });
}

absl::Status TcpConnection::SetHandedTls(const ConnectionSecurity& tls) {
  const bool kernel = tls::HasKernelTls(socket_.native_handle());
  if (kernel != (tls.mode != TransportSecurity::kNone)) {
    // Served as TLS it would pass the exports' xprtsec= checks in clear
    // text; served as plain RPC its records would fail every read.
    return absl::InvalidArgumentError(
        kernel ? "handed connection: a kernel TLS socket handed over as plain RPC"
               : "handed connection: handed over as TLS, but the socket has no kernel TLS");
  }
  if (!kernel) return absl::OkStatus();
  info_.security = tls.mode;
  kernel_tls_ = true;
  tls_security_ = tls;
  tls_security_.kernel_records = true;
  return absl::OkStatus();
}

void TcpConnection::SetPending(std::string_view pending) {
  if (pending.empty()) return;
  read_buf_.assign(pending.begin(), pending.end());
  read_buf_.resize(std::max(read_buf_.size(), kAdoptedReadBuffer));
  buffered_begin_ = 0;
  buffered_end_ = pending.size();
}

}  // namespace nfs3d::rpc
