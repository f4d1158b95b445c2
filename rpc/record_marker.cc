#include "rpc/record_marker.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

#include "xdr/buffer_pool.h"

namespace nfs3d::rpc {
namespace {
// Records at least this big come from (and go back to) the record pool.
constexpr size_t kPooledRecord = 64 << 10;
// Fragment bodies at least this big are read straight into the record
// (DirectSpan), in chunks of at most kDirectChunk: a whole 1 MiB WRITE body
// in one piece, so the TCP reader waits for it with one low-water wakeup.
constexpr size_t kDirectRead = 64 << 10;
constexpr size_t kDirectChunk = 1 << 20;
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
      if (fragment_left_ > max_record_size_ - len_) {
        failed_ = true;
        error_ = absl::StrCat("record exceeds ", max_record_size_, " bytes (have ", len_,
                              ", fragment of ", fragment_left_, ")");
        *consumed = pos;
        return Result::kError;
      }
      in_fragment_ = true;
      Reserve(len_ + fragment_left_);
    }
    size_t take = std::min(data.size() - pos, fragment_left_);
    if (take > 0) {  // zero-length fragments exist; memcpy wants real pointers
      Grow(len_ + take);
      std::memcpy(record_.data() + len_, data.data() + pos, take);
      len_ += take;
    }
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

void RecordReassembler::Reserve(size_t need) {
  // One allocation of the final size (the cap was checked): a growing vector
  // would copy a 1 MiB WRITE several times and, at 2 MiB capacity, get fresh
  // mmap()ed pages for every record. Reserved, untouched pages cost no
  // memory, so a client that announces a big fragment and stalls pins
  // nothing real.
  if (need <= record_.capacity()) return;
  if (need >= kPooledRecord) {
    // Big records (WRITEs) reuse buffers the workers gave back.
    std::vector<uint8_t> bigger = xdr::VectorPool::Records().Get(need);
    if (bigger.size() < len_) bigger.resize(len_);
    if (len_ > 0) std::memcpy(bigger.data(), record_.data(), len_);
    record_.swap(bigger);
    xdr::VectorPool::Records().Put(std::move(bigger));
  } else {
    record_.reserve(need);
  }
}

void RecordReassembler::Grow(size_t size) {
  // A pooled vector keeps the size of its last record, so in steady state
  // this zero-fills nothing; only bytes about to arrive are ever touched.
  if (record_.size() < size) record_.resize(size);
}

size_t RecordReassembler::DirectRoom(size_t max) const {
  if (failed_ || complete_ || !in_fragment_ || fragment_left_ < kDirectRead) return 0;
  return std::min({fragment_left_, kDirectChunk, max});
}

absl::Span<uint8_t> RecordReassembler::DirectSpan(size_t max) {
  const size_t n = DirectRoom(max);
  if (n == 0) return {};
  Grow(len_ + n);
  return absl::MakeSpan(record_.data() + len_, n);
}

RecordReassembler::Result RecordReassembler::CommitDirect(size_t n) {
  n = std::min(n, fragment_left_);
  len_ += n;
  fragment_left_ -= n;
  if (fragment_left_ > 0) return Result::kNeedMore;
  in_fragment_ = false;
  if (!last_) return Result::kNeedMore;
  complete_ = true;
  return Result::kRecord;
}

RecordReassembler::Result RecordReassembler::CommitElsewhere(size_t n) {
  n = std::min(n, fragment_left_);
  Grow(len_ + n);
  return CommitDirect(n);
}

std::vector<uint8_t> RecordReassembler::TakeRecord() {
  complete_ = false;
  last_ = false;
  record_.resize(len_);  // never grows here: size() >= len_
  std::vector<uint8_t> out = std::move(record_);
  record_ = std::vector<uint8_t>();
  len_ = 0;
  return out;
}

void RecordReassembler::AppendUnfinished(std::string* out) const {
  uint8_t mark[4];
  auto append_mark = [&](size_t length, bool last) {
    EncodeRecordMark(static_cast<uint32_t>(length), last, mark);
    out->append(reinterpret_cast<const char*>(mark), 4);
  };
  if (failed_ || idle()) return;
  if (complete_) {
    append_mark(len_, true);
  } else if (in_fragment_) {
    // The fragment's body still due follows on the socket.
    append_mark(len_ + fragment_left_, last_);
  } else if (len_ > 0) {
    append_mark(len_, false);
  }
  out->append(reinterpret_cast<const char*>(record_.data()), len_);
  if (!in_fragment_ && !complete_)
    out->append(reinterpret_cast<const char*>(header_), header_have_);
}

}  // namespace nfs3d::rpc
