// The NFSv3 types of nfs3_types.h described once (RFC 1813 §2.5, §3.3);
// Decode, Encode and SizeOf for server and client follow (xdr/describe.h).
// A result's description writes the arm its status selects.
#ifndef NFS3D_XDR_NFS3_CODEC_H_
#define NFS3D_XDR_NFS3_CODEC_H_

#include <cstddef>

#include "xdr/describe.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfs3 {

constexpr xdr::EnumRange XdrRange(ftype3) { return {NF3REG, NF3FIFO}; }
constexpr xdr::EnumRange XdrRange(stable_how) { return {UNSTABLE, FILE_SYNC}; }
constexpr xdr::EnumRange XdrRange(createmode3) { return {UNCHECKED, EXCLUSIVE}; }
constexpr xdr::EnumRange XdrRange(time_how) { return {DONT_CHANGE, SET_TO_CLIENT_TIME}; }

// filename3 is decoded with the path limit, not kMaxNameLen: a name of
// 256..4096 bytes is well-formed XDR, and RFC 1813 wants NFS3ERR_NAMETOOLONG
// for it, which only the procedure can answer. GARBAGE_ARGS is kept for
// lengths no sane client sends. Procedures must check name.size() > kMaxNameLen.
inline constexpr uint32_t kNameDecodeLimit = kMaxPathLen;
// A reply never carries more entries than fit in its bytes; this only bounds
// a hostile list before the buffer runs out.
inline constexpr size_t kMaxDirEntries = 1u << 20;

// ---- Building blocks.
NFS3D_XDR(nfs_fh3) { v(xdr::Inline(x.data, x.len)); }
NFS3D_XDR(nfstime3) { v(x.seconds, x.nseconds); }
NFS3D_XDR(specdata3) { v(x.specdata1, x.specdata2); }
NFS3D_XDR(fattr3) {
  v(x.type, x.mode, x.nlink, x.uid, x.gid, x.size, x.used, x.rdev, x.fsid, x.fileid, x.atime,
    x.mtime, x.ctime);
}
NFS3D_XDR(wcc_attr) { v(x.size, x.mtime, x.ctime); }
NFS3D_XDR(wcc_data) { v(x.before, x.after); }
NFS3D_XDR(sattr3) {
  v(x.mode, x.uid, x.gid, x.size, x.atime_how);
  if (x.atime_how == SET_TO_CLIENT_TIME) v(x.atime);
  v(x.mtime_how);
  if (x.mtime_how == SET_TO_CLIENT_TIME) v(x.mtime);
}
NFS3D_XDR(diropargs3) { v(x.dir, xdr::Bounded(x.name, kNameDecodeLimit)); }
NFS3D_XDR(Void) { v(); }

// ---- Arguments.
NFS3D_XDR(GETATTR3args) { v(x.object); }
NFS3D_XDR(SETATTR3args) { v(x.object, x.new_attributes, x.guard); }
NFS3D_XDR(LOOKUP3args) { v(x.what); }
NFS3D_XDR(ACCESS3args) { v(x.object, x.access); }
NFS3D_XDR(READLINK3args) { v(x.symlink); }
NFS3D_XDR(READ3args) { v(x.file, x.offset, x.count); }
// Everything of a WRITE's arguments before the data (EncodeWriteHeader).
template <typename V, typename S>
void WriteHead(V& v, S& x) {
  v(x.file, x.offset, x.count, x.stable);
}
NFS3D_XDR(WRITE3args) {
  WriteHead(v, x);
  v(xdr::Bounded(x.data, kMaxData));
  // count is the number of bytes in data (§3.3.7). Fewer data bytes than
  // count is a malformed call (knfsd agrees); surplus bytes are ignored so
  // the procedure can rely on data.size() == count.
  v.Check(x.data.size() >= x.count);
  if constexpr (V::kDecoding) x.data = x.data.first(std::min<size_t>(x.count, x.data.size()));
}
NFS3D_XDR(CREATE3args) {
  v(x.where, x.mode);
  if (x.mode == EXCLUSIVE) {
    v(x.verf);
  } else {
    v(x.obj_attributes);
  }
}
NFS3D_XDR(MKDIR3args) { v(x.where, x.attributes); }
NFS3D_XDR(SYMLINK3args) {
  v(x.where, x.symlink_attributes, xdr::Bounded(x.symlink_data, kMaxPathLen));
}
NFS3D_XDR(MKNOD3args) {
  v(x.where, x.type);
  if (x.type == NF3CHR || x.type == NF3BLK) v(x.dev_attributes, x.spec);
  // NF3REG, NF3DIR, NF3LNK: void arm (the procedure answers BADTYPE).
  if (x.type == NF3SOCK || x.type == NF3FIFO) v(x.pipe_attributes);
}
NFS3D_XDR(REMOVE3args) { v(x.object); }
NFS3D_XDR(RENAME3args) { v(x.from, x.to); }
NFS3D_XDR(LINK3args) { v(x.file, x.link); }
NFS3D_XDR(READDIR3args) { v(x.dir, x.cookie, x.cookieverf, x.count); }
NFS3D_XDR(READDIRPLUS3args) { v(x.dir, x.cookie, x.cookieverf, x.dircount, x.maxcount); }
NFS3D_XDR(FSSTAT3args) { v(x.fsroot); }
NFS3D_XDR(FSINFO3args) { v(x.fsroot); }
NFS3D_XDR(PATHCONF3args) { v(x.object); }
NFS3D_XDR(COMMIT3args) { v(x.file, x.offset, x.count); }

// ---- Results.
NFS3D_XDR(GETATTR3res) {
  v(x.status);
  if (x.status == NFS3_OK) v(x.obj_attributes);
}
NFS3D_XDR(SETATTR3res) { v(x.status, x.obj_wcc); }
NFS3D_XDR(LOOKUP3res) {
  v(x.status);
  if (x.status == NFS3_OK) v(x.object, x.obj_attributes);
  v(x.dir_attributes);
}
NFS3D_XDR(ACCESS3res) {
  v(x.status, x.obj_attributes);
  if (x.status == NFS3_OK) v(x.access);
}
NFS3D_XDR(READLINK3res) {
  v(x.status, x.symlink_attributes);
  if (x.status == NFS3_OK) v(xdr::Bounded(x.data, kMaxPathLen));
}
// The server sends READ in pieces (READ3resok_head, then the data straight
// from pread via Encoder::ReserveOpaque); a client decodes READ3res whole.
NFS3D_XDR(READ3resok_head) { v(x.file_attributes, x.count, x.eof); }
NFS3D_XDR(READ3res) {
  v(x.status, x.file_attributes);
  if (x.status != NFS3_OK) return;
  v(x.count, x.eof, xdr::Bounded(x.data, kMaxData));
  v.Check(x.data.size() == x.count);  // §3.3.6
}
NFS3D_XDR(WRITE3res) {
  v(x.status, x.file_wcc);
  if (x.status == NFS3_OK) v(x.count, x.committed, x.verf);
}
NFS3D_XDR(diropres3) {  // CREATE, MKDIR, SYMLINK, MKNOD
  v(x.status);
  if (x.status == NFS3_OK) v(x.obj, x.obj_attributes);
  v(x.dir_wcc);
}
NFS3D_XDR(REMOVE3res) { v(x.status, x.dir_wcc); }
NFS3D_XDR(RENAME3res) { v(x.status, x.fromdir_wcc, x.todir_wcc); }
NFS3D_XDR(LINK3res) { v(x.status, x.file_attributes, x.linkdir_wcc); }
// The part of a directory entry that counts against READDIRPLUS dircount.
template <typename V, typename S>
void EntryHead(V& v, S& x) {
  v(x.fileid, xdr::Bounded(x.name, kNameDecodeLimit), x.cookie);
}
NFS3D_XDR(entry3) { EntryHead(v, x); }
NFS3D_XDR(entryplus3) {
  EntryHead(v, x);
  v(x.name_attributes, x.name_handle);
}
NFS3D_XDR(READDIR3res, READDIRPLUS3res) {
  v(x.status, x.dir_attributes);
  if (x.status == NFS3_OK) v(x.cookieverf, xdr::Chain(x.entries, kMaxDirEntries), x.eof);
}
NFS3D_XDR(FSSTAT3res) {
  v(x.status, x.obj_attributes);
  if (x.status == NFS3_OK)
    v(x.tbytes, x.fbytes, x.abytes, x.tfiles, x.ffiles, x.afiles, x.invarsec);
}
NFS3D_XDR(FSINFO3res) {
  v(x.status, x.obj_attributes);
  if (x.status != NFS3_OK) return;
  v(x.rtmax, x.rtpref, x.rtmult, x.wtmax, x.wtpref, x.wtmult, x.dtpref, x.maxfilesize, x.time_delta,
    x.properties);
}
NFS3D_XDR(PATHCONF3res) {
  v(x.status, x.obj_attributes);
  if (x.status != NFS3_OK) return;
  v(x.linkmax, x.name_max, x.no_trunc, x.chown_restricted, x.case_insensitive, x.case_preserving);
}
NFS3D_XDR(COMMIT3res) {
  v(x.status, x.file_wcc);
  if (x.status == NFS3_OK) v(x.verf);
}

// ---- Hot-path pieces.
inline void EncodeReadHead(xdr::Encoder& e, const READ3resok_head& head) { Encode(e, head); }
void EncodeReadFail(xdr::Encoder& e, nfsstat3 status, const post_op_attr& attrs);
// A WRITE call's arguments up to its data, for clients that produce the data
// in place (Encoder::ReserveOpaque).
void EncodeWriteHeader(xdr::Encoder& e, const WRITE3args& a);
// The same part decoded (a.data stays empty), for the transports' looks at a
// WRITE record whose data has not been read yet.
bool DecodeWriteHead(xdr::Decoder& d, WRITE3args* a);

// Encoded sizes, for honouring READDIR count and READDIRPLUS dircount /
// maxcount in XDR bytes (RFC 1813 §3.3.16-17). An entry's bytes in a reply
// include its value_follows word.
size_t EncodedSize(const entry3& e);
size_t EncodedSize(const entryplus3& e);
// The part of an entryplus3 that counts against dircount: fileid, name, cookie.
size_t DircountSize(const entryplus3& e);
// Fixed overhead of a successful READDIR/READDIRPLUS reply besides entries:
// status, dir attributes, cookieverf, the list terminator and eof.
size_t ReaddirReplyOverhead(const post_op_attr& dir_attributes);

}  // namespace nfs3d::nfs3

#endif  // NFS3D_XDR_NFS3_CODEC_H_
