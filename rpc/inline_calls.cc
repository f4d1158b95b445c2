#include "rpc/inline_calls.h"

#include "rpc/rpc_message.h"
#include "xdr/decoder.h"

namespace nfs3d::rpc {
namespace {

// Word `index` of the call; the caller checks that it is inside `b`.
uint32_t WordAt(absl::Span<const uint8_t> b, size_t index) {
  const uint8_t* p = b.data() + 4 * index;
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kNfsGetattr = 1;
constexpr uint32_t kNfsLookup = 3;
constexpr uint32_t kNfsAccess = 4;
constexpr uint32_t kNfsRead = 6;
constexpr uint32_t kNfsWrite = 7;
constexpr uint32_t kNfsCommit = 21;
constexpr uint32_t kAuthSys = 1;        // AUTH_NONE is 0
constexpr uint32_t kMaxNfsHandle = 64;  // RFC 1813 NFS3_FHSIZE
constexpr uint32_t kUnstable = 0;       // stable_how
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
  return prog == kNfsProgram && vers == 3 &&
         (proc == kNfsGetattr || proc == kNfsLookup || proc == kNfsAccess);
}

bool IsNullCall(absl::Span<const uint8_t> call) {
  return call.size() >= 24 && WordAt(call, 1) == 0 && WordAt(call, 5) == 0;
}

bool WaitsForSync(absl::Span<const uint8_t> call) {
  if (call.size() < 24 || WordAt(call, 1) != 0) return false;
  return WordAt(call, 3) == kNfsProgram && WordAt(call, 4) == 3 && WordAt(call, 5) == kNfsCommit;
}

bool IsPageCacheCall(absl::Span<const uint8_t> call) {
  // The full header decoder: its credential and verifier are spans, not copies.
  xdr::Decoder in(call);
  CallHeader header;
  if (DecodeCallHeader(in, &header) != HeaderDisposition::kOk) return false;
  if (header.prog != kNfsProgram || header.vers != 3 || header.cred.flavor > kAuthSys) return false;
  if (header.proc == kNfsRead) return true;
  if (header.proc != kNfsWrite) return false;
  // WRITE3args: file, offset, count, stable.
  in.Opaque(kMaxNfsHandle);
  in.U64();
  in.U32();
  const uint32_t stable = in.U32();
  return in.ok() && stable == kUnstable;
}

bool IsNfsMetadataCall(absl::Span<const uint8_t> call) {
  if (call.size() < 24 || WordAt(call, 1) != 0) return false;
  if (WordAt(call, 3) != kNfsProgram || WordAt(call, 4) != 3) return false;
  const uint32_t proc = WordAt(call, 5);
  return proc != kNfsRead && proc != kNfsWrite && proc != kNfsCommit;
}

}  // namespace nfs3d::rpc
