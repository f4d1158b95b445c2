// TCP record marking (RFC 5531 section 11): a record is a sequence of
// fragments, each preceded by a 4-byte header whose top bit marks the last
// fragment and whose low 31 bits give the fragment length.
#ifndef NFS3D_RPC_RECORD_MARKER_H_
#define NFS3D_RPC_RECORD_MARKER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"

namespace nfs3d::rpc {

inline constexpr uint32_t kLastFragmentBit = 0x80000000u;
inline constexpr uint32_t kMaxFragmentLength = 0x7fffffffu;

// Writes the 4-byte record mark of a fragment of `length` bytes.
void EncodeRecordMark(uint32_t length, bool last, uint8_t out[4]);

// Incremental reassembler: feed it the bytes of a stream in chunks of any
// size; it reports each complete record. A fragment header that would make
// the record larger than max_record_size is an error, detected before any
// memory is reserved for it.
class RecordReassembler {
 public:
  enum class Result { kNeedMore, kRecord, kError };

  explicit RecordReassembler(size_t max_record_size) : max_record_size_(max_record_size) {}

  // Consumes bytes from `data` until a record completes, an error occurs or
  // the data runs out; *consumed says how many bytes were used. After kRecord
  // call TakeRecord() and feed the rest of `data` again. After kError the
  // stream is unusable (close the connection).
  Result Feed(absl::Span<const uint8_t> data, size_t* consumed);

  // The record completed by the last Feed() or CommitDirect(); resets for
  // the next record.
  std::vector<uint8_t> TakeRecord();

  // Zero-copy path for big fragments: while inside a fragment body with at
  // least 64 KiB still due, returns where the next bytes of the stream belong
  // (up to 1 MiB of it), so the caller can read() straight into the record
  // instead of into a buffer it would then copy; empty otherwise. After
  // reading n bytes there, CommitDirect(n) accounts for them (kRecord when
  // that completed the record).
  absl::Span<uint8_t> DirectSpan(size_t max = SIZE_MAX);
  // DirectSpan's size, without making room for it yet: a reader that waits
  // for the bytes first touches no memory for a record that never arrives.
  size_t DirectRoom(size_t max = SIZE_MAX) const;
  Result CommitDirect(size_t n);

  // For a transport that moves fragment body bytes elsewhere (a WRITE's data
  // spliced into a pipe, rpc/write_splice.h): the record so far, whose bytes
  // moved elsewhere hold nothing useful; the body bytes of the current
  // fragment still due (0 between fragments); the fragment header bytes still
  // due (0 inside a body; Feed exactly these to read a header and no body).
  absl::Span<uint8_t> Partial() { return absl::MakeSpan(record_.data(), len_); }
  size_t size() const { return len_; }
  size_t body_left() const { return in_fragment_ ? fragment_left_ : 0; }
  size_t header_needed() const { return in_fragment_ || complete_ ? 0 : 4 - header_have_; }
  // Accounts n body bytes that went elsewhere as if they had been read into
  // the record (their room is allocated, its content left as it is).
  Result CommitElsewhere(size_t n);

  const std::string& error() const { return error_; }
  // The record begun so far as stream bytes: a new reassembler fed them is
  // at the same point of the same record (whole fragments and the current
  // one become one fragment of their combined length). For handing a
  // connection to another process between two reads. Bytes committed
  // elsewhere must have been put back into the record first.
  void AppendUnfinished(std::string* out) const;
  // True when a whole record waits for TakeRecord.
  bool complete() const { return complete_; }
  // True when no bytes of a partial record are buffered (a clean EOF point).
  bool idle() const { return header_have_ == 0 && !in_fragment_ && len_ == 0 && !complete_; }

 private:
  size_t max_record_size_;
  uint8_t header_[4] = {0, 0, 0, 0};
  size_t header_have_ = 0;    // bytes of the current fragment header seen
  bool in_fragment_ = false;  // reading a fragment body
  bool last_ = false;         // the current fragment is the last one
  size_t fragment_left_ = 0;  // body bytes of the current fragment still due
  bool complete_ = false;     // record_ holds a whole record
  bool failed_ = false;
  void Reserve(size_t need);
  void Grow(size_t size);

  // record_[0, len_) holds the record so far; record_ may be bigger (a pooled
  // buffer keeps its last size, so reusing it does not zero-fill it again).
  std::vector<uint8_t> record_;
  size_t len_ = 0;
  std::string error_;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_RECORD_MARKER_H_
