// libFuzzer target for the NSM descriptions: byte 0 picks the type (the
// arguments nfs3d's NSM serves and the callbacks it decodes), the rest is
// its body; see described_round_trip.h for what must hold.
#include "nlm/nsm_codec.h"
#include "tests/fuzz/described_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfs3d::nsm;
  nfs3d::fuzz::RoundTripOneOf<sm_name, my_id, mon_id, mon, stat_chge, sm_status, sm_stat_res,
                              sm_stat>(data, size);
  return 0;
}
