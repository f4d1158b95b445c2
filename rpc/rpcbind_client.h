// Registration with a system rpcbind through libtirpc, used when one runs;
// otherwise nfs3d serves the embedded portmapper (portmap_program.h) itself.
#ifndef NFS3D_RPC_RPCBIND_CLIENT_H_
#define NFS3D_RPC_RPCBIND_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace nfs3d::rpc {

// True when a portmapper answers a NULL call (program 100000 v2, UDP) at
// host:port within `timeout`. Never blocks longer than the timeout.
bool RpcbindAvailable(const std::string& host = "127.0.0.1", uint16_t port = 111,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(500));

// Registers (prog, vers) on netid "udp", "tcp", "udp6" or "tcp6" at `port`
// of the wildcard address, replacing any stale entry for that netid.
absl::Status RegisterWithRpcbind(uint32_t prog, uint32_t vers, const std::string& netid,
                                 uint16_t port);

// Removes every (prog, vers) registered through RegisterWithRpcbind.
absl::Status UnregisterAll();

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_RPCBIND_CLIENT_H_
