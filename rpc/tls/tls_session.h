// One server-side TLS session on a connected, non-blocking TCP socket, after
// the AUTH_TLS probe (rpc/tls/tls_probe.h): the handshake, stepped by the
// caller as the socket becomes ready, and then records in user space for a
// connection the kernel's TLS cannot take (rpc/tls/tls_relay.h).
#ifndef NFS3D_RPC_TLS_TLS_SESSION_H_
#define NFS3D_RPC_TLS_TLS_SESSION_H_

#include <gnutls/gnutls.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "rpc/call_context.h"
#include "rpc/connection_security.h"
#include "rpc/tls/tls_credentials.h"

namespace nfs3d::rpc::tls {

class TlsSession {
 public:
  // `early`: bytes of the TLS stream already read from the socket (what
  // followed the probe in the same read); they are read first.
  static absl::StatusOr<std::unique_ptr<TlsSession>> Server(
      std::shared_ptr<const TlsCredentials> credentials, int fd, std::string_view early);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  enum class Step : uint8_t { kDone, kWantRead, kWantWrite, kFailed };
  // Advances the handshake as far as the socket allows. kDone once it is
  // complete and a client certificate, if one was sent, verified against the
  // CA; kFailed with *error set otherwise (an alert has been sent).
  Step Handshake(std::string* error);

  // After kDone: kMtls when the client's certificate verified, else kTls.
  TransportSecurity security() const { return security_; }
  // "TLS1.3 AES-256-GCM", and the client certificate's subject for mTLS.
  std::string Describe() const;
  // After kDone: the mode, version, cipher and (mTLS) subject; the caller
  // says where the records go.
  ConnectionSecurity Security() const;

  gnutls_session_t get() const { return session_; }
  int fd() const { return fd_; }
  // Points the session at another descriptor (the same socket, moved).
  void set_fd(int fd) { fd_ = fd; }

 private:
  TlsSession(std::shared_ptr<const TlsCredentials> credentials, int fd, std::string_view early);
  static ssize_t Pull(gnutls_transport_ptr_t self, void* data, size_t size);
  static ssize_t Push(gnutls_transport_ptr_t self, const void* data, size_t size);
  static int PullTimeout(gnutls_transport_ptr_t self, unsigned int ms);
  // The client's certificate, if sent: verified, and the session is kMtls.
  bool VerifyClient(std::string* error);

  std::shared_ptr<const TlsCredentials> credentials_;  // outlives the session
  gnutls_session_t session_ = nullptr;
  int fd_;
  std::string early_;
  size_t early_used_ = 0;
  TransportSecurity security_ = TransportSecurity::kTls;
  std::string peer_subject_;  // escaped and bounded: it is the client's text
};

}  // namespace nfs3d::rpc::tls

#endif  // NFS3D_RPC_TLS_TLS_SESSION_H_
