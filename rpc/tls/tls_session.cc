#include "rpc/tls/tls_session.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include <gnutls/x509.h>

#include "rpc/tls/certificate_dates.h"

namespace nfs3d::rpc::tls {

namespace {
// RFC 9289 §5.2: the ALPN protocol id of RPC-with-TLS.
constexpr char kAlpn[] = "sunrpc";
}  // namespace

TlsSession::TlsSession(std::shared_ptr<const TlsCredentials> credentials, int fd,
                       std::string_view early)
    : credentials_(std::move(credentials)), fd_(fd), early_(early) {}

absl::StatusOr<std::unique_ptr<TlsSession>> TlsSession::Server(
    std::shared_ptr<const TlsCredentials> credentials, int fd, std::string_view early) {
  std::unique_ptr<TlsSession> s(new TlsSession(std::move(credentials), fd, early));
  // No session tickets: a ticket sent after the handshake would sit in
  // front of the records the kernel is to take over, and RPC-with-TLS
  // clients (tlshd) do not resume.
  int rc = gnutls_init(&s->session_, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_TICKETS);
  if (rc < 0) return absl::InternalError(absl::StrCat("tls: ", gnutls_strerror(rc)));
  const TlsCredentials& c = *s->credentials_;
  if ((rc = gnutls_priority_set(s->session_, c.priorities())) < 0 ||
      (rc = gnutls_credentials_set(s->session_, GNUTLS_CRD_CERTIFICATE, c.certificates())) < 0) {
    return absl::InternalError(absl::StrCat("tls: ", gnutls_strerror(rc)));
  }
  // A client that offers other protocols and not "sunrpc" is refused; one
  // that offers none is served (RFC 9289 §5.2 asks clients to offer it).
  const gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>(kAlpn)),
                            sizeof(kAlpn) - 1};
  if ((rc = gnutls_alpn_set_protocols(s->session_, &alpn, 1, GNUTLS_ALPN_MANDATORY)) < 0) {
    return absl::InternalError(absl::StrCat("tls: alpn: ", gnutls_strerror(rc)));
  }
  if (c.verifies_clients()) {
    // Asked, not required: a client without a certificate gets a session
    // without peer authentication, and exports decide (xprtsec=tls / mtls).
    gnutls_certificate_server_set_request(s->session_, GNUTLS_CERT_REQUEST);
  }
  gnutls_transport_set_ptr(s->session_, s.get());
  gnutls_transport_set_pull_function(s->session_, &TlsSession::Pull);
  gnutls_transport_set_push_function(s->session_, &TlsSession::Push);
  gnutls_transport_set_pull_timeout_function(s->session_, &TlsSession::PullTimeout);
  return s;
}

TlsSession::~TlsSession() {
  if (session_ != nullptr) gnutls_deinit(session_);
}

ssize_t TlsSession::Pull(gnutls_transport_ptr_t ptr, void* data, size_t size) {
  auto* self = static_cast<TlsSession*>(ptr);
  if (self->early_used_ < self->early_.size()) {
    const size_t n = std::min(size, self->early_.size() - self->early_used_);
    std::memcpy(data, self->early_.data() + self->early_used_, n);
    self->early_used_ += n;
    if (self->early_used_ == self->early_.size()) std::string().swap(self->early_);
    return static_cast<ssize_t>(n);
  }
  const ssize_t n = recv(self->fd_, data, size, MSG_DONTWAIT);
  if (n < 0) gnutls_transport_set_errno(self->session_, errno);
  return n;
}

ssize_t TlsSession::Push(gnutls_transport_ptr_t ptr, const void* data, size_t size) {
  auto* self = static_cast<TlsSession*>(ptr);
  const ssize_t n = send(self->fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0) gnutls_transport_set_errno(self->session_, errno);
  return n;
}

int TlsSession::PullTimeout(gnutls_transport_ptr_t ptr, unsigned int ms) {
  // Only asked with GNUTLS_NONBLOCK for "is there data": the caller waits.
  auto* self = static_cast<TlsSession*>(ptr);
  return self->early_used_ < self->early_.size() ? 1 : 0;
}

TlsSession::Step TlsSession::Handshake(std::string* error) {
  const int rc = gnutls_handshake(session_);
  if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
    return gnutls_record_get_direction(session_) == 1 ? Step::kWantWrite : Step::kWantRead;
  }
  if (rc < 0) {
    *error = gnutls_strerror(rc);
    if (rc == GNUTLS_E_WARNING_ALERT_RECEIVED || rc == GNUTLS_E_FATAL_ALERT_RECEIVED) {
      *error += absl::StrCat(" (", gnutls_alert_get_name(gnutls_alert_get(session_)), ")");
    }
    gnutls_alert_send_appropriate(session_, rc);
    return Step::kFailed;
  }
  if (!VerifyClient(error)) {
    gnutls_alert_send(session_, GNUTLS_AL_FATAL, GNUTLS_A_BAD_CERTIFICATE);
    return Step::kFailed;
  }
  return Step::kDone;
}

bool TlsSession::VerifyClient(std::string* error) {
  security_ = TransportSecurity::kTls;
  unsigned int count = 0;
  const gnutls_datum_t* chain = gnutls_certificate_get_peers(session_, &count);
  if (!credentials_->verifies_clients() || chain == nullptr || count == 0) return true;
  unsigned int status = 0;
  const int rc = gnutls_certificate_verify_peers2(session_, &status);
  if (rc < 0 || status != 0) {
    gnutls_datum_t why{};
    if (rc >= 0 &&
        gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &why, 0) >= 0) {
      *error = absl::StrCat("client certificate refused: ",
                            std::string(reinterpret_cast<char*>(why.data), why.size));
      gnutls_free(why.data);
    } else {
      *error = absl::StrCat("client certificate refused: ",
                            rc < 0 ? gnutls_strerror(rc) : "does not verify");
    }
    return false;
  }
  gnutls_x509_crt_t crt = nullptr;
  if (gnutls_x509_crt_init(&crt) >= 0) {
    gnutls_datum_t dn{};
    if (gnutls_x509_crt_import(crt, &chain[0], GNUTLS_X509_FMT_DER) >= 0 &&
        gnutls_x509_crt_get_dn3(crt, &dn, 0) >= 0) {
      peer_subject_ = PrintableSubject(std::string_view(reinterpret_cast<char*>(dn.data), dn.size));
      gnutls_free(dn.data);
    }
    gnutls_x509_crt_deinit(crt);
  }
  security_ = TransportSecurity::kMtls;
  return true;
}

std::string TlsSession::Describe() const { return DescribeSecurity(Security()); }

ConnectionSecurity TlsSession::Security() const {
  ConnectionSecurity s;
  s.mode = security_;
  const char* version = gnutls_protocol_get_name(gnutls_protocol_get_version(session_));
  const char* cipher = gnutls_cipher_get_name(gnutls_cipher_get(session_));
  s.version = version != nullptr ? version : "?";
  s.cipher = cipher != nullptr ? cipher : "?";
  if (security_ == TransportSecurity::kMtls) s.subject = peer_subject_;
  return s;
}

}  // namespace nfs3d::rpc::tls
