// libFuzzer target for the RQUOTA descriptions: byte 0 picks the type (the
// arguments of both versions that nfs3d decodes, and the result it encodes),
// the rest is its body; see described_round_trip.h for what must hold.
#include "tests/fuzz/described_round_trip.h"
#include "xdr/rquota_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfs3d::rquota;
  nfs3d::fuzz::RoundTripOneOf<GetQuotaArgsV1, GetQuotaArgsV2, SetQuotaArgsV1, SetQuotaArgsV2,
                              GetQuotaRes>(data, size);
  return 0;
}
