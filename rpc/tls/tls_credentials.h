// The server's side of RPC-with-TLS (RFC 9289): its certificate and key, the
// CA that client certificates must chain to (mutual TLS), and the TLS
// parameters every session uses.
//
// GnuTLS, not OpenSSL: it is what Debian's tlshd (ktls-utils, the Linux
// client's and knfsd's handshake agent) is built on, so nfs3d negotiates
// what the kernel's peers negotiate; and it exports a session's record keys
// and sequence numbers (gnutls_record_get_state), which the kernel's TLS
// (kTLS) needs to take the records over after the handshake.
#ifndef NFS3D_RPC_TLS_TLS_CREDENTIALS_H_
#define NFS3D_RPC_TLS_TLS_CREDENTIALS_H_

#include <gnutls/gnutls.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "rpc/tls/certificate_dates.h"

namespace nfs3d::rpc::tls {

struct TlsFiles {
  std::string certificate;  // PEM: the server's certificate (chain)
  std::string key;          // PEM: its private key
  std::string ca;           // PEM: CAs for client certificates; "" = no mutual TLS
};

class TlsCredentials {
 public:
  // Loads the files; an error names the file and GnuTLS's reason.
  static absl::StatusOr<std::shared_ptr<const TlsCredentials>> Load(const TlsFiles& files);
  ~TlsCredentials();
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  gnutls_certificate_credentials_t certificates() const { return certificates_; }
  // TLS 1.3 only (RFC 9289 §5.1.1 asks for 1.3 or later), with the AEAD
  // ciphers the kernel's TLS can take over (AES-GCM, ChaCha20-Poly1305).
  gnutls_priority_t priorities() const { return priorities_; }
  // A CA was given: clients are asked for a certificate, which must verify.
  bool verifies_clients() const { return verifies_clients_; }
  // The dates of what was loaded: the certificate file ("server") and, with
  // a CA, the CA file ("ca").
  const std::vector<CertificateFile>& files() const { return files_; }

 private:
  TlsCredentials() = default;
  gnutls_certificate_credentials_t certificates_ = nullptr;
  gnutls_priority_t priorities_ = nullptr;
  bool verifies_clients_ = false;
  std::vector<CertificateFile> files_;
};

}  // namespace nfs3d::rpc::tls

#endif  // NFS3D_RPC_TLS_TLS_CREDENTIALS_H_
