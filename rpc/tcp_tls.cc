// TcpConnection's side of RPC-with-TLS (RFC 9289): the AUTH_TLS probe, the
// handshake on the connection's strand with a deadline, and then records in
// the kernel (kTLS: the socket is used as before) or, where the kernel
// cannot take them, in user space through a relay (rpc/tls/tls_relay.h)
// whose plain end replaces the socket. The rest of the connection is in
// tcp_server.cc.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <utility>

#include "boost/asio/steady_timer.hpp"

#include "common/log.h"
#include "rpc/record_marker.h"
#include "rpc/tcp_server.h"
#include "rpc/tls/kernel_tls.h"
#include "rpc/tls/tls_probe.h"
#include "rpc/tls/tls_relay.h"
#include "xdr/buffer_pool.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// "kTLS unavailable" is logged for the first connection only.
std::atomic<bool> ktls_logged{false};
}  // namespace

bool TcpConnection::TakeTlsProbe() {
  if (info_.security != TransportSecurity::kNone) return false;  // refused by the dispatcher
  const std::optional<uint32_t> xid = tls::ProbeXid(reassembler_.Partial());
  if (!xid) return false;
  // Calls read before the probe would have their replies cross the switch
  // to TLS: the dispatcher answers this probe as a server without TLS. (The
  // Linux client probes first thing on a new connection.)
  if (inflight_.load() > 0 || !metadata_batch_.empty() || held_inline_replies_ > 0) {
    return false;
  }
  xdr::VectorPool::Records().Put(reassembler_.TakeRecord());
  // What followed the probe in the same read is the start of the handshake.
  std::string early(reinterpret_cast<const char*>(read_buf_.data()) + buffered_begin_,
                    buffered_end_ - buffered_begin_);
  buffered_begin_ = buffered_end_;
  xdr::BufferChain body;
  tls::EncodeStartTlsReply(*xid, &body);
  std::string reply(4 + body.size(), '\0');
  auto* bytes = reinterpret_cast<uint8_t*>(reply.data());
  EncodeRecordMark(static_cast<uint32_t>(body.size()), /*last=*/true, bytes);
  body.CopyTo(0, body.size(), bytes + 4);
  // Nothing else is queued on a connection that has no call in flight, so
  // the few bytes go straight into its empty send buffer.
  if (send(socket_.native_handle(), reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
      static_cast<ssize_t>(reply.size())) {
    DoClose();
    return true;
  }
  auto session = tls::TlsSession::Server(context_->tls(), socket_.native_handle(), early);
  if (!session.ok()) {
    NFS3D_LOG_WARNING("tcp: %s", session.status().message());
    DoClose();
    return true;
  }
  tls_session_ = std::move(*session);
  tls_handshaking_ = true;
  tls_deadline_ = std::make_unique<asio::steady_timer>(socket_.get_executor());
  tls_deadline_->expires_after(
      std::chrono::milliseconds(context_->options().tls_handshake_timeout_ms));
  tls_deadline_->async_wait([self = shared_from_this()](const error_code& ec) {
    if (ec || !self->tls_handshaking_ || self->closed_) return;
    NFS3D_LOG_DEBUG("tcp: TLS handshake not finished in time; closing");
    self->DoClose();
  });
  StepHandshake();
  return true;
}

void TcpConnection::StepHandshake() {
  if (closed_) return;
  std::string error;
  const tls::TlsSession::Step step = tls_session_->Handshake(&error);
  if (step == tls::TlsSession::Step::kFailed) {
    NFS3D_LOG_INFO("tcp: TLS handshake failed: %s", error);
    DoClose();
    return;
  }
  if (step == tls::TlsSession::Step::kDone) {
    OnHandshakeDone();
    return;
  }
  const auto wait = step == tls::TlsSession::Step::kWantWrite ? asio::socket_base::wait_write
                                                              : asio::socket_base::wait_read;
  socket_.async_wait(wait, [self = shared_from_this()](const error_code& ec) {
    if (ec) {
      if (!self->closed_) self->DoClose();
      return;
    }
    self->StepHandshake();
  });
}

void TcpConnection::OnHandshakeDone() {
  tls_handshaking_ = false;
  tls_deadline_->cancel();
  info_.security = tls_session_->security();
  tls_security_ = tls_session_->Security();
  const std::string described = DescribeSecurity(tls_security_);
  const absl::Status kernel = tls::EnableKernelTls(socket_.native_handle(), tls_session_->get());
  if (kernel.ok()) {
    kernel_tls_ = true;
    tls_session_.reset();  // the kernel holds the keys now
    NFS3D_LOG_DEBUG("tcp: TLS (%s), records in the kernel", described);
  } else if (!absl::IsUnavailable(kernel)) {
    NFS3D_LOG_WARNING("tcp: kTLS setup failed halfway (%s); closing", kernel.message());
    DoClose();
    return;
  } else {
    if (!ktls_logged.exchange(true)) {
      NFS3D_LOG_WARNING("tcp: kTLS unavailable: %s; TLS records are encrypted in user space",
                        kernel.message());
    }
    // The relay takes the TCP socket; the connection goes on with the plain
    // end of its pair (the peer address in info_ stays the client's).
    error_code ec;
    const int tcp_fd = socket_.release(ec);
    absl::StatusOr<int> plain =
        ec ? absl::UnavailableError(ec.message())
           : tls::TlsRelay::Start(socket_.get_executor(), std::move(tls_session_), tcp_fd);
    if (!plain.ok()) {
      NFS3D_LOG_WARNING("tcp: TLS relay: %s", plain.status().message());
      DoClose();
      return;
    }
    socket_.assign(asio::ip::tcp::v6(), *plain, ec);
    if (ec) {
      close(*plain);
      NFS3D_LOG_WARNING("tcp: TLS relay: %s", ec.message());
      DoClose();
      return;
    }
    socket_.native_non_blocking(true, ec);
    NFS3D_LOG_DEBUG("tcp: TLS (%s), records in user space", described);
  }
  tls_security_.kernel_records = kernel_tls_;
  context_->SetSecurity(this, tls_security_);
  ReadMore();
}

void TcpConnection::NoteTlsControlRecord() {
  const std::string what = tls::DescribeControlRecord(socket_.native_handle());
  NFS3D_LOG_INFO("tcp: closing TLS connection: %s", what);
}

}  // namespace nfs3d::rpc
