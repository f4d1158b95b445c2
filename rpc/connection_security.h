// What operators see of one TCP connection's RPC-with-TLS state (nfs3stat
// --clients, nfs3top, /metrics): recorded when its handshake ends.
#ifndef NFS3D_RPC_CONNECTION_SECURITY_H_
#define NFS3D_RPC_CONNECTION_SECURITY_H_

#include <sys/socket.h>

#include <string>

#include "rpc/call_context.h"

namespace nfs3d::rpc {

struct ConnectionSecurity {
  TransportSecurity mode = TransportSecurity::kNone;
  std::string version;  // "TLS1.3"; empty when plain
  std::string cipher;   // "AES-256-GCM"; empty when plain
  // mTLS: the client certificate's subject DN, escaped (no control
  // characters) and at most 256 bytes of it (rpc/tls/certificate_dates.h).
  std::string subject;
  bool kernel_records = false;  // kTLS; else the user-space relay
};

// "TLS1.3 AES-256-GCM[, client <subject>]": a session as the log names it.
inline std::string DescribeSecurity(const ConnectionSecurity& s) {
  std::string out = s.version + " " + s.cipher;
  if (s.mode == TransportSecurity::kMtls) out += ", client " + s.subject;
  return out;
}

// "none", "tls", "mtls": the names of exports(5)'s xprtsec=.
inline const char* SecurityName(TransportSecurity s) {
  switch (s) {
    case TransportSecurity::kTls:
      return "tls";
    case TransportSecurity::kMtls:
      return "mtls";
    case TransportSecurity::kNone:
      break;
  }
  return "none";
}

// One open TCP connection.
struct TcpConnectionView {
  sockaddr_storage peer{};
  ConnectionSecurity security;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_CONNECTION_SECURITY_H_
