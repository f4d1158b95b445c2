// Pools of big byte buffers for the I/O hot path: READ data and TCP records.
// glibc serves requests of this size with mmap, so without a pool every
// 1 MiB READ or WRITE paid page faults, page zeroing and munmap (about a
// tenth of the server's CPU in a READ profile). Free buffers are kept up to
// a bound; beyond it they go back to malloc, so memory stays bounded.
#ifndef NFS3D_XDR_BUFFER_POOL_H_
#define NFS3D_XDR_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace nfs3d::xdr {

// Fixed-size blocks handed out as shared_ptr (for BufferChain::AppendExternal);
// a block returns to its pool when the last owner lets go, on any thread.
class BlockPool {
 public:
  BlockPool(size_t block_size, size_t max_free);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  size_t block_size() const { return block_size_; }
  // block_size() bytes, contents undefined.
  std::shared_ptr<uint8_t[]> Get();
  size_t free_blocks() const;

  // A block of at least `size` bytes from the smallest process-wide pool
  // that fits (64 KiB or 1 MiB blocks), or a plain allocation when bigger.
  static std::shared_ptr<uint8_t[]> ForRead(size_t size);

 private:
  void Put(uint8_t* block);

  const size_t block_size_;
  const size_t max_free_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<uint8_t[]>> free_;
};

// Byte vectors reused by capacity (TCP records): Get() returns a vector with
// at least the asked capacity, Put() takes one back. A reused vector keeps
// the size and bytes its last user left, so growing it again up to that size
// costs no zero-filling; callers track their own length.
class VectorPool {
 public:
  VectorPool(size_t min_capacity, size_t max_free)
      : min_capacity_(min_capacity), max_free_(max_free) {}
  VectorPool(const VectorPool&) = delete;
  VectorPool& operator=(const VectorPool&) = delete;

  std::vector<uint8_t> Get(size_t capacity);
  // Vectors below min_capacity are simply freed.
  void Put(std::vector<uint8_t> v);
  size_t free_vectors() const;

  // The process-wide pool of TCP record buffers (64 KiB and up).
  static VectorPool& Records();

 private:
  const size_t min_capacity_;
  const size_t max_free_;
  mutable std::mutex mu_;
  std::vector<std::vector<uint8_t>> free_;
};

}  // namespace nfs3d::xdr

#endif  // NFS3D_XDR_BUFFER_POOL_H_
