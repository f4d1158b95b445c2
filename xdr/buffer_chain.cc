#include "xdr/buffer_chain.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace nfs3d::xdr {

BufferChain::Block& BufferChain::WritableBlock(size_t len) {
  if (blocks_.empty() || blocks_.back().capacity - blocks_.back().used < len) {
    size_t capacity = std::max(len, kBlockSize);
    // Not zeroed: only bytes written (and committed) are ever sent, and
    // zeroing a 1 MiB block per call showed in the load client's profile.
    blocks_.push_back(Block{std::make_unique_for_overwrite<uint8_t[]>(capacity), capacity, 0});
  }
  return blocks_.back();
}

void BufferChain::AddSegment(const uint8_t* data, size_t len) {
  if (len == 0) return;
  // Extend the last segment when the new bytes follow it in memory.
  if (!segments_.empty() && segments_.back().fd < 0 &&
      segments_.back().data + segments_.back().len == data) {
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

void BufferChain::AppendExternal(std::shared_ptr<const void> owner, const uint8_t* data,
                                 size_t len) {
  if (len == 0) return;
  owners_.push_back(std::move(owner));
  segments_.push_back(Segment{data, len});
  size_ += len;
}

void BufferChain::AppendFile(std::shared_ptr<const void> owner, int fd, uint64_t offset,
                             size_t len) {
  if (len == 0) return;
  owners_.push_back(std::move(owner));
  segments_.push_back(Segment{nullptr, len, fd, offset});
  size_ += len;
  has_file_segments_ = true;
}

void BufferChain::AppendIovecs(std::vector<iovec>* out) const {
  assert(!has_file_segments_);
  for (const Segment& s : segments_) {
    out->push_back(iovec{const_cast<uint8_t*>(s.data), s.len});
  }
}

bool BufferChain::ReadFileBytes(const Segment& s, size_t skip, size_t end, uint8_t* out) {
  size_t done = skip;
  bool ok = true;
  while (done < end) {
    ssize_t got =
        pread(s.fd, out + done - skip, end - done, static_cast<off_t>(s.file_offset + done));
    if (got < 0 && errno == EINTR) continue;
    ok = got >= 0;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  std::memset(out + done - skip, 0, end - done);
  return ok;
}

std::string BufferChain::Flatten() const {
  std::string out;
  out.resize(size_);
  CopyTo(0, size_, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

void BufferChain::CopyTo(size_t from, size_t len, uint8_t* out) const {
  for (const Segment& s : segments_) {
    if (len == 0) break;
    if (from >= s.len) {
      from -= s.len;
      continue;
    }
    const size_t end = std::min(s.len, from + len);
    if (s.fd < 0) {
      std::memcpy(out, s.data + from, end - from);
    } else {
      ReadFileBytes(s, from, end, out);
    }
    out += end - from;
    len -= end - from;
    from = 0;
  }
}

void BufferChain::AppendChain(BufferChain&& other, size_t from) {
  if (from >= other.size_) return;
  // A few bytes are cheaper to copy than to keep the other chain alive for.
  constexpr size_t kCopyBelow = 1024;
  if (!other.has_file_segments_ && other.size_ - from <= kCopyBelow) {
    const size_t len = other.size_ - from;
    other.CopyTo(from, len, Reserve(len));
    Commit(len);
    return;
  }
  auto owner = std::make_shared<BufferChain>(std::move(other));
  for (const Segment& s : owner->segments_) {
    if (from >= s.len) {
      from -= s.len;
      continue;
    }
    if (s.fd < 0) {
      AppendExternal(owner, s.data + from, s.len - from);
    } else {
      AppendFile(owner, s.fd, s.file_offset + from, s.len - from);
    }
    from = 0;
  }
}

void BufferChain::ReadFileSegments() {
  if (!has_file_segments_) return;
  for (Segment& s : segments_) {
    if (s.fd < 0) continue;
    auto bytes = std::make_unique_for_overwrite<uint8_t[]>(s.len);
    ReadFileBytes(s, 0, s.len, bytes.get());
    s = Segment{bytes.get(), s.len};
    blocks_.push_back(Block{std::move(bytes), s.len, s.len});
  }
  has_file_segments_ = false;
}

uint8_t* BufferChain::ResizeRange(size_t offset, size_t old_len, size_t new_len) {
  if (segments_.size() != 1 || blocks_.size() != 1 || !owners_.empty()) return nullptr;
  Block& block = blocks_[0];
  Segment& segment = segments_[0];
  if (segment.data != block.bytes.get() || segment.len != block.used || offset > segment.len ||
      old_len > segment.len - offset || new_len > block.capacity - block.used + old_len) {
    return nullptr;
  }
  uint8_t* at = block.bytes.get() + offset;
  std::memmove(at + new_len, at + old_len, segment.len - offset - old_len);
  block.used = block.used - old_len + new_len;
  segment.len = block.used;
  size_ = block.used;
  return at;
}

void BufferChain::Clear() {
  segments_.clear();
  blocks_.clear();
  owners_.clear();
  size_ = 0;
  has_file_segments_ = false;
}

}  // namespace nfs3d::xdr
