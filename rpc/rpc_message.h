// ONC RPC v2 (RFC 5531) message framing: decoding the call header and
// encoding every reply header nfs3d sends. Knows nothing about programs.
#ifndef NFS3D_RPC_RPC_MESSAGE_H_
#define NFS3D_RPC_RPC_MESSAGE_H_

#include <cstdint>

#include "absl/types/span.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc {

inline constexpr uint32_t kRpcVersion = 2;
// RFC 5531 §8.2: opaque_auth bodies are at most 400 bytes.
inline constexpr uint32_t kMaxAuthBytes = 400;

enum class MsgType : uint32_t { kCall = 0, kReply = 1 };
enum class ReplyStat : uint32_t { kAccepted = 0, kDenied = 1 };
enum class AcceptStat : uint32_t {
  kSuccess = 0,
  kProgUnavail = 1,
  kProgMismatch = 2,
  kProcUnavail = 3,
  kGarbageArgs = 4,
  kSystemErr = 5,
};
enum class RejectStat : uint32_t { kRpcMismatch = 0, kAuthError = 1 };
enum class AuthStat : uint32_t {
  kOk = 0,
  kBadCred = 1,
  kRejectedCred = 2,
  kBadVerf = 3,
  kRejectedVerf = 4,
  kTooWeak = 5,
  kInvalidResp = 6,
  kFailed = 7,
};

// An opaque_auth as it appeared on the wire; body points into the message.
struct OpaqueAuth {
  uint32_t flavor = 0;
  absl::Span<const uint8_t> body;
};

struct CallHeader {
  uint32_t xid = 0;
  uint32_t rpcvers = 0;
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  OpaqueAuth cred;
  OpaqueAuth verf;
};

// What the server should do with a call after reading its header.
enum class HeaderDisposition : uint8_t {
  kOk,           // header complete; the decoder is at the procedure arguments
  kDrop,         // unreadable xid, not a CALL, or truncated: send nothing
  kRpcMismatch,  // rpcvers != 2: reply MSG_DENIED/RPC_MISMATCH (xid is valid)
  kBadCred,      // credential longer than 400 bytes: AUTH_ERROR/AUTH_BADCRED
  kBadVerf,      // verifier longer than 400 bytes: AUTH_ERROR/AUTH_BADVERF
};

// Reads a call header from `in`. On kOk the decoder is positioned at the
// first byte of the procedure arguments; header->xid is valid for every
// disposition except kDrop.
HeaderDisposition DecodeCallHeader(xdr::Decoder& in, CallHeader* header);

// Reply headers. All accepted replies carry an AUTH_NONE verifier. For
// kSuccess the procedure results follow; the caller encodes them.
void EncodeAcceptedReply(xdr::Encoder& out, uint32_t xid, AcceptStat stat);
void EncodeProgMismatchReply(xdr::Encoder& out, uint32_t xid, uint32_t low, uint32_t high);
// MSG_DENIED / RPC_MISMATCH with low = high = 2.
void EncodeRpcMismatchReply(xdr::Encoder& out, uint32_t xid);
void EncodeAuthErrorReply(xdr::Encoder& out, uint32_t xid, AuthStat stat);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_RPC_MESSAGE_H_
