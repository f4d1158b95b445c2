#include "rpc/rpc_message.h"

namespace nfs3d::rpc {
namespace {

// The credential's length is the header's eighth word (xid, type, rpcvers,
// prog, vers, proc, flavor, length).
constexpr size_t kCredLengthEnd = 8 * 4;

void EncodeReply(xdr::Encoder& out, const ReplyHeader& reply) { xdr::Encode(out, reply); }

}  // namespace

HeaderDisposition DecodeCallHeader(xdr::Decoder& in, CallHeader* header) {
  const size_t start = in.position();
  if (xdr::Decode(in, header)) {
    return header->rpcvers == kRpcVersion ? HeaderDisposition::kOk
                                          : HeaderDisposition::kRpcMismatch;
  }
  // An opaque_auth body over 400 bytes is answered, anything else dropped.
  // The decoder stops right after the length it refused.
  if (!in.over_limit()) return HeaderDisposition::kDrop;
  return in.position() - start == kCredLengthEnd ? HeaderDisposition::kBadCred
                                                 : HeaderDisposition::kBadVerf;
}

void EncodeAcceptedReply(xdr::Encoder& out, uint32_t xid, AcceptStat stat) {
  EncodeReply(out, {.xid = xid, .accept_stat = static_cast<uint32_t>(stat)});
}

void EncodeProgMismatchReply(xdr::Encoder& out, uint32_t xid, uint32_t low, uint32_t high) {
  EncodeReply(out, {.xid = xid,
                    .accept_stat = static_cast<uint32_t>(AcceptStat::kProgMismatch),
                    .mismatch_low = low,
                    .mismatch_high = high});
}

void EncodeRpcMismatchReply(xdr::Encoder& out, uint32_t xid) {
  EncodeReply(out, {.xid = xid,
                    .reply_stat = static_cast<uint32_t>(ReplyStat::kDenied),
                    .reject_stat = static_cast<uint32_t>(RejectStat::kRpcMismatch),
                    .mismatch_low = kRpcVersion,
                    .mismatch_high = kRpcVersion});
}

void EncodeAuthErrorReply(xdr::Encoder& out, uint32_t xid, AuthStat stat) {
  EncodeReply(out, {.xid = xid,
                    .reply_stat = static_cast<uint32_t>(ReplyStat::kDenied),
                    .reject_stat = static_cast<uint32_t>(RejectStat::kAuthError),
                    .auth_stat = static_cast<uint32_t>(stat)});
}

}  // namespace nfs3d::rpc
