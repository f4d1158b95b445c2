// libFuzzer target for the handover format (daemon/handover_format.h): a
// successor or a predecessor is a peer like any other, so what it sends is
// hostile input. Byte 0 picks the type, the rest is its body (see
// described_round_trip.h); the whole input is also read as a frame of
// every step.
#include <string_view>

#include "daemon/handover_format.h"
#include "tests/fuzz/described_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfs3d::handover;
  nfs3d::fuzz::RoundTripOneOf<Hello, Answer, SocketEntry, Sockets, Ready, DrcEntry, StatsProcEntry,
                              StatsState, NlmWaiterEntry, GssKeysEntry, GssContextEntry,
                              TcpConnectionEntry, State, StateV2, TlsSessionEntry,
                              TcpConnectionEntryV3, StateV3>(data, size);
  const std::string_view frame(reinterpret_cast<const char*>(data), size);
  (void)DecodeFrame<Hello>(Step::kHello, frame);
  (void)DecodeFrame<Answer>(Step::kAnswer, frame);
  (void)DecodeFrame<Sockets>(Step::kSockets, frame);
  (void)DecodeFrame<Ready>(Step::kReady, frame);
  for (uint32_t format = kOldestFormat; format <= kFormat; ++format) {
    (void)DecodeState(format, frame);
  }
  (void)DecodeFrame<Descriptors>(Step::kDescriptors, frame);
  return 0;
}
