// The data nfs3bench writes: a pure function of (seed, file offset), so any
// read can be verified without keeping what was written, a random or
// repeated write leaves the same file, and `nfs3bench pattern` can recreate
// the file locally for an independent md5sum.
#ifndef NFS3D_TOOLS_NFS3BENCH_PATTERN_H_
#define NFS3D_TOOLS_NFS3BENCH_PATTERN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/types/span.h"

#include "xdr/buffer_chain.h"

namespace nfs3d::bench {

class Pattern {
 public:
  explicit Pattern(uint64_t seed);

  // Writes the bytes at [offset, offset + out.size()) into out.
  void Fill(uint64_t offset, absl::Span<uint8_t> out) const;
  // Appends the same bytes as Fill(offset, len) to out, without writing them:
  // only the stamps are copied, the rest points into the shared period (which
  // stays warm in cache). Filling each 1 MiB WRITE afresh cost the load
  // client 19% of its CPU at 16 in flight (perf), CPU the server shares.
  void AppendTo(uint64_t offset, size_t len, xdr::BufferChain* out) const;
  // Returns the file offset of the first byte of data that differs from the
  // pattern at offset, or nullopt when all match.
  std::optional<uint64_t> Verify(uint64_t offset, absl::Span<const uint8_t> data) const;

 private:
  // A 1 MiB random period; the first 8 bytes of every 4 KiB block carry the
  // block number so blocks one period apart still differ.
  static constexpr size_t kPeriod = 1u << 20;
  static constexpr size_t kBlock = 4096;
  static constexpr size_t kStamp = 8;
  uint8_t StampByte(uint64_t block, size_t i) const;

  uint64_t seed_;
  // Shared: chains that point into it keep it alive.
  std::shared_ptr<std::vector<uint8_t>> base_;
};

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_PATTERN_H_
