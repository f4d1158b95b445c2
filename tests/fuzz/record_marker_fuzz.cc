// libFuzzer target for TCP record reassembly (rpc/record_marker.h). The
// first byte sets how the stream is cut into reads; the rest is the stream.
// Invariants: every byte is consumed exactly once, no record exceeds the
// size cap, an error is final, re-encoding the records gives back a valid
// stream the reassembler accepts, and the WRITE peek stays inside a record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "rpc/record_marker.h"
#include "rpc/write_splice.h"

namespace {

constexpr size_t kMaxRecord = 4096;

void Run(const uint8_t* data, size_t size, std::vector<std::vector<uint8_t>>& records,
         std::vector<uint8_t>& again) {
  if (size == 0) return;
  const size_t step = 1 + data[0] % 64;  // read size; 64 = byte-by-byte... up to 64
  const uint8_t* stream = data + 1;
  const size_t len = size - 1;
  nfs3d::rpc::RecordReassembler r(kMaxRecord);
  size_t pos = 0;
  bool failed = false;
  while (pos < len && !failed) {
    size_t chunk = std::min(step, len - pos);
    absl::Span<const uint8_t> in(stream + pos, chunk);
    while (!in.empty()) {
      size_t used = 0;
      auto result = r.Feed(in, &used);
      if (used > in.size()) std::abort();
      in.remove_prefix(used);
      if (result == nfs3d::rpc::RecordReassembler::Result::kError) {
        if (r.error().empty()) std::abort();
        failed = true;
        break;
      }
      if (result == nfs3d::rpc::RecordReassembler::Result::kRecord) {
        records.push_back(r.TakeRecord());
        if (records.back().size() > kMaxRecord) std::abort();
        // The transport's WRITE peek (rpc/write_splice.h) on the record: a
        // layout it reports lies within what it read.
        nfs3d::rpc::WriteLayout w;
        if (nfs3d::rpc::PeekWrite(records.back(), &w) == nfs3d::rpc::WritePeek::kWrite &&
            (w.args_begin >= w.data_begin || w.data_begin > records.back().size())) {
          std::abort();
        }
      } else if (!in.empty()) {
        std::abort();  // kNeedMore must consume everything
      }
    }
    pos += chunk;
  }
  if (failed) return;
  // Round trip: the records, re-marked in one fragment each, reassemble to
  // the same records.
  for (const auto& rec : records) {
    uint8_t mark[4];
    nfs3d::rpc::EncodeRecordMark(static_cast<uint32_t>(rec.size()), true, mark);
    again.insert(again.end(), mark, mark + 4);
    again.insert(again.end(), rec.begin(), rec.end());
  }
  nfs3d::rpc::RecordReassembler r2(kMaxRecord);
  absl::Span<const uint8_t> in(again.data(), again.size());
  size_t n = 0;
  while (!in.empty()) {
    size_t used = 0;
    auto result = r2.Feed(in, &used);
    in.remove_prefix(used);
    if (result == nfs3d::rpc::RecordReassembler::Result::kError) std::abort();
    if (result == nfs3d::rpc::RecordReassembler::Result::kRecord) {
      if (n >= records.size() || r2.TakeRecord() != records[n]) std::abort();
      ++n;
    }
  }
  if (n != records.size()) std::abort();
}

// Feeds `in` to `r`, appending its records to `out`; false on an error.
bool FeedAll(nfs3d::rpc::RecordReassembler& r, absl::Span<const uint8_t> in,
             std::vector<std::vector<uint8_t>>& out) {
  while (!in.empty()) {
    size_t used = 0;
    auto result = r.Feed(in, &used);
    in.remove_prefix(used);
    if (result == nfs3d::rpc::RecordReassembler::Result::kError) return false;
    if (result == nfs3d::rpc::RecordReassembler::Result::kRecord) out.push_back(r.TakeRecord());
  }
  return true;
}

// A handover cut (rpc/tcp_handover.cc): the stream fed up to a byte picked
// by the input, the unfinished record carried over into a new reassembler
// with the rest; both together give what the whole stream gives, an error
// included.
void CarryOver(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const uint8_t* stream = data + 1;
  const size_t len = size - 1;
  const size_t cut = (size_t{data[0]} * 131) % (len + 1);
  std::vector<std::vector<uint8_t>> whole, parts;
  nfs3d::rpc::RecordReassembler all(kMaxRecord);
  const bool whole_ok = FeedAll(all, absl::MakeConstSpan(stream, len), whole);
  nfs3d::rpc::RecordReassembler first(kMaxRecord);
  if (!FeedAll(first, absl::MakeConstSpan(stream, cut), parts)) {
    if (whole_ok) std::abort();
    return;
  }
  std::string carried;
  first.AppendUnfinished(&carried);
  std::vector<uint8_t> rest(carried.begin(), carried.end());
  rest.insert(rest.end(), stream + cut, stream + len);
  nfs3d::rpc::RecordReassembler second(kMaxRecord);
  const bool rest_ok = FeedAll(second, absl::MakeConstSpan(rest), parts);
  if (rest_ok != whole_ok || parts != whole) std::abort();
}

void Fuzz(const uint8_t* data, size_t size) {
  // Kept across inputs so their capacity is reused, and emptied after each
  // one, so an input frees what it allocated (libFuzzer re-runs an input
  // that does not, to look for leaks).
  static std::vector<std::vector<uint8_t>> records;
  static std::vector<uint8_t> again;
  Run(data, size, records, again);
  CarryOver(data, size);
  records.clear();
  again.clear();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fuzz(data, size);
  return 0;
}
