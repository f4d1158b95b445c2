#include "rpc/write_splice.h"

#include "rpc/rpc_message.h"
#include "xdr/decoder.h"
#include "xdr/nfs3_codec.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::rpc {
namespace {

// Handle length and bytes, offset, count, stable, the data's length.
constexpr size_t kLongestWriteHead = 4 + nfs3::kFhSize + 8 + 4 + 4 + 4;

}  // namespace

WritePeek PeekWrite(absl::Span<const uint8_t> head, WriteLayout* layout) {
  // The words that name the call first: most records are not WRITEs.
  if (head.size() < 24) return WritePeek::kNeedMore;
  xdr::Decoder words(head);
  uint32_t w[6];
  for (uint32_t& x : w) x = words.U32();
  // xid, CALL, rpcvers 2, NFS, v3, WRITE
  if (w[1] != 0 || w[2] != kRpcVersion || w[3] != nfs3::kProgram || w[4] != 3 ||
      w[5] != nfs3::kWrite) {
    return WritePeek::kNotWrite;
  }
  xdr::Decoder in(head);
  CallHeader header;
  const HeaderDisposition header_read = DecodeCallHeader(in, &header);
  // Past the words above, kDrop can only mean the head is not all there.
  if (header_read == HeaderDisposition::kDrop) return WritePeek::kNeedMore;
  if (header_read != HeaderDisposition::kOk) return WritePeek::kNotWrite;  // an over-long auth
  layout->args_begin = in.position();
  // WRITE3args up to the data, then the data's length.
  nfs3::WRITE3args args;
  nfs3::DecodeWriteHead(in, &args);
  const uint32_t data_len = in.U32();
  if (!in.ok()) {
    // Short of bytes, or malformed (a handle too long, a stable_how out of
    // range): the ordinary path's decode answers those.
    const bool all_there = head.size() - layout->args_begin >= kLongestWriteHead;
    return in.over_limit() || all_there ? WritePeek::kNotWrite : WritePeek::kNeedMore;
  }
  if (data_len != args.count) return WritePeek::kNotWrite;
  layout->data_begin = in.position();
  layout->data_len = data_len;
  return WritePeek::kWrite;
}

}  // namespace nfs3d::rpc
