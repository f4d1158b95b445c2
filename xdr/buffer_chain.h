// A reply under construction: an ordered list of byte segments that can be
// handed to sendmsg/writev as iovecs. Small fields are packed into owned
// blocks; bulk data (READ) is read straight into a reserved region of a block,
// or attached by reference, so file data is never copied after pread. Over
// TCP, READ data can instead be a file segment: a range of an open file that
// the transport sends with sendfile, so it is never copied in user space.
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
  // Adds len bytes of the open file fd from offset, to be read when the chain
  // is sent; owner keeps fd open. If the file is shorter by then, the missing
  // bytes are sent as zeros (the reply's length is already promised).
  void AppendFile(std::shared_ptr<const void> owner, int fd, uint64_t offset, size_t len);

  // A memory segment (fd < 0: data, len) or a file segment (fd, file_offset, len).
  struct Segment {
    const uint8_t* data = nullptr;
    size_t len = 0;
    int fd = -1;
    uint64_t file_offset = 0;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool has_file_segments() const { return has_file_segments_; }
  const std::vector<Segment>& segments() const { return segments_; }
  // Appends one iovec per segment to out. Only for chains without file
  // segments (transports that cannot send them never ask for them).
  void AppendIovecs(std::vector<iovec>* out) const;
  // Copies every segment into one string, reading file segments (tests, DRC
  // storage).
  std::string Flatten() const;
  // Copies the chain's bytes [from, from + len) (within size()) into out,
  // reading file segments.
  void CopyTo(size_t from, size_t len, uint8_t* out) const;
  // Moves the bytes of `other` from offset `from` on to the end of this
  // chain without copying them (a few hundred bytes are copied): its blocks
  // and owners come along, file segments stay file segments.
  void AppendChain(BufferChain&& other, size_t from = 0);
  // Reads file segments into memory, so every segment is bytes (for code
  // that must look at all of them, e.g. to checksum a reply).
  void ReadFileSegments();
  // Reads bytes [skip, end) of file segment s into out; zeros where the
  // file has shrunk. False if reading failed (those bytes are zeros too).
  static bool ReadFileBytes(const Segment& s, size_t skip, size_t end, uint8_t* out);
  void Clear();
  // Gives the bytes [offset, offset + old_len) a new length, new_len, moving
  // the bytes after them, and returns where they start, for the caller to
  // fill. Only for a small chain (one segment, all of it in its one block,
  // with room to grow): otherwise nullptr, and nothing changed.
  uint8_t* ResizeRange(size_t offset, size_t old_len, size_t new_len);

 private:
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
  bool has_file_segments_ = false;
};

}  // namespace nfs3d::xdr

#endif  // NFS3D_XDR_BUFFER_CHAIN_H_
