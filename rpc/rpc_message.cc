#include "rpc/rpc_message.h"

namespace nfs3d::rpc {
namespace {

// Reads flavor + length + body, checking the 400-byte limit before touching
// the body so a hostile length never reaches the decoder as a huge read.
// Returns false only for an over-long body; truncation shows in in.ok().
bool DecodeOpaqueAuth(xdr::Decoder& in, OpaqueAuth* auth) {
  auth->flavor = in.U32();
  uint32_t len = in.U32();
  if (!in.ok()) return true;
  if (len > kMaxAuthBytes) return false;
  auth->body = in.FixedOpaque(len);
  return true;
}

void EncodeReplyStart(xdr::Encoder& out, uint32_t xid, ReplyStat stat) {
  out.U32(xid);
  out.U32(static_cast<uint32_t>(MsgType::kReply));
  out.U32(static_cast<uint32_t>(stat));
}

}  // namespace

HeaderDisposition DecodeCallHeader(xdr::Decoder& in, CallHeader* header) {
  header->xid = in.U32();
  uint32_t msg_type = in.U32();
  if (!in.ok() || msg_type != static_cast<uint32_t>(MsgType::kCall)) {
    return HeaderDisposition::kDrop;
  }
  header->rpcvers = in.U32();
  if (!in.ok()) return HeaderDisposition::kDrop;
  // Answer a version mismatch before trusting anything else in the message:
  // a future RPC version may lay out the rest differently.
  if (header->rpcvers != kRpcVersion) return HeaderDisposition::kRpcMismatch;
  header->prog = in.U32();
  header->vers = in.U32();
  header->proc = in.U32();
  if (!DecodeOpaqueAuth(in, &header->cred)) return HeaderDisposition::kBadCred;
  if (!DecodeOpaqueAuth(in, &header->verf)) return HeaderDisposition::kBadVerf;
  return in.ok() ? HeaderDisposition::kOk : HeaderDisposition::kDrop;
}

void EncodeAcceptedReply(xdr::Encoder& out, uint32_t xid, AcceptStat stat) {
  EncodeReplyStart(out, xid, ReplyStat::kAccepted);
  out.U32(0);  // verifier flavor AUTH_NONE
  out.U32(0);  // verifier body length
  out.U32(static_cast<uint32_t>(stat));
}

void EncodeProgMismatchReply(xdr::Encoder& out, uint32_t xid, uint32_t low, uint32_t high) {
  EncodeAcceptedReply(out, xid, AcceptStat::kProgMismatch);
  out.U32(low);
  out.U32(high);
}

void EncodeRpcMismatchReply(xdr::Encoder& out, uint32_t xid) {
  EncodeReplyStart(out, xid, ReplyStat::kDenied);
  out.U32(static_cast<uint32_t>(RejectStat::kRpcMismatch));
  out.U32(kRpcVersion);
  out.U32(kRpcVersion);
}

void EncodeAuthErrorReply(xdr::Encoder& out, uint32_t xid, AuthStat stat) {
  EncodeReplyStart(out, xid, ReplyStat::kDenied);
  out.U32(static_cast<uint32_t>(RejectStat::kAuthError));
  out.U32(static_cast<uint32_t>(stat));
}

}  // namespace nfs3d::rpc
