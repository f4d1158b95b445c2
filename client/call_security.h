// A security flavor that rewrites each call and reply (RPCSEC_GSS), for the
// pipelining client: it builds the whole call message from plain arguments,
// and checks and opens the reply to that call.
#ifndef NFS3D_CLIENT_CALL_SECURITY_H_
#define NFS3D_CLIENT_CALL_SECURITY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "xdr/buffer_chain.h"

namespace nfs3d::client {

class CallSecurity {
 public:
  virtual ~CallSecurity() = default;
  // Appends the call message with the plain arguments `args` to *out (args'
  // bytes may move there by reference); *token identifies the call to Open
  // (a sequence number).
  virtual void Encode(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                      xdr::BufferChain args, xdr::BufferChain* out, uint32_t* token) = 0;
  // The plain results of a SUCCESS reply to the call `token` names, inside
  // `reply` (which may be decrypted in place); an error if the reply does
  // not check.
  virtual absl::StatusOr<absl::Span<const uint8_t>> Open(absl::Span<uint8_t> reply,
                                                         uint32_t token) = 0;
};

}  // namespace nfs3d::client

#endif  // NFS3D_CLIENT_CALL_SECURITY_H_
