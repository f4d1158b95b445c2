#include "rpc/record_marker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "xdr/buffer_pool.h"

namespace nfs3d::rpc {
namespace {
// Records at least this big come from (and go back to) the record pool.
constexpr size_t kPooledRecord = 64 << 10;
}  // namespace

void EncodeRecordMark(uint32_t length, bool last, uint8_t out[4]) {
  uint32_t v = (length & kMaxFragmentLength) | (last ? kLastFragmentBit : 0);
  out[0] = static_cast<uint8_t>(v >> 24);
  out[1] = static_cast<uint8_t>(v >> 16);
  out[2] = static_cast<uint8_t>(v >> 8);
  out[3] = static_cast<uint8_t>(v);
}

RecordReassembler::Result RecordReassembler::Feed(absl::Span<const uint8_t> data,
                                                   size_t* consumed) {
  size_t pos = 0;
  *consumed = 0;
  if (failed_) return Result::kError;
  if (complete_) return Result::kRecord;  // caller has not taken the last one
  while (true) {
    if (!in_fragment_) {
      size_t take = std::min(data.size() - pos, size_t{4} - header_have_);
      std::copy_n(data.data() + pos, take, header_ + header_have_);
      header_have_ += take;
      pos += take;
      if (header_have_ < 4) break;
      header_have_ = 0;
      uint32_t mark = (uint32_t{header_[0]} << 24) | (uint32_t{header_[1]} << 16) |
                      (uint32_t{header_[2]} << 8) | uint32_t{header_[3]};
      last_ = (mark & kLastFragmentBit) != 0;
      fragment_left_ = mark & kMaxFragmentLength;
      // Checked before reserving anything: a hostile length costs nothing.
      if (fragment_left_ > max_record_size_ - record_.size()) {
        failed_ = true;
        error_ = absl::StrCat("record exceeds ", max_record_size_, " bytes (have ",
                              record_.size(), ", fragment of ", fragment_left_, ")");
        *consumed = pos;
        return Result::kError;
      }
      in_fragment_ = true;
      // One allocation of the final size (the cap was checked above): a
      // growing vector would copy a 1 MiB WRITE several times and, at 2 MiB
      // capacity, get fresh mmap()ed pages for every record. Untouched
      // reserved pages cost no memory, so a client that announces a big
      // fragment and stalls pins nothing real.
      const size_t need = record_.size() + fragment_left_;
      if (need > record_.capacity() && need >= kPooledRecord) {
        // Big records (WRITEs) reuse buffers the workers gave back.
        std::vector<uint8_t> bigger = xdr::VectorPool::Records().Get(need);
        bigger.insert(bigger.end(), record_.begin(), record_.end());
        record_.swap(bigger);
        xdr::VectorPool::Records().Put(std::move(bigger));
      } else {
        record_.reserve(need);
      }
    }
    size_t take = std::min(data.size() - pos, fragment_left_);
    record_.insert(record_.end(), data.data() + pos, data.data() + pos + take);
    pos += take;
    fragment_left_ -= take;
    if (fragment_left_ > 0) break;  // data exhausted mid-fragment
    in_fragment_ = false;
    if (last_) {
      complete_ = true;
      *consumed = pos;
      return Result::kRecord;
    }
    if (pos == data.size()) break;
  }
  *consumed = pos;
  return Result::kNeedMore;
}

std::vector<uint8_t> RecordReassembler::TakeRecord() {
  complete_ = false;
  last_ = false;
  std::vector<uint8_t> out = std::move(record_);
  record_.clear();
  return out;
}

}  // namespace nfs3d::rpc
