// Fuzz check shared by the targets that feed described XDR types
// (xdr/describe.h): whatever decodes must re-encode to bytes that decode
// again and re-encode to the same bytes, whose length SizeOf predicts, and
// the decoder must stay inside the input.
#ifndef NFS3D_TESTS_FUZZ_DESCRIBED_ROUND_TRIP_H_
#define NFS3D_TESTS_FUZZ_DESCRIBED_ROUND_TRIP_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "xdr/describe.h"
#include "xdr/encode_to_string.h"

namespace nfs3d::fuzz {

template <typename T>
void RoundTrip(const uint8_t* data, size_t size) {
  xdr::Decoder d(data, size);
  T first{};
  const bool ok = xdr::Decode(d, &first);
  if (d.position() > size) std::abort();
  if (!ok) return;
  const std::string once = xdr::EncodeToString(first);
  if (xdr::SizeOf(first) != once.size() || once.size() % 4 != 0) std::abort();
  xdr::Decoder again(reinterpret_cast<const uint8_t*>(once.data()), once.size());
  T second{};
  if (!xdr::Decode(again, &second) || again.remaining() != 0) std::abort();
  if (xdr::EncodeToString(second) != once) std::abort();
}

// Runs RoundTrip for the type data[0] picks among Ts; the rest is the body.
template <typename... Ts>
void RoundTripOneOf(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const size_t pick = data[0] % sizeof...(Ts);
  size_t i = 0;
  ((i++ == pick ? RoundTrip<Ts>(data + 1, size - 1) : void()), ...);
}

}  // namespace nfs3d::fuzz

#endif  // NFS3D_TESTS_FUZZ_DESCRIBED_ROUND_TRIP_H_
