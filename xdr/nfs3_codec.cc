#include "xdr/nfs3_codec.h"

namespace nfs3d::nfs3 {

void EncodeReadFail(xdr::Encoder& e, nfsstat3 status, const post_op_attr& attrs) {
  e.U32(status);
  Encode(e, attrs);
}

void EncodeWriteHeader(xdr::Encoder& e, const WRITE3args& a) {
  xdr::WriteVisitor<xdr::Encoder> v(e);
  WriteHead(v, a);
}

bool DecodeWriteHead(xdr::Decoder& d, WRITE3args* a) {
  *a = WRITE3args{};
  xdr::DecodeVisitor v(d);
  WriteHead(v, *a);
  return d.ok();
}

size_t EncodedSize(const entry3& e) { return 4 + xdr::SizeOf(e); }
size_t EncodedSize(const entryplus3& e) { return 4 + xdr::SizeOf(e); }

size_t DircountSize(const entryplus3& e) {
  return xdr::Measure(e, [](auto& v, auto& x) { EntryHead(v, x); });
}

size_t ReaddirReplyOverhead(const post_op_attr& dir_attributes) {
  return 4 + xdr::SizeOf(dir_attributes) + kCookieVerfSize + 4 + 4;
}

}  // namespace nfs3d::nfs3
