// What a procedure knows about the call it serves: who sent it, over which
// transport, with which credential.
#ifndef NFS3D_RPC_CALL_CONTEXT_H_
#define NFS3D_RPC_CALL_CONTEXT_H_

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/auth_flavor.h"

namespace nfs3d::rpc {

enum class Transport : uint8_t { kUdp, kTcp };

// RPC-with-TLS (RFC 9289) on the connection a call came on: none, a TLS
// session, or one whose client presented a certificate that verified against
// the configured CA (knfsd's XPT_TLS_SESSION and XPT_PEER_AUTH).
enum class TransportSecurity : uint8_t { kNone, kTls, kMtls };

// WRITE data a TCP transport left in the kernel (TcpOptions::splice_writes):
// bytes [hole, hole + size) of the call message were spliced from the socket
// into a pipe, in order, and their memory holds nothing useful. Only a
// WRITE's data has a hole, and never its last 64 bytes nor the arguments'
// first 512, so the duplicate request cache checksums the same bytes as for
// a call read into memory (rpc/write_splice.h).
struct SplicedData {
  uint8_t* hole = nullptr;  // where the bytes belong, for a caller that wants them there
  size_t size = 0;
  int pipe_fd = -1;  // read end
};

// Filled in by the transport for every call it delivers.
struct TransportInfo {
  Transport transport = Transport::kTcp;
  sockaddr_storage peer{};  // client address and port
  socklen_t peer_len = 0;
  sockaddr_storage local{};  // address and port the call arrived on
  socklen_t local_len = 0;
  uint32_t mtu = 0;  // MTU of the receiving interface; 0 if unknown
  // The transport sends file segments of a reply chain (sendfile); without
  // this a procedure must put every byte of its reply in memory.
  bool file_segments = false;
  // Set for one call only (the transport passes a copy of its info).
  const SplicedData* spliced = nullptr;
  // The call is answered a second time, early, while its first run is stuck
  // below (rpc/running_call.h): it skips the duplicate request cache, where
  // the first run's entry is still in progress, and RPCSEC_GSS's replay
  // window, which has seen its sequence number.
  bool answered_early = false;
  TransportSecurity security = TransportSecurity::kNone;
};

// True for a peer on 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104: a process of
// this machine (the portmapper's and NSM's test for a local caller, and
// [tcp] sendfile = auto's for a client that gets READ data copied).
bool IsLoopbackPeer(const TransportInfo& transport);

// AUTH_SYS body (RFC 5531 appendix A), or empty for AUTH_NONE.
struct Credential {
  uint32_t flavor = kAuthNone;
  uint32_t stamp = 0;
  std::string machine;
  uint32_t uid = 65534;
  uint32_t gid = 65534;
  std::vector<uint32_t> gids;  // AUTH_SYS: at most 16
  // RPCSEC_GSS (flavor = the krb5 pseudo-flavor, machine = the principal):
  // the principal has no local user, so the call runs as the export's
  // anonymous ids.
  bool anonymous = false;
};

struct Procedure;

struct CallContext {
  uint32_t xid = 0;
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  Credential cred;
  const TransportInfo* transport = nullptr;
  const Procedure* procedure = nullptr;  // the table row being run
  // A procedure that must refuse the call at the RPC level sets this to an
  // RFC 5531 auth_stat (e.g. AUTH_TOOWEAK = 5 for a `secure` export reached
  // from an unprivileged port); the dispatcher then discards the results and
  // replies MSG_DENIED / AUTH_ERROR with it.
  mutable uint32_t reject_auth = 0;
  // The export of the call's file handle, once a procedure found it (for
  // per-export statistics).
  mutable uint32_t export_id = 0;
  mutable bool export_known = false;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_CALL_CONTEXT_H_
