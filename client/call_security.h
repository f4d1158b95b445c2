// A security flavour that rewrites each call and reply (RPCSEC_GSS), for the
// pipelining client: it builds the whole call message from plain arguments,
// and checks and opens the reply to that call.
#ifndef NFS3D_CLIENT_CALL_SECURITY_H_
#define NFS3D_CLIENT_CALL_SECURITY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace nfs3d::client {

class CallSecurity {
 public:
  virtual ~CallSecurity() = default;
  // The call message; *token identifies the call to Open (a sequence number).
  virtual std::string Encode(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                             absl::Span<const uint8_t> args, uint32_t* token) = 0;
  // The plain results of a SUCCESS reply to the call `token` names; an error
  // if the reply does not check.
  virtual absl::StatusOr<std::string> Open(absl::Span<const uint8_t> reply, uint32_t token) = 0;
};

}  // namespace nfs3d::client

#endif  // NFS3D_CLIENT_CALL_SECURITY_H_
