#include "rpc/inline_calls.h"

#include "common/auth_flavor.h"
#include "rpc/rpc_message.h"
#include "xdr/decoder.h"
#include "xdr/nfs3_codec.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::rpc {
namespace {

// Word `index` of the call; the caller checks that it is inside `b`.
uint32_t WordAt(absl::Span<const uint8_t> b, size_t index) {
  const uint8_t* p = b.data() + 4 * index;
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// These calls are small; anything bigger is not worth guessing about.
constexpr size_t kMaxInlineCall = 1024;

}  // namespace

bool RunsInline(absl::Span<const uint8_t> call) {
  if (call.size() < 24 || call.size() > kMaxInlineCall) return false;
  if (WordAt(call, 1) != 0 || WordAt(call, 2) != 2) return false;  // CALL, RPC v2
  const uint32_t prog = WordAt(call, 3);
  const uint32_t vers = WordAt(call, 4);
  const uint32_t proc = WordAt(call, 5);
  if (proc == 0) return true;
  return prog == nfs3::kProgram && vers == 3 &&
         (proc == nfs3::kGetattr || proc == nfs3::kLookup || proc == nfs3::kAccess);
}

bool IsNullCall(absl::Span<const uint8_t> call) {
  return call.size() >= 24 && WordAt(call, 1) == 0 && WordAt(call, 5) == 0;
}

bool WaitsForSync(absl::Span<const uint8_t> call) {
  if (call.size() < 24 || WordAt(call, 1) != 0) return false;
  return WordAt(call, 3) == nfs3::kProgram && WordAt(call, 4) == 3 &&
         WordAt(call, 5) == nfs3::kCommit;
}

bool IsPageCacheCall(absl::Span<const uint8_t> call) {
  // Most calls are told apart by their procedure word, without a decode.
  if (call.size() < 24 || (WordAt(call, 5) != nfs3::kRead && WordAt(call, 5) != nfs3::kWrite)) {
    return false;
  }
  // The full header decoder: its credential and verifier are spans, not copies.
  xdr::Decoder in(call);
  CallHeader header;
  if (DecodeCallHeader(in, &header) != HeaderDisposition::kOk) return false;
  const bool none_or_sys = header.cred.flavor == kAuthNone || header.cred.flavor == kAuthSys;
  if (header.prog != nfs3::kProgram || header.vers != 3 || !none_or_sys) return false;
  if (header.proc == nfs3::kRead) return true;
  if (header.proc != nfs3::kWrite) return false;
  nfs3::WRITE3args args;
  return nfs3::DecodeWriteHead(in, &args) && args.stable == nfs3::UNSTABLE;
}

bool IsNfsMetadataCall(absl::Span<const uint8_t> call) {
  if (call.size() < 24 || WordAt(call, 1) != 0) return false;
  if (WordAt(call, 3) != nfs3::kProgram || WordAt(call, 4) != 3) return false;
  const uint32_t proc = WordAt(call, 5);
  return proc != nfs3::kRead && proc != nfs3::kWrite && proc != nfs3::kCommit;
}

}  // namespace nfs3d::rpc
