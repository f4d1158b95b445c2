// RPC-with-TLS (RFC 9289) on a client's TCP socket, for nfs3bench and tests:
// the AUTH_TLS probe, a GnuTLS handshake (ALPN "sunrpc"), then a relay
// thread that copies between the session and one end of a socket pair, whose
// other end the client uses as its socket. Records are encrypted in user
// space (the client side of a benchmark, not the kernel's).
#ifndef NFS3D_CLIENT_TLS_TRANSPORT_H_
#define NFS3D_CLIENT_TLS_TRANSPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nfs3d::client {

struct TlsClientOptions {
  std::string ca;           // PEM: the CA the server's certificate must chain to
  std::string cert, key;    // PEM: the client's certificate (mtls); "" = none
  std::string server_name;  // checked against the certificate; "" = not checked
  absl::Duration timeout = absl::Seconds(10);
};

// Takes the connected TCP socket `fd`: probes, handshakes and starts the
// relay. Returns the descriptor to use instead (blocking mode as `fd` was);
// `fd` is the relay's, closed when either side ends.
absl::StatusOr<int> StartTls(int fd, const TlsClientOptions& options);

}  // namespace nfs3d::client

#endif  // NFS3D_CLIENT_TLS_TRANSPORT_H_
