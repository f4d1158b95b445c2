#include "rpc/write_splice.h"

#include "rpc/rpc_message.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::rpc {
namespace {

// Reads big-endian words from the front of a span; false once it runs out.
class Words {
 public:
  explicit Words(absl::Span<const uint8_t> b) : b_(b) {}
  bool Next(uint32_t* v) {
    if (b_.size() - pos_ < 4) return false;
    const uint8_t* p = b_.data() + pos_;
    *v = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    pos_ += 4;
    return true;
  }
  // Skips an opaque body of n bytes plus its XDR padding.
  bool Skip(uint32_t n) {
    const size_t padded = (size_t{n} + 3) & ~size_t{3};
    if (b_.size() - pos_ < padded) return false;
    pos_ += padded;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  absl::Span<const uint8_t> b_;
  size_t pos_ = 0;
};

}  // namespace

WritePeek PeekWrite(absl::Span<const uint8_t> head, WriteLayout* layout) {
  Words w(head);
  uint32_t v[6];
  for (uint32_t& x : v) {
    if (!w.Next(&x)) return WritePeek::kNeedMore;
  }
  // xid, CALL, rpcvers 2, NFS, v3, WRITE
  if (v[1] != 0 || v[2] != 2 || v[3] != nfs3::kProgram || v[4] != 3 || v[5] != nfs3::kWrite) {
    return WritePeek::kNotWrite;
  }
  for (int auth = 0; auth < 2; ++auth) {  // credential, verifier
    uint32_t flavor, len;
    if (!w.Next(&flavor) || !w.Next(&len)) return WritePeek::kNeedMore;
    if (len > kMaxAuthBytes) return WritePeek::kNotWrite;
    if (!w.Skip(len)) return WritePeek::kNeedMore;
  }
  layout->args_begin = w.pos();
  uint32_t fh_len, offset_hi, offset_lo, count, stable, data_len;
  if (!w.Next(&fh_len)) return WritePeek::kNeedMore;
  if (fh_len > nfs3::kFhSize) return WritePeek::kNotWrite;
  if (!w.Skip(fh_len) || !w.Next(&offset_hi) || !w.Next(&offset_lo) || !w.Next(&count) ||
      !w.Next(&stable) || !w.Next(&data_len)) {
    return WritePeek::kNeedMore;
  }
  if (data_len != count) return WritePeek::kNotWrite;
  layout->data_begin = w.pos();
  layout->data_len = data_len;
  return WritePeek::kWrite;
}

}  // namespace nfs3d::rpc
