#include "xdr/nfs3_codec.h"

#include <cstring>

namespace nfs3d::nfs3 {
namespace {

using xdr::Decoder;
using xdr::Encoder;
using xdr::PadTo4;

// filename3 is decoded with the path limit, not kMaxNameLen: a name of
// 256..4096 bytes is well-formed XDR, and RFC 1813 wants NFS3ERR_NAMETOOLONG
// for it, which only the procedure can answer. GARBAGE_ARGS is kept for
// lengths no sane client sends. Procedures must check name.size() > kMaxNameLen.
constexpr uint32_t kNameDecodeLimit = kMaxPathLen;

// Bytes of a post_op_attr / fattr3 / wcc_attr on the wire.
constexpr size_t kFattr3Size = 84;
constexpr size_t kBoolSize = 4;

// Reads an enum as u32 and rejects values outside [lo, hi].
template <typename E>
bool DecodeEnum(Decoder& d, uint32_t lo, uint32_t hi, E* out) {
  uint32_t v = d.U32();
  if (!d.ok() || v < lo || v > hi) {
    d.Fail();
    return false;
  }
  *out = static_cast<E>(v);
  return true;
}

void DecodeTime(Decoder& d, nfstime3* t) {
  t->seconds = d.U32();
  t->nseconds = d.U32();
}

// set_atime / set_mtime: union over time_how, nfstime3 only for SET_TO_CLIENT_TIME.
bool DecodeSetTime(Decoder& d, time_how* how, nfstime3* t) {
  if (!DecodeEnum(d, DONT_CHANGE, SET_TO_CLIENT_TIME, how)) return false;
  if (*how == SET_TO_CLIENT_TIME) DecodeTime(d, t);
  return d.ok();
}

bool DecodeName(Decoder& d, std::string_view* name) {
  *name = d.String(kNameDecodeLimit);
  return d.ok();
}

bool DecodeFixed(Decoder& d, uint8_t* out, size_t len) {
  absl::Span<const uint8_t> bytes = d.FixedOpaque(len);
  if (!d.ok()) return false;
  std::memcpy(out, bytes.data(), len);
  return true;
}

void EncodeTime(Encoder& e, const nfstime3& t) {
  e.U32(t.seconds);
  e.U32(t.nseconds);
}

void EncodeFixed(Encoder& e, const uint8_t* bytes, size_t len) {
  e.FixedOpaque(absl::Span<const uint8_t>(bytes, len));
}

void EncodePreOp(Encoder& e, const pre_op_attr& a) {
  e.Bool(a.has_value());
  if (!a) return;
  e.U64(a->size);
  EncodeTime(e, a->mtime);
  EncodeTime(e, a->ctime);
}

// The dirlist's per-entry head shared by entry3 and entryplus3.
void EncodeEntryHead(Encoder& e, uint64_t fileid, const std::string& name, uint64_t cookie) {
  e.Bool(true);  // value_follows
  e.U64(fileid);
  e.String(name);
  e.U64(cookie);
}

size_t PostOpAttrSize(const post_op_attr& a) { return kBoolSize + (a ? kFattr3Size : 0); }

size_t PostOpFhSize(const post_op_fh3& fh) {
  return kBoolSize + (fh ? 4 + PadTo4(fh->len) : 0);
}

}  // namespace

// ---- Building blocks.

bool Decode(Decoder& d, nfs_fh3* fh) {
  absl::Span<const uint8_t> bytes = d.Opaque(kFhSize);
  if (!d.ok()) return false;
  fh->len = static_cast<uint8_t>(bytes.size());
  std::memcpy(fh->data, bytes.data(), bytes.size());
  std::memset(fh->data + bytes.size(), 0, kFhSize - bytes.size());
  return true;
}

bool Decode(Decoder& d, sattr3* s) {
  *s = sattr3{};
  if (d.Bool()) s->mode = d.U32();
  if (d.Bool()) s->uid = d.U32();
  if (d.Bool()) s->gid = d.U32();
  if (d.Bool()) s->size = d.U64();
  if (!DecodeSetTime(d, &s->atime_how, &s->atime)) return false;
  if (!DecodeSetTime(d, &s->mtime_how, &s->mtime)) return false;
  return d.ok();
}

bool Decode(Decoder& d, diropargs3* a) {
  return Decode(d, &a->dir) && DecodeName(d, &a->name);
}

void Encode(Encoder& e, const nfs_fh3& fh) { e.Opaque(fh.bytes()); }

void Encode(Encoder& e, const fattr3& a) {
  e.U32(a.type);
  e.U32(a.mode);
  e.U32(a.nlink);
  e.U32(a.uid);
  e.U32(a.gid);
  e.U64(a.size);
  e.U64(a.used);
  e.U32(a.rdev.specdata1);
  e.U32(a.rdev.specdata2);
  e.U64(a.fsid);
  e.U64(a.fileid);
  EncodeTime(e, a.atime);
  EncodeTime(e, a.mtime);
  EncodeTime(e, a.ctime);
}

void Encode(Encoder& e, const post_op_attr& a) {
  e.Bool(a.has_value());
  if (a) Encode(e, *a);
}

void Encode(Encoder& e, const wcc_data& w) {
  EncodePreOp(e, w.before);
  Encode(e, w.after);
}

void Encode(Encoder& e, const post_op_fh3& fh) {
  e.Bool(fh.has_value());
  if (fh) Encode(e, *fh);
}

bool Decode(Decoder& d, Void* v) { return d.ok(); }
void Encode(Encoder& e, const Void& v) {}

// ---- Procedures.

bool Decode(Decoder& d, GETATTR3args* a) { return Decode(d, &a->object); }

void Encode(Encoder& e, const GETATTR3res& r) {
  e.U32(r.status);
  if (r.status == NFS3_OK) Encode(e, r.obj_attributes);
}

bool Decode(Decoder& d, SETATTR3args* a) {
  if (!Decode(d, &a->object) || !Decode(d, &a->new_attributes)) return false;
  a->guard.reset();
  if (d.Bool()) {
    nfstime3 t;
    DecodeTime(d, &t);
    a->guard = t;
  }
  return d.ok();
}

void Encode(Encoder& e, const SETATTR3res& r) {
  e.U32(r.status);
  Encode(e, r.obj_wcc);  // both arms
}

bool Decode(Decoder& d, LOOKUP3args* a) { return Decode(d, &a->what); }

void Encode(Encoder& e, const LOOKUP3res& r) {
  e.U32(r.status);
  if (r.status == NFS3_OK) {
    Encode(e, r.object);
    Encode(e, r.obj_attributes);
  }
  Encode(e, r.dir_attributes);
}

bool Decode(Decoder& d, ACCESS3args* a) {
  if (!Decode(d, &a->object)) return false;
  a->access = d.U32();
  return d.ok();
}

void Encode(Encoder& e, const ACCESS3res& r) {
  e.U32(r.status);
  Encode(e, r.obj_attributes);
  if (r.status == NFS3_OK) e.U32(r.access);
}

bool Decode(Decoder& d, READLINK3args* a) { return Decode(d, &a->symlink); }

void Encode(Encoder& e, const READLINK3res& r) {
  e.U32(r.status);
  Encode(e, r.symlink_attributes);
  if (r.status == NFS3_OK) e.String(r.data);
}

bool Decode(Decoder& d, READ3args* a) {
  if (!Decode(d, &a->file)) return false;
  a->offset = d.U64();
  a->count = d.U32();
  return d.ok();
}

void EncodeReadHead(Encoder& e, const READ3resok_head& head) {
  Encode(e, head.file_attributes);
  e.U32(head.count);
  e.Bool(head.eof);
}

void EncodeReadFail(Encoder& e, nfsstat3 status, const post_op_attr& attrs) {
  e.U32(status);
  Encode(e, attrs);
}

bool Decode(Decoder& d, WRITE3args* a) {
  if (!Decode(d, &a->file)) return false;
  a->offset = d.U64();
  a->count = d.U32();
  if (!DecodeEnum(d, UNSTABLE, FILE_SYNC, &a->stable)) return false;
  absl::Span<const uint8_t> data = d.Opaque(kMaxData);
  if (!d.ok()) return false;
  // count is the number of bytes in data (§3.3.7). Fewer data bytes than
  // count is a malformed call (knfsd agrees); surplus bytes are ignored so
  // the procedure can rely on data.size() == count.
  if (data.size() < a->count) {
    d.Fail();
    return false;
  }
  a->data = data.first(a->count);
  return true;
}

void Encode(Encoder& e, const WRITE3res& r) {
  e.U32(r.status);
  Encode(e, r.file_wcc);
  if (r.status != NFS3_OK) return;
  e.U32(r.count);
  e.U32(r.committed);
  EncodeFixed(e, r.verf, kWriteVerfSize);
}

bool Decode(Decoder& d, CREATE3args* a) {
  if (!Decode(d, &a->where)) return false;
  if (!DecodeEnum(d, UNCHECKED, EXCLUSIVE, &a->mode)) return false;
  if (a->mode == EXCLUSIVE) return DecodeFixed(d, a->verf, kCreateVerfSize);
  return Decode(d, &a->obj_attributes);
}

void Encode(Encoder& e, const diropres3& r) {
  e.U32(r.status);
  if (r.status == NFS3_OK) {
    Encode(e, r.obj);
    Encode(e, r.obj_attributes);
  }
  Encode(e, r.dir_wcc);
}

bool Decode(Decoder& d, MKDIR3args* a) {
  return Decode(d, &a->where) && Decode(d, &a->attributes);
}

bool Decode(Decoder& d, SYMLINK3args* a) {
  if (!Decode(d, &a->where) || !Decode(d, &a->symlink_attributes)) return false;
  a->symlink_data = d.String(kMaxPathLen);
  return d.ok();
}

bool Decode(Decoder& d, MKNOD3args* a) {
  if (!Decode(d, &a->where)) return false;
  if (!DecodeEnum(d, NF3REG, NF3FIFO, &a->type)) return false;
  switch (a->type) {
    case NF3CHR:
    case NF3BLK:
      if (!Decode(d, &a->dev_attributes)) return false;
      a->spec.specdata1 = d.U32();
      a->spec.specdata2 = d.U32();
      return d.ok();
    case NF3SOCK:
    case NF3FIFO:
      return Decode(d, &a->pipe_attributes);
    default:  // NF3REG, NF3DIR, NF3LNK: void arm (the procedure answers BADTYPE)
      return true;
  }
}

bool Decode(Decoder& d, REMOVE3args* a) { return Decode(d, &a->object); }

void Encode(Encoder& e, const REMOVE3res& r) {
  e.U32(r.status);
  Encode(e, r.dir_wcc);  // both arms
}

bool Decode(Decoder& d, RENAME3args* a) { return Decode(d, &a->from) && Decode(d, &a->to); }

void Encode(Encoder& e, const RENAME3res& r) {
  e.U32(r.status);
  Encode(e, r.fromdir_wcc);  // both arms
  Encode(e, r.todir_wcc);
}

bool Decode(Decoder& d, LINK3args* a) { return Decode(d, &a->file) && Decode(d, &a->link); }

void Encode(Encoder& e, const LINK3res& r) {
  e.U32(r.status);
  Encode(e, r.file_attributes);  // both arms
  Encode(e, r.linkdir_wcc);
}

bool Decode(Decoder& d, READDIR3args* a) {
  if (!Decode(d, &a->dir)) return false;
  a->cookie = d.U64();
  if (!DecodeFixed(d, a->cookieverf, kCookieVerfSize)) return false;
  a->count = d.U32();
  return d.ok();
}

void Encode(Encoder& e, const READDIR3res& r) {
  e.U32(r.status);
  Encode(e, r.dir_attributes);
  if (r.status != NFS3_OK) return;
  EncodeFixed(e, r.cookieverf, kCookieVerfSize);
  for (const entry3& entry : r.entries) EncodeEntryHead(e, entry.fileid, entry.name, entry.cookie);
  e.Bool(false);  // end of entry list
  e.Bool(r.eof);
}

bool Decode(Decoder& d, READDIRPLUS3args* a) {
  if (!Decode(d, &a->dir)) return false;
  a->cookie = d.U64();
  if (!DecodeFixed(d, a->cookieverf, kCookieVerfSize)) return false;
  a->dircount = d.U32();
  a->maxcount = d.U32();
  return d.ok();
}

void Encode(Encoder& e, const READDIRPLUS3res& r) {
  e.U32(r.status);
  Encode(e, r.dir_attributes);
  if (r.status != NFS3_OK) return;
  EncodeFixed(e, r.cookieverf, kCookieVerfSize);
  for (const entryplus3& entry : r.entries) {
    EncodeEntryHead(e, entry.fileid, entry.name, entry.cookie);
    Encode(e, entry.name_attributes);
    Encode(e, entry.name_handle);
  }
  e.Bool(false);  // end of entry list
  e.Bool(r.eof);
}

bool Decode(Decoder& d, FSSTAT3args* a) { return Decode(d, &a->fsroot); }

void Encode(Encoder& e, const FSSTAT3res& r) {
  e.U32(r.status);
  Encode(e, r.obj_attributes);
  if (r.status != NFS3_OK) return;
  e.U64(r.tbytes);
  e.U64(r.fbytes);
  e.U64(r.abytes);
  e.U64(r.tfiles);
  e.U64(r.ffiles);
  e.U64(r.afiles);
  e.U32(r.invarsec);
}

bool Decode(Decoder& d, FSINFO3args* a) { return Decode(d, &a->fsroot); }

void Encode(Encoder& e, const FSINFO3res& r) {
  e.U32(r.status);
  Encode(e, r.obj_attributes);
  if (r.status != NFS3_OK) return;
  e.U32(r.rtmax);
  e.U32(r.rtpref);
  e.U32(r.rtmult);
  e.U32(r.wtmax);
  e.U32(r.wtpref);
  e.U32(r.wtmult);
  e.U32(r.dtpref);
  e.U64(r.maxfilesize);
  EncodeTime(e, r.time_delta);
  e.U32(r.properties);
}

bool Decode(Decoder& d, PATHCONF3args* a) { return Decode(d, &a->object); }

void Encode(Encoder& e, const PATHCONF3res& r) {
  e.U32(r.status);
  Encode(e, r.obj_attributes);
  if (r.status != NFS3_OK) return;
  e.U32(r.linkmax);
  e.U32(r.name_max);
  e.Bool(r.no_trunc);
  e.Bool(r.chown_restricted);
  e.Bool(r.case_insensitive);
  e.Bool(r.case_preserving);
}

bool Decode(Decoder& d, COMMIT3args* a) {
  if (!Decode(d, &a->file)) return false;
  a->offset = d.U64();
  a->count = d.U32();
  return d.ok();
}

void Encode(Encoder& e, const COMMIT3res& r) {
  e.U32(r.status);
  Encode(e, r.file_wcc);
  if (r.status == NFS3_OK) EncodeFixed(e, r.verf, kWriteVerfSize);
}

// ---- Sizes. Each mirrors the encoder above byte for byte; the tests check
// that they agree.

size_t EncodedSize(const entry3& e) {
  return kBoolSize + 8 + 4 + PadTo4(e.name.size()) + 8;
}

size_t EncodedSize(const entryplus3& e) {
  return kBoolSize + DircountSize(e) + PostOpAttrSize(e.name_attributes) +
         PostOpFhSize(e.name_handle);
}

size_t DircountSize(const entryplus3& e) { return 8 + 4 + PadTo4(e.name.size()) + 8; }

size_t ReaddirReplyOverhead(const post_op_attr& dir_attributes) {
  // status + dir_attributes + cookieverf + list terminator + eof.
  return 4 + PostOpAttrSize(dir_attributes) + kCookieVerfSize + kBoolSize + kBoolSize;
}

}  // namespace nfs3d::nfs3
