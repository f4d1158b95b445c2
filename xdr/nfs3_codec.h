// XDR codecs for the NFSv3 types in nfs3_types.h. Decode returns false on
// malformed input (the caller answers GARBAGE_ARGS); Encode writes the arm
// selected by the result's status. Found by argument-dependent lookup, which
// is how rpc::TypedProc uses them.
#ifndef NFS3D_XDR_NFS3_CODEC_H_
#define NFS3D_XDR_NFS3_CODEC_H_

#include <cstddef>

#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfs3 {

// Building blocks (also used by other programs, e.g. MOUNT's fhandle3).
bool Decode(xdr::Decoder& d, nfs_fh3* fh);
bool Decode(xdr::Decoder& d, sattr3* s);
bool Decode(xdr::Decoder& d, diropargs3* a);
void Encode(xdr::Encoder& e, const nfs_fh3& fh);
void Encode(xdr::Encoder& e, const fattr3& a);
void Encode(xdr::Encoder& e, const post_op_attr& a);
void Encode(xdr::Encoder& e, const wcc_data& w);
void Encode(xdr::Encoder& e, const post_op_fh3& fh);

bool Decode(xdr::Decoder& d, Void* v);
void Encode(xdr::Encoder& e, const Void& v);

bool Decode(xdr::Decoder& d, GETATTR3args* a);
void Encode(xdr::Encoder& e, const GETATTR3res& r);
bool Decode(xdr::Decoder& d, SETATTR3args* a);
void Encode(xdr::Encoder& e, const SETATTR3res& r);
bool Decode(xdr::Decoder& d, LOOKUP3args* a);
void Encode(xdr::Encoder& e, const LOOKUP3res& r);
bool Decode(xdr::Decoder& d, ACCESS3args* a);
void Encode(xdr::Encoder& e, const ACCESS3res& r);
bool Decode(xdr::Decoder& d, READLINK3args* a);
void Encode(xdr::Encoder& e, const READLINK3res& r);
bool Decode(xdr::Decoder& d, READ3args* a);
// READ reply pieces: the caller encodes status, then on NFS3_OK the head,
// then the data as an opaque (Encoder::ReserveOpaque/CommitOpaque). On error
// only status + post_op_attr are sent: EncodeReadFail.
void EncodeReadHead(xdr::Encoder& e, const READ3resok_head& head);
void EncodeReadFail(xdr::Encoder& e, nfsstat3 status, const post_op_attr& attrs);
bool Decode(xdr::Decoder& d, WRITE3args* a);  // data borrows from the call
void Encode(xdr::Encoder& e, const WRITE3res& r);
bool Decode(xdr::Decoder& d, CREATE3args* a);
void Encode(xdr::Encoder& e, const diropres3& r);  // CREATE/MKDIR/SYMLINK/MKNOD
bool Decode(xdr::Decoder& d, MKDIR3args* a);
bool Decode(xdr::Decoder& d, SYMLINK3args* a);
bool Decode(xdr::Decoder& d, MKNOD3args* a);
bool Decode(xdr::Decoder& d, REMOVE3args* a);  // also RMDIR
void Encode(xdr::Encoder& e, const REMOVE3res& r);  // also RMDIR
bool Decode(xdr::Decoder& d, RENAME3args* a);
void Encode(xdr::Encoder& e, const RENAME3res& r);
bool Decode(xdr::Decoder& d, LINK3args* a);
void Encode(xdr::Encoder& e, const LINK3res& r);
bool Decode(xdr::Decoder& d, READDIR3args* a);
void Encode(xdr::Encoder& e, const READDIR3res& r);
bool Decode(xdr::Decoder& d, READDIRPLUS3args* a);
void Encode(xdr::Encoder& e, const READDIRPLUS3res& r);
bool Decode(xdr::Decoder& d, FSSTAT3args* a);
void Encode(xdr::Encoder& e, const FSSTAT3res& r);
bool Decode(xdr::Decoder& d, FSINFO3args* a);
void Encode(xdr::Encoder& e, const FSINFO3res& r);
bool Decode(xdr::Decoder& d, PATHCONF3args* a);
void Encode(xdr::Encoder& e, const PATHCONF3res& r);
bool Decode(xdr::Decoder& d, COMMIT3args* a);
void Encode(xdr::Encoder& e, const COMMIT3res& r);

// Encoded sizes, for honouring READDIR count and READDIRPLUS dircount /
// maxcount in XDR bytes (RFC 1813 §3.3.16-17).
// Bytes one entry3 adds to a READDIR reply (value_follows + fileid + name +
// cookie).
size_t EncodedSize(const entry3& e);
// Bytes one entryplus3 adds to a READDIRPLUS reply (incl. attributes, handle).
size_t EncodedSize(const entryplus3& e);
// The part of an entryplus3 that counts against dircount: fileid, name, cookie.
size_t DircountSize(const entryplus3& e);
// Fixed overhead of a successful READDIR/READDIRPLUS reply besides entries:
// status, dir attributes, cookieverf, the list terminator and eof.
size_t ReaddirReplyOverhead(const post_op_attr& dir_attributes);

}  // namespace nfs3d::nfs3

#endif  // NFS3D_XDR_NFS3_CODEC_H_
