#include "tools/nfs3bench/pattern.h"

#include <algorithm>
#include <cstring>

namespace nfs3d::bench {
namespace {

// splitmix64: a fast, well-mixed generator for the random period.
uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

Pattern::Pattern(uint64_t seed)
    : seed_(seed), base_(std::make_shared<std::vector<uint8_t>>(kPeriod)) {
  uint64_t state = seed;
  for (size_t i = 0; i < kPeriod; i += 8) {
    uint64_t v = SplitMix(&state);
    std::memcpy(base_->data() + i, &v, 8);
  }
}

uint8_t Pattern::StampByte(uint64_t block, size_t i) const {
  uint64_t v = block ^ seed_;
  return static_cast<uint8_t>(v >> (8 * i));
}

void Pattern::Fill(uint64_t offset, absl::Span<uint8_t> out) const {
  size_t done = 0;
  while (done < out.size()) {
    uint64_t pos = offset + done;
    size_t in_block = pos % kBlock;
    if (in_block < kStamp) {
      out[done++] = StampByte(pos / kBlock, in_block);
      continue;
    }
    // Copy up to the next block boundary or period end from the base.
    size_t in_period = pos % kPeriod;
    size_t n = std::min({out.size() - done, kBlock - in_block, kPeriod - in_period});
    std::memcpy(out.data() + done, base_->data() + in_period, n);
    done += n;
  }
}

void Pattern::AppendTo(uint64_t offset, size_t len, xdr::BufferChain* out) const {
  bool owned = false;  // one reference to base_ per chain is enough
  size_t done = 0;
  while (done < len) {
    const uint64_t pos = offset + done;
    const size_t in_block = pos % kBlock;
    if (in_block < kStamp) {
      uint8_t stamp[kStamp];
      const size_t n = std::min(len - done, kStamp - in_block);
      for (size_t i = 0; i < n; ++i) stamp[i] = StampByte(pos / kBlock, in_block + i);
      out->Append(stamp, n);
      done += n;
      continue;
    }
    const size_t in_period = pos % kPeriod;
    const size_t n = std::min({len - done, kBlock - in_block, kPeriod - in_period});
    out->AppendExternal(owned ? nullptr : base_, base_->data() + in_period, n);
    owned = true;
    done += n;
  }
}

std::optional<uint64_t> Pattern::Verify(uint64_t offset, absl::Span<const uint8_t> data) const {
  size_t done = 0;
  while (done < data.size()) {
    uint64_t pos = offset + done;
    size_t in_block = pos % kBlock;
    if (in_block < kStamp) {
      if (data[done] != StampByte(pos / kBlock, in_block)) return pos;
      ++done;
      continue;
    }
    size_t in_period = pos % kPeriod;
    size_t n = std::min({data.size() - done, kBlock - in_block, kPeriod - in_period});
    if (std::memcmp(data.data() + done, base_->data() + in_period, n) != 0) {
      for (size_t i = 0; i < n; ++i) {
        if (data[done + i] != (*base_)[in_period + i]) return pos + i;
      }
    }
    done += n;
  }
  return std::nullopt;
}

}  // namespace nfs3d::bench
