// Calls from nfs3d to a client's own RPC services: GRANTED callbacks and
// *_RES replies to its lock manager, SM_NOTIFY to its status monitor. The
// port is looked up with the client's portmapper (program 100000 v2 GETPORT),
// as knfsd's lockd does. An interface so tests can stand in for clients.
#ifndef NFS3D_NLM_PEER_CALLER_H_
#define NFS3D_NLM_PEER_CALLER_H_

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "rpc/call_context.h"

namespace nfs3d::nlm {

struct PeerCall {
  sockaddr_storage peer{};  // the client (its port is ignored)
  rpc::Transport transport = rpc::Transport::kUdp;
  uint32_t prog = 0, vers = 0, proc = 0;
  std::string args;  // encoded arguments
};

class PeerCaller {
 public:
  virtual ~PeerCaller() = default;
  // Blocking (bounded by the implementation's timeout). Returns the encoded
  // results of an accepted, successful call.
  virtual absl::StatusOr<std::string> Call(const PeerCall& call) = 0;
};

// The real thing: GETPORT at the peer's port 111, then the call, each bounded
// by `timeout`, from a reserved port when running as root, AUTH_SYS uid 0.
class RpcPeerCaller : public PeerCaller {
 public:
  explicit RpcPeerCaller(absl::Duration timeout = absl::Seconds(5), uint16_t portmap_port = 111)
      : timeout_(timeout), portmap_port_(portmap_port) {}
  absl::StatusOr<std::string> Call(const PeerCall& call) override;

 private:
  absl::Duration timeout_;
  uint16_t portmap_port_;
};

// Numeric address of a sockaddr ("" if not IPv4/IPv6). IPv4-mapped IPv6
// addresses come out as plain IPv4.
std::string AddressString(const sockaddr_storage& addr);
// The reverse, port 0; false when `text` is not a numeric IPv4/IPv6 address.
bool ParseAddress(const std::string& text, sockaddr_storage* out);

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_PEER_CALLER_H_
