// TcpConnection's side of a handover to another process (nfs3d --takeover,
// daemon/handover.h): the connection stops reading calls, lets the ones it
// read finish and their replies go out whole, then gives up its socket with
// the bytes it read and did not run. The successor's connection reads those
// first. The rest of the connection is in tcp_server.cc and tcp_splice.cc.
#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "boost/asio/post.hpp"

#include "common/log.h"
#include "rpc/tcp_server.h"

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
  // A TLS session's state is not handed over yet (the relay's lives in this
  // process): the client reconnects and starts TLS with the successor.
  if (tls_handshaking_ || info_.security != TransportSecurity::kNone) {
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
  return HandOverStep::kHanded;
}

void TcpConnection::PostTryHandOver(std::function<void(HandOverStep, HandedConnection)> done) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), done = std::move(done)] {
    HandedConnection handed;
    const HandOverStep step = self->TryHandOver(&handed);
    done(step, std::move(handed));
  });
}

void TcpConnection::SetPending(std::string_view pending) {
  if (pending.empty()) return;
  read_buf_.assign(pending.begin(), pending.end());
  read_buf_.resize(std::max(read_buf_.size(), kAdoptedReadBuffer));
  buffered_begin_ = 0;
  buffered_end_ = pending.size();
}

}  // namespace nfs3d::rpc
