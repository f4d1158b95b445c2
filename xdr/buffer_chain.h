// A reply under construction: an ordered list of byte segments that can be
// handed to sendmsg/writev as iovecs. Small fields are packed into owned
// blocks; bulk data (READ) is read straight into a reserved region of a block,
// or attached by reference, so file data is never copied after pread.
#ifndef NFS3D_XDR_BUFFER_CHAIN_H_
#define NFS3D_XDR_BUFFER_CHAIN_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"

namespace nfs3d::xdr {

class BufferChain {
 public:
  BufferChain() = default;
  BufferChain(BufferChain&&) = default;
  BufferChain& operator=(BufferChain&&) = default;
  BufferChain(const BufferChain&) = delete;
  BufferChain& operator=(const BufferChain&) = delete;

  // Copies bytes to the end of the chain.
  void Append(const void* data, size_t len);
  // Returns at least len contiguous writable bytes at the end of the chain
  // without adding them; Commit(n) then adds the first n. Nothing may be
  // appended between the two calls.
  uint8_t* Reserve(size_t len);
  void Commit(size_t len);
  // Adds bytes owned by someone else; owner keeps them alive as long as the
  // chain (or anything it is moved into) lives.
  void AppendExternal(std::shared_ptr<const void> owner, const uint8_t* data, size_t len);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Appends one iovec per segment to out.
  void AppendIovecs(std::vector<iovec>* out) const;
  // Copies every segment into one string (tests, DRC storage, UDP fallback).
  std::string Flatten() const;
  void Clear();

 private:
  struct Segment {
    const uint8_t* data;
    size_t len;
  };
  struct Block {
    std::unique_ptr<uint8_t[]> bytes;
    size_t capacity;
    size_t used;
  };
  static constexpr size_t kBlockSize = 4096;

  Block& WritableBlock(size_t len);
  void AddSegment(const uint8_t* data, size_t len);

  std::vector<Segment> segments_;
  std::vector<Block> blocks_;
  std::vector<std::shared_ptr<const void>> owners_;
  size_t size_ = 0;
};

}  // namespace nfs3d::xdr

#endif  // NFS3D_XDR_BUFFER_CHAIN_H_
