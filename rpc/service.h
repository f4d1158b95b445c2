// The seam between transports and RPC processing. Transports deliver whole
// call messages and send back whatever reply they are given; they know nothing
// about programs, credentials or caching.
#ifndef NFS3D_RPC_SERVICE_H_
#define NFS3D_RPC_SERVICE_H_

#include <cstdint>

#include "absl/types/span.h"

#include "rpc/call_context.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {

class RpcService {
 public:
  virtual ~RpcService() = default;

  // Handles one call message: a UDP datagram or a reassembled TCP record
  // (without record marks). Runs on a worker thread and may block on file
  // system calls. Returns true with *reply filled (no record mark) when a
  // reply must be sent, false when the call is dropped silently.
  virtual bool HandleCall(absl::Span<const uint8_t> message, const TransportInfo& transport,
                          xdr::BufferChain* reply) = 0;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_SERVICE_H_
