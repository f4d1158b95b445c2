#include "vfs/siphash.h"

namespace nfs3d::vfs {
namespace {

uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct State {
  uint64_t v0, v1, v2, v3;

  void Round() {
    v0 += v1;
    v1 = Rotl(v1, 13);
    v1 ^= v0;
    v0 = Rotl(v0, 32);
    v2 += v3;
    v3 = Rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = Rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = Rotl(v1, 17);
    v1 ^= v2;
    v2 = Rotl(v2, 32);
  }

  void Absorb(uint64_t m) {
    v3 ^= m;
    Round();  // c = 2 compression rounds
    Round();
    v0 ^= m;
  }
};

}  // namespace

uint64_t SipHash24(const SipKey& key, absl::Span<const uint8_t> data) {
  const uint64_t k0 = LoadLe64(key.data());
  const uint64_t k1 = LoadLe64(key.data() + 8);
  // Initialisation constants: "somepseudorandomlygeneratedbytes".
  State s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
          k1 ^ 0x7465646279746573ULL};
  const size_t n = data.size();
  const size_t whole = n - n % 8;
  for (size_t i = 0; i < whole; i += 8) s.Absorb(LoadLe64(data.data() + i));
  // Last block: remaining bytes, zero padded, with the length mod 256 on top.
  uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
  for (size_t i = whole; i < n; ++i) last |= static_cast<uint64_t>(data[i]) << (8 * (i - whole));
  s.Absorb(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.Round();  // d = 4 finalisation rounds
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace nfs3d::vfs
