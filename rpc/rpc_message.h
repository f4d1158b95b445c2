// ONC RPC v2 (RFC 5531) message headers, described once: the server decodes
// calls and encodes replies, the clients (client/rpc_wire.h) encode calls and
// decode replies. Knows nothing about programs.
#ifndef NFS3D_RPC_RPC_MESSAGE_H_
#define NFS3D_RPC_RPC_MESSAGE_H_

#include <cstdint>

#include "absl/types/span.h"

#include "xdr/describe.h"

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

// opaque_auth; the body borrows from the message.
struct OpaqueAuth {
  uint32_t flavor = 0;
  absl::Span<const uint8_t> body;
};
NFS3D_XDR(OpaqueAuth) { v(x.flavor, xdr::Bounded(x.body, kMaxAuthBytes)); }

// rpc_msg carrying a call_body (§9). Past rpcvers only version 2 is
// described: a later version may lay out the rest differently.
struct CallHeader {
  uint32_t xid = 0;
  MsgType type = MsgType::kCall;
  uint32_t rpcvers = kRpcVersion;
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  OpaqueAuth cred;
  OpaqueAuth verf;
};
NFS3D_XDR(CallHeader) {
  v(x.xid, x.type);
  v.Check(x.type == MsgType::kCall);
  v(x.rpcvers);
  if (x.rpcvers == kRpcVersion) v(x.prog, x.vers, x.proc, x.cred, x.verf);
}

// rpc_msg carrying a reply_body (§9). The statuses stay numbers, as on the
// wire, so a client can report values it does not know.
struct ReplyHeader {
  uint32_t xid = 0;
  MsgType type = MsgType::kReply;
  uint32_t reply_stat = 0;                       // ReplyStat
  OpaqueAuth verf;                               // accepted
  uint32_t accept_stat = 0;                      // accepted: AcceptStat
  uint32_t reject_stat = 0;                      // denied: RejectStat
  uint32_t auth_stat = 0;                        // AUTH_ERROR: AuthStat
  uint32_t mismatch_low = 0, mismatch_high = 0;  // PROG_MISMATCH, RPC_MISMATCH
};
NFS3D_XDR(ReplyHeader) {
  v(x.xid, x.type, x.reply_stat);
  v.Check(x.type == MsgType::kReply && x.reply_stat <= 1);
  if (x.reply_stat == 0) {  // MSG_ACCEPTED
    v(x.verf, x.accept_stat);
    if (x.accept_stat == 2) v(x.mismatch_low, x.mismatch_high);  // PROG_MISMATCH
    return;
  }
  v(x.reject_stat);  // MSG_DENIED
  if (x.reject_stat == 0) {
    v(x.mismatch_low, x.mismatch_high);  // RPC_MISMATCH
  } else {
    v(x.auth_stat);  // AUTH_ERROR
  }
}

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
