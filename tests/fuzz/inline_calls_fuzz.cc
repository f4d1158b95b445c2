// libFuzzer target for the transports' peeks at a call before it is decoded
// (rpc/inline_calls.h), which every datagram from any host goes through: no
// input reads out of bounds, and a call IsPageCacheCall lets run on an io
// thread is what the full decoder says it is (an NFSv3 READ, or a WRITE
// whose stable_how is UNSTABLE, under AUTH_NONE or AUTH_SYS).
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

#include "rpc/inline_calls.h"
#include "rpc/rpc_message.h"
#include "tests/fuzz/fuzz_check.h"
#include "xdr/decoder.h"

namespace {

constexpr uint32_t kNfs = 100003;
constexpr uint32_t kRead = 6;
constexpr uint32_t kWrite = 7;

void Fuzz(const uint8_t* data, size_t size) {
  const absl::Span<const uint8_t> call(data, size);
  const bool inline_call = nfs3d::rpc::RunsInline(call);
  nfs3d::rpc::IsNullCall(call);
  nfs3d::rpc::WaitsForSync(call);
  nfs3d::rpc::IsNfsMetadataCall(call);
  if (!nfs3d::rpc::IsPageCacheCall(call)) return;
  FUZZ_CHECK(!inline_call);  // a READ or WRITE is never a short inline call
  nfs3d::xdr::Decoder in(data, size);
  nfs3d::rpc::CallHeader header;
  FUZZ_CHECK(nfs3d::rpc::DecodeCallHeader(in, &header) == nfs3d::rpc::HeaderDisposition::kOk);
  FUZZ_CHECK(header.prog == kNfs && header.vers == 3);
  FUZZ_CHECK(header.proc == kRead || header.proc == kWrite);
  FUZZ_CHECK(header.cred.flavor <= 1);
  if (header.proc != kWrite) return;
  in.Opaque(64);  // WRITE3args: file, offset, count, stable
  in.U64();
  in.U32();
  const uint32_t stable = in.U32();
  FUZZ_CHECK(in.ok() && stable == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fuzz(data, size);
  return 0;
}
