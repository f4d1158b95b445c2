// libFuzzer target for the NLM v1/v3/v4 descriptions: byte 0 picks an
// argument or result type (every type a call or a peer's reply decodes),
// the rest is its body; see described_round_trip.h for what must hold.
#include "nlm/nlm4_codec.h"
#include "tests/fuzz/described_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfs3d::nlm;
  nfs3d::fuzz::RoundTripOneOf<nlm4_testargs, nlm4_lockargs, nlm4_cancargs, nlm4_unlockargs,
                              nlm_testargs, nlm_lockargs, nlm_cancargs, nlm_unlockargs,
                              nlm4_shareargs, nlm4_notify, nlm4_res, nlm_res, nlm4_testres,
                              nlm_testres, nlm4_shareres, nlm_shareres>(data, size);
  return 0;
}
