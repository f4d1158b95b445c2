#ifndef NFS3D_CLIENT_RPC_WIRE_H_
#define NFS3D_CLIENT_RPC_WIRE_H_

// Wire pieces shared by the blocking RpcClient and the pipelining
// AsyncRpcClient: address parsing, reserved-port binding, the RPC call
// header and the reply header, so both clients put the same bytes on the
// wire and read replies the same way.

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"

#include "rpc/call_context.h"
#include "rpc/rpc_message.h"
#include "xdr/encoder.h"

namespace nfs3d::client {

// Fills addr/len from a numeric IPv4 or IPv6 address and a port;
// InvalidArgument if host is not numeric.
absl::Status ParseNumericAddress(const std::string& host, uint16_t port, sockaddr_storage* addr,
                                 socklen_t* len);

// Binds fd to a free port below 1024, like bindresvport(3); errno is set on
// failure.
bool BindReservedPort(int fd, int family);

// Encodes the RFC 5531 call header (xid .. verifier) with cred as the
// credential (AUTH_SYS, else AUTH_NONE) and an AUTH_NONE verifier.
void EncodeCallHeader(xdr::Encoder& e, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                      const rpc::Credential& cred);

using rpc::ReplyHeader;

// Decodes the reply header of message into *header and points *results at
// the bytes after it (SUCCESS only; empty otherwise). False when message is
// not a complete reply header; header->xid is set whenever message has one.
bool DecodeReplyHeader(absl::Span<const uint8_t> message, ReplyHeader* header,
                       absl::Span<const uint8_t>* results);

}  // namespace nfs3d::client

#endif  // NFS3D_CLIENT_RPC_WIRE_H_
