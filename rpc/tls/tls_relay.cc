#include "rpc/tls/tls_relay.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "common/log.h"

namespace nfs3d::rpc::tls {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// A TLS record holds at most 16 KiB; moving several at once saves calls.
// 128 KiB per user-space TLS connection in all (thousands of mounts).
constexpr size_t kInBuffer = 64 << 10;
constexpr size_t kOutBuffer = 64 << 10;
// Each end of the pair holds a whole 1 MiB READ reply in flight, as the TCP
// socket's send buffer does for plain connections.
constexpr int kPairBuffer = 4 << 20;
}  // namespace

TlsRelay::TlsRelay(const asio::any_io_executor& executor, std::unique_ptr<TlsSession> session)
    : session_(std::move(session)),
      tcp_(executor),
      plain_(executor),
      in_(kInBuffer),
      out_(kOutBuffer) {}

absl::StatusOr<int> TlsRelay::Start(const asio::any_io_executor& executor,
                                    std::unique_ptr<TlsSession> session, int tcp_fd) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
    close(tcp_fd);
    return absl::UnavailableError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  for (int fd : pair) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kPairBuffer, sizeof(kPairBuffer));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kPairBuffer, sizeof(kPairBuffer));
  }
  std::shared_ptr<TlsRelay> relay(new TlsRelay(executor, std::move(session)));
  error_code ec;
  relay->plain_.assign(asio::local::stream_protocol(), pair[0], ec);
  if (!ec) relay->tcp_.assign(asio::ip::tcp::v6(), tcp_fd, ec);  // the family is not used
  if (ec) {
    close(pair[1]);  // pair[0] and tcp_fd went with the relay's sockets, or:
    if (!relay->plain_.is_open()) close(pair[0]);
    if (!relay->tcp_.is_open()) close(tcp_fd);
    return absl::UnavailableError(absl::StrCat("tls relay: ", ec.message()));
  }
  relay->session_->set_fd(tcp_fd);
  asio::post(executor, [relay] {
    relay->Inbound();
    relay->Outbound();
  });
  return pair[1];
}

void TlsRelay::Inbound() {
  while (!closed_) {
    if (in_begin_ < in_end_ && !FlushInbound()) return;  // resumes when plain_ drains
    const ssize_t n = gnutls_record_recv(session_->get(), in_.data(), in_.size());
    if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
      tcp_.async_wait(asio::socket_base::wait_read,
                      [self = shared_from_this()](const error_code& ec) {
                        if (ec) return self->Close("tcp wait");
                        self->Inbound();
                      });
      return;
    }
    if (n == 0) {
      // close_notify: the client sends nothing more; the connection
      // answers what it read, then closes its end.
      error_code ec;
      plain_.shutdown(asio::socket_base::shutdown_send, ec);
      return;
    }
    if (n < 0) {
      NFS3D_LOG_DEBUG("tls: closing connection: %s", gnutls_strerror(static_cast<int>(n)));
      return Close(nullptr);
    }
    in_begin_ = 0;
    in_end_ = static_cast<size_t>(n);
  }
}

bool TlsRelay::FlushInbound() {
  while (in_begin_ < in_end_) {
    const ssize_t n = send(plain_.native_handle(), in_.data() + in_begin_, in_end_ - in_begin_,
                           MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      plain_.async_wait(asio::socket_base::wait_write,
                        [self = shared_from_this()](const error_code& ec) {
                          if (ec) return self->Close("plain wait");
                          self->Inbound();
                        });
      return false;
    }
    if (n < 0) {
      Close(nullptr);  // the connection closed its end
      return false;
    }
    in_begin_ += static_cast<size_t>(n);
  }
  return true;
}

void TlsRelay::Outbound() {
  while (!closed_) {
    if (out_begin_ == out_end_) {
      const ssize_t n = recv(plain_.native_handle(), out_.data(), out_.size(), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        plain_.async_wait(asio::socket_base::wait_read,
                          [self = shared_from_this()](const error_code& ec) {
                            if (ec) return self->Close("plain wait");
                            self->Outbound();
                          });
        return;
      }
      if (n <= 0) {
        // The connection closed: end the session properly, then the socket.
        gnutls_bye(session_->get(), GNUTLS_SHUT_WR);
        return Close(nullptr);
      }
      out_begin_ = 0;
      out_end_ = static_cast<size_t>(n);
    }
    const ssize_t n =
        gnutls_record_send(session_->get(), out_.data() + out_begin_, out_end_ - out_begin_);
    if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
      // Called again with the same bytes once the socket takes more.
      tcp_.async_wait(asio::socket_base::wait_write,
                      [self = shared_from_this()](const error_code& ec) {
                        if (ec) return self->Close("tcp wait");
                        self->Outbound();
                      });
      return;
    }
    if (n < 0) {
      NFS3D_LOG_DEBUG("tls: closing connection: %s", gnutls_strerror(static_cast<int>(n)));
      return Close(nullptr);
    }
    out_begin_ += static_cast<size_t>(n);
  }
}

void TlsRelay::Close(const char* why) {
  if (closed_) return;
  closed_ = true;
  if (why != nullptr) NFS3D_LOG_DEBUG("tls: relay ends (%s)", why);
  error_code ec;
  tcp_.shutdown(asio::socket_base::shutdown_both, ec);
  tcp_.close(ec);
  plain_.close(ec);  // the connection sees EOF
}

}  // namespace nfs3d::rpc::tls
