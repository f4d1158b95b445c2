// Whether READ replies over TCP carry file segments, spliced from the page
// cache with sendfile ([tcp] sendfile in nfs3d.conf, which has the figures).
#ifndef NFS3D_RPC_TCP_SENDFILE_H_
#define NFS3D_RPC_TCP_SENDFILE_H_

#include <cstdint>

namespace nfs3d::rpc {

enum class TcpSendfile : uint8_t {
  kOff,  // pread + sendmsg
  kOn,   // spliced for every client
  // Spliced except to a client on this machine's loopback ("auto"), whose own
  // copy out of spliced page-cache pages is cold: faster on one machine,
  // slower on another.
  kExceptLoopback,
};

// True if replies to a client (`loopback`: on this machine's loopback) are
// spliced.
inline bool SplicesTo(TcpSendfile mode, bool loopback) {
  return mode == TcpSendfile::kOn || (mode == TcpSendfile::kExceptLoopback && !loopback);
}

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_TCP_SENDFILE_H_
