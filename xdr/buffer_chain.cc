#include "xdr/buffer_chain.h"

#include <algorithm>
#include <cstring>

namespace nfs3d::xdr {

BufferChain::Block& BufferChain::WritableBlock(size_t len) {
  if (blocks_.empty() || blocks_.back().capacity - blocks_.back().used < len) {
    size_t capacity = std::max(len, kBlockSize);
    blocks_.push_back(Block{std::make_unique<uint8_t[]>(capacity), capacity, 0});
  }
  return blocks_.back();
}

void BufferChain::AddSegment(const uint8_t* data, size_t len) {
  if (len == 0) return;
  // Extend the last segment when the new bytes follow it in memory.
  if (!segments_.empty() && segments_.back().data + segments_.back().len == data) {
    segments_.back().len += len;
  } else {
    segments_.push_back(Segment{data, len});
  }
  size_ += len;
}

void BufferChain::Append(const void* data, size_t len) {
  if (len == 0) return;
  Block& block = WritableBlock(len);
  uint8_t* dst = block.bytes.get() + block.used;
  std::memcpy(dst, data, len);
  block.used += len;
  AddSegment(dst, len);
}

uint8_t* BufferChain::Reserve(size_t len) {
  Block& block = WritableBlock(len);
  return block.bytes.get() + block.used;
}

void BufferChain::Commit(size_t len) {
  Block& block = blocks_.back();
  uint8_t* start = block.bytes.get() + block.used;
  block.used += len;
  AddSegment(start, len);
}

void BufferChain::AppendExternal(std::shared_ptr<const void> owner, const uint8_t* data, size_t len) {
  if (len == 0) return;
  owners_.push_back(std::move(owner));
  segments_.push_back(Segment{data, len});
  size_ += len;
}

void BufferChain::AppendIovecs(std::vector<iovec>* out) const {
  for (const Segment& s : segments_) {
    out->push_back(iovec{const_cast<uint8_t*>(s.data), s.len});
  }
}

std::string BufferChain::Flatten() const {
  std::string out;
  out.reserve(size_);
  for (const Segment& s : segments_) out.append(reinterpret_cast<const char*>(s.data), s.len);
  return out;
}

void BufferChain::Clear() {
  segments_.clear();
  blocks_.clear();
  owners_.clear();
  size_ = 0;
}

}  // namespace nfs3d::xdr
