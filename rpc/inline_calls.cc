#include "rpc/inline_calls.h"

namespace nfs3d::rpc {
namespace {

// The caller checks that the word is inside `b`.
uint32_t WordAtByte(absl::Span<const uint8_t> b, size_t offset) {
  const uint8_t* p = b.data() + offset;
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint32_t WordAt(absl::Span<const uint8_t> b, size_t index) { return WordAtByte(b, 4 * index); }

// Steps `at` over an XDR opaque<max> at `at`; false if it does not fit.
bool SkipOpaque(absl::Span<const uint8_t> b, size_t max, size_t* at) {
  if (*at + 4 > b.size()) return false;
  const size_t len = WordAtByte(b, *at);
  if (len > max) return false;
  *at += 4 + ((len + 3) & ~size_t{3});
  return *at <= b.size();
}

constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kNfsGetattr = 1;
constexpr uint32_t kNfsLookup = 3;
constexpr uint32_t kNfsAccess = 4;
constexpr uint32_t kNfsRead = 6;
constexpr uint32_t kNfsWrite = 7;
constexpr uint32_t kNfsCommit = 21;
constexpr uint32_t kAuthSys = 1;      // AUTH_NONE is 0
constexpr size_t kMaxAuthBody = 400;  // RFC 5531
constexpr size_t kMaxNfsHandle = 64;  // RFC 1813 NFS3_FHSIZE
constexpr uint32_t kUnstable = 0;     // stable_how
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
  if (call.size() < 32 || WordAt(call, 1) != 0 || WordAt(call, 2) != 2) return false;
  if (WordAt(call, 3) != kNfsProgram || WordAt(call, 4) != 3) return false;
  const uint32_t proc = WordAt(call, 5);
  if ((proc != kNfsRead && proc != kNfsWrite) || WordAt(call, 6) > kAuthSys) return false;
  size_t at = 28;  // the credential's body, then the verifier
  if (!SkipOpaque(call, kMaxAuthBody, &at)) return false;
  at += 4;  // the verifier's flavor
  if (!SkipOpaque(call, kMaxAuthBody, &at)) return false;
  if (proc == kNfsRead) return true;
  // WRITE3args: file, offset (8 bytes), count, stable.
  if (!SkipOpaque(call, kMaxNfsHandle, &at) || at + 16 > call.size()) return false;
  return WordAtByte(call, at + 12) == kUnstable;
}

bool IsNfsMetadataCall(absl::Span<const uint8_t> call) {
  if (call.size() < 24 || WordAt(call, 1) != 0) return false;
  if (WordAt(call, 3) != kNfsProgram || WordAt(call, 4) != 3) return false;
  const uint32_t proc = WordAt(call, 5);
  return proc != kNfsRead && proc != kNfsWrite && proc != kNfsCommit;
}

}  // namespace nfs3d::rpc
