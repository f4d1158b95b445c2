// The client direction of the NFSv3 codecs: Encode(args) and Decode(results).
// The server direction (Decode(args), Encode(results)) and the building blocks
// both sides share live in nfs3_codec.h; this file adds only what a client
// needs on top, so the two directions are tested against each other.
#ifndef NFS3D_XDR_NFS3_CLIENT_CODEC_H_
#define NFS3D_XDR_NFS3_CLIENT_CODEC_H_

#include "absl/types/span.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/nfs3_codec.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfs3 {

// READ result as a client sees it: the server encodes it in pieces
// (EncodeReadHead + opaque data), a client decodes it whole. data borrows
// from the reply message.
struct READ3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr file_attributes;  // ok and fail
  uint32_t count = 0;            // ok
  bool eof = false;              // ok
  absl::Span<const uint8_t> data;  // ok
};

// Building blocks the server codec has only in the other direction.
void Encode(xdr::Encoder& e, const sattr3& s);
void Encode(xdr::Encoder& e, const diropargs3& a);
bool Decode(xdr::Decoder& d, fattr3* a);
bool Decode(xdr::Decoder& d, post_op_attr* a);
bool Decode(xdr::Decoder& d, pre_op_attr* a);
bool Decode(xdr::Decoder& d, wcc_data* w);
bool Decode(xdr::Decoder& d, post_op_fh3* fh);

// Arguments.
void Encode(xdr::Encoder& e, const GETATTR3args& a);
void Encode(xdr::Encoder& e, const SETATTR3args& a);
void Encode(xdr::Encoder& e, const LOOKUP3args& a);
void Encode(xdr::Encoder& e, const ACCESS3args& a);
void Encode(xdr::Encoder& e, const READLINK3args& a);
void Encode(xdr::Encoder& e, const READ3args& a);
void Encode(xdr::Encoder& e, const WRITE3args& a);  // sends a.data, count = a.count
// Everything of a WRITE's arguments before the data's opaque, for callers
// that produce the data in place (Encoder::ReserveOpaque).
void EncodeWriteHeader(xdr::Encoder& e, const WRITE3args& a);
void Encode(xdr::Encoder& e, const CREATE3args& a);
void Encode(xdr::Encoder& e, const MKDIR3args& a);
void Encode(xdr::Encoder& e, const SYMLINK3args& a);
void Encode(xdr::Encoder& e, const MKNOD3args& a);
void Encode(xdr::Encoder& e, const REMOVE3args& a);  // also RMDIR
void Encode(xdr::Encoder& e, const RENAME3args& a);
void Encode(xdr::Encoder& e, const LINK3args& a);
void Encode(xdr::Encoder& e, const READDIR3args& a);
void Encode(xdr::Encoder& e, const READDIRPLUS3args& a);
void Encode(xdr::Encoder& e, const FSSTAT3args& a);
void Encode(xdr::Encoder& e, const FSINFO3args& a);
void Encode(xdr::Encoder& e, const PATHCONF3args& a);
void Encode(xdr::Encoder& e, const COMMIT3args& a);

// Results. Each returns false on malformed input or an unknown status arm.
bool Decode(xdr::Decoder& d, GETATTR3res* r);
bool Decode(xdr::Decoder& d, SETATTR3res* r);
bool Decode(xdr::Decoder& d, LOOKUP3res* r);
bool Decode(xdr::Decoder& d, ACCESS3res* r);
bool Decode(xdr::Decoder& d, READLINK3res* r);
bool Decode(xdr::Decoder& d, READ3res* r);
bool Decode(xdr::Decoder& d, WRITE3res* r);
bool Decode(xdr::Decoder& d, diropres3* r);  // CREATE/MKDIR/SYMLINK/MKNOD
bool Decode(xdr::Decoder& d, REMOVE3res* r);  // also RMDIR
bool Decode(xdr::Decoder& d, RENAME3res* r);
bool Decode(xdr::Decoder& d, LINK3res* r);
bool Decode(xdr::Decoder& d, READDIR3res* r);
bool Decode(xdr::Decoder& d, READDIRPLUS3res* r);
bool Decode(xdr::Decoder& d, FSSTAT3res* r);
bool Decode(xdr::Decoder& d, FSINFO3res* r);
bool Decode(xdr::Decoder& d, PATHCONF3res* r);
bool Decode(xdr::Decoder& d, COMMIT3res* r);

// Name of a status for messages, e.g. "NFS3ERR_NOENT".
const char* StatusName(nfsstat3 status);
// Name of a procedure, e.g. "WRITE".
const char* ProcName(uint32_t proc);

}  // namespace nfs3d::nfs3

#endif  // NFS3D_XDR_NFS3_CLIENT_CODEC_H_
