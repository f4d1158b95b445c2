#include "xdr/buffer_pool.h"

#include <algorithm>
#include <utility>

namespace nfs3d::xdr {
namespace {
constexpr size_t kSmallBlock = 64 << 10;
// The largest READ (1 MiB) plus room for rounding.
constexpr size_t kLargeBlock = (1 << 20) + 4096;
// Enough free buffers for dozens of calls in flight; bounds what an idle
// server keeps (32 x 1 MiB + 64 x 64 KiB + 32 records).
constexpr size_t kMaxFreeLarge = 32;
constexpr size_t kMaxFreeSmall = 64;
constexpr size_t kMaxFreeRecords = 32;
}  // namespace

BlockPool::BlockPool(size_t block_size, size_t max_free)
    : block_size_(block_size), max_free_(max_free) {}

BlockPool::~BlockPool() = default;

std::shared_ptr<uint8_t[]> BlockPool::Get() {
  std::unique_ptr<uint8_t[]> block;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      block = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!block) block = std::make_unique_for_overwrite<uint8_t[]>(block_size_);
  return std::shared_ptr<uint8_t[]>(block.release(), [this](uint8_t* p) { Put(p); });
}

void BlockPool::Put(uint8_t* block) {
  std::unique_ptr<uint8_t[]> owned(block);
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.size() < max_free_) free_.push_back(std::move(owned));
}

size_t BlockPool::free_blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

std::shared_ptr<uint8_t[]> BlockPool::ForRead(size_t size) {
  // Never destroyed: blocks may come back from any thread until exit.
  static BlockPool* small = new BlockPool(kSmallBlock, kMaxFreeSmall);
  static BlockPool* large = new BlockPool(kLargeBlock, kMaxFreeLarge);
  if (size <= kSmallBlock) return small->Get();
  if (size <= kLargeBlock) return large->Get();
  return std::make_shared_for_overwrite<uint8_t[]>(size);
}

std::vector<uint8_t> VectorPool::Get(size_t capacity) {
  std::vector<uint8_t> v;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].capacity() >= capacity) {
        v = std::move(free_[i]);
        free_[i] = std::move(free_.back());
        free_.pop_back();
        break;
      }
    }
  }
  v.reserve(capacity);
  return v;
}

void VectorPool::Put(std::vector<uint8_t> v) {
  if (v.capacity() < min_capacity_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.size() < max_free_) {
    free_.push_back(std::move(v));
    return;
  }
  // Full: keep the bigger one. Otherwise a pool filled with one workload's
  // small records turns every 1 MiB record of the next (krb5i/krb5p WRITEs,
  // which are not spliced) into a fresh mmap()ed, zero-filled allocation.
  auto smallest = std::min_element(free_.begin(), free_.end(), [](const auto& a, const auto& b) {
    return a.capacity() < b.capacity();
  });
  if (smallest->capacity() < v.capacity()) smallest->swap(v);  // v, now the smaller, goes
}

size_t VectorPool::free_vectors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

VectorPool& VectorPool::Records() {
  static VectorPool* pool = new VectorPool(64 << 10, kMaxFreeRecords);
  return *pool;
}

}  // namespace nfs3d::xdr
