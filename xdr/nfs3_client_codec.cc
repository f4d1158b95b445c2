#include "xdr/nfs3_client_codec.h"

#include <cstring>
#include <string>

namespace nfs3d::nfs3 {
namespace {

using xdr::Decoder;
using xdr::Encoder;

// A reply never carries more entries than fit in its bytes; this only bounds
// a hostile list before the buffer runs out.
constexpr size_t kMaxDirEntries = 1u << 20;

nfsstat3 DecodeStatus(Decoder& d) { return static_cast<nfsstat3>(d.U32()); }

void EncodeTime(Encoder& e, const nfstime3& t) {
  e.U32(t.seconds);
  e.U32(t.nseconds);
}

void DecodeTime(Decoder& d, nfstime3* t) {
  t->seconds = d.U32();
  t->nseconds = d.U32();
}

void EncodeSetTime(Encoder& e, time_how how, const nfstime3& t) {
  e.U32(how);
  if (how == SET_TO_CLIENT_TIME) EncodeTime(e, t);
}

void EncodeFixed(Encoder& e, const uint8_t* bytes, size_t len) {
  e.FixedOpaque(absl::Span<const uint8_t>(bytes, len));
}

bool DecodeFixed(Decoder& d, uint8_t* out, size_t len) {
  absl::Span<const uint8_t> bytes = d.FixedOpaque(len);
  if (!d.ok()) return false;
  std::memcpy(out, bytes.data(), len);
  return true;
}

template <typename T>
void EncodeOptional(Encoder& e, const std::optional<T>& v) {
  e.Bool(v.has_value());
  if (v) e.U32(*v);
}

std::string DecodeName(Decoder& d) {
  std::string_view s = d.String(kMaxPathLen);
  return std::string(s);
}

}  // namespace

// ---- Building blocks.

void Encode(Encoder& e, const sattr3& s) {
  EncodeOptional(e, s.mode);
  EncodeOptional(e, s.uid);
  EncodeOptional(e, s.gid);
  e.Bool(s.size.has_value());
  if (s.size) e.U64(*s.size);
  EncodeSetTime(e, s.atime_how, s.atime);
  EncodeSetTime(e, s.mtime_how, s.mtime);
}

void Encode(Encoder& e, const diropargs3& a) {
  Encode(e, a.dir);
  e.String(a.name);
}

bool Decode(Decoder& d, fattr3* a) {
  uint32_t type = d.U32();
  if (type < NF3REG || type > NF3FIFO) d.Fail();
  a->type = static_cast<ftype3>(type);
  a->mode = d.U32();
  a->nlink = d.U32();
  a->uid = d.U32();
  a->gid = d.U32();
  a->size = d.U64();
  a->used = d.U64();
  a->rdev.specdata1 = d.U32();
  a->rdev.specdata2 = d.U32();
  a->fsid = d.U64();
  a->fileid = d.U64();
  DecodeTime(d, &a->atime);
  DecodeTime(d, &a->mtime);
  DecodeTime(d, &a->ctime);
  return d.ok();
}

bool Decode(Decoder& d, post_op_attr* a) {
  a->reset();
  if (!d.Bool()) return d.ok();
  return Decode(d, &a->emplace());
}

bool Decode(Decoder& d, pre_op_attr* a) {
  a->reset();
  if (!d.Bool()) return d.ok();
  wcc_attr& w = a->emplace();
  w.size = d.U64();
  DecodeTime(d, &w.mtime);
  DecodeTime(d, &w.ctime);
  return d.ok();
}

bool Decode(Decoder& d, wcc_data* w) { return Decode(d, &w->before) && Decode(d, &w->after); }

bool Decode(Decoder& d, post_op_fh3* fh) {
  fh->reset();
  if (!d.Bool()) return d.ok();
  return Decode(d, &fh->emplace());
}

// ---- Arguments.

void Encode(Encoder& e, const GETATTR3args& a) { Encode(e, a.object); }

void Encode(Encoder& e, const SETATTR3args& a) {
  Encode(e, a.object);
  Encode(e, a.new_attributes);
  e.Bool(a.guard.has_value());
  if (a.guard) EncodeTime(e, *a.guard);
}

void Encode(Encoder& e, const LOOKUP3args& a) { Encode(e, a.what); }

void Encode(Encoder& e, const ACCESS3args& a) {
  Encode(e, a.object);
  e.U32(a.access);
}

void Encode(Encoder& e, const READLINK3args& a) { Encode(e, a.symlink); }

void Encode(Encoder& e, const READ3args& a) {
  Encode(e, a.file);
  e.U64(a.offset);
  e.U32(a.count);
}

void EncodeWriteHeader(Encoder& e, const WRITE3args& a) {
  Encode(e, a.file);
  e.U64(a.offset);
  e.U32(a.count);
  e.U32(a.stable);
}

void Encode(Encoder& e, const WRITE3args& a) {
  EncodeWriteHeader(e, a);
  e.Opaque(a.data);
}

void Encode(Encoder& e, const CREATE3args& a) {
  Encode(e, a.where);
  e.U32(a.mode);
  if (a.mode == EXCLUSIVE) {
    EncodeFixed(e, a.verf, kCreateVerfSize);
  } else {
    Encode(e, a.obj_attributes);
  }
}

void Encode(Encoder& e, const MKDIR3args& a) {
  Encode(e, a.where);
  Encode(e, a.attributes);
}

void Encode(Encoder& e, const SYMLINK3args& a) {
  Encode(e, a.where);
  Encode(e, a.symlink_attributes);
  e.String(a.symlink_data);
}

void Encode(Encoder& e, const MKNOD3args& a) {
  Encode(e, a.where);
  e.U32(a.type);
  switch (a.type) {
    case NF3CHR:
    case NF3BLK:
      Encode(e, a.dev_attributes);
      e.U32(a.spec.specdata1);
      e.U32(a.spec.specdata2);
      break;
    case NF3SOCK:
    case NF3FIFO:
      Encode(e, a.pipe_attributes);
      break;
    default:
      break;
  }
}

void Encode(Encoder& e, const REMOVE3args& a) { Encode(e, a.object); }

void Encode(Encoder& e, const RENAME3args& a) {
  Encode(e, a.from);
  Encode(e, a.to);
}

void Encode(Encoder& e, const LINK3args& a) {
  Encode(e, a.file);
  Encode(e, a.link);
}

void Encode(Encoder& e, const READDIR3args& a) {
  Encode(e, a.dir);
  e.U64(a.cookie);
  EncodeFixed(e, a.cookieverf, kCookieVerfSize);
  e.U32(a.count);
}

void Encode(Encoder& e, const READDIRPLUS3args& a) {
  Encode(e, a.dir);
  e.U64(a.cookie);
  EncodeFixed(e, a.cookieverf, kCookieVerfSize);
  e.U32(a.dircount);
  e.U32(a.maxcount);
}

void Encode(Encoder& e, const FSSTAT3args& a) { Encode(e, a.fsroot); }
void Encode(Encoder& e, const FSINFO3args& a) { Encode(e, a.fsroot); }
void Encode(Encoder& e, const PATHCONF3args& a) { Encode(e, a.object); }

void Encode(Encoder& e, const COMMIT3args& a) {
  Encode(e, a.file);
  e.U64(a.offset);
  e.U32(a.count);
}

// ---- Results.

bool Decode(Decoder& d, GETATTR3res* r) {
  r->status = DecodeStatus(d);
  if (r->status == NFS3_OK) return Decode(d, &r->obj_attributes);
  return d.ok();
}

bool Decode(Decoder& d, SETATTR3res* r) {
  r->status = DecodeStatus(d);
  return Decode(d, &r->obj_wcc);
}

bool Decode(Decoder& d, LOOKUP3res* r) {
  r->status = DecodeStatus(d);
  if (r->status == NFS3_OK && (!Decode(d, &r->object) || !Decode(d, &r->obj_attributes))) {
    return false;
  }
  return Decode(d, &r->dir_attributes);
}

bool Decode(Decoder& d, ACCESS3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->obj_attributes)) return false;
  if (r->status == NFS3_OK) r->access = d.U32();
  return d.ok();
}

bool Decode(Decoder& d, READLINK3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->symlink_attributes)) return false;
  if (r->status == NFS3_OK) r->data = DecodeName(d);
  return d.ok();
}

bool Decode(Decoder& d, READ3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->file_attributes)) return false;
  if (r->status != NFS3_OK) return true;
  r->count = d.U32();
  r->eof = d.Bool();
  r->data = d.Opaque(kMaxData);
  // count and the opaque's length must agree (§3.3.6).
  if (d.ok() && r->data.size() != r->count) d.Fail();
  return d.ok();
}

bool Decode(Decoder& d, WRITE3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->file_wcc)) return false;
  if (r->status != NFS3_OK) return true;
  r->count = d.U32();
  uint32_t committed = d.U32();
  if (committed > FILE_SYNC) d.Fail();
  r->committed = static_cast<stable_how>(committed);
  return DecodeFixed(d, r->verf, kWriteVerfSize);
}

bool Decode(Decoder& d, diropres3* r) {
  r->status = DecodeStatus(d);
  if (r->status == NFS3_OK && (!Decode(d, &r->obj) || !Decode(d, &r->obj_attributes))) {
    return false;
  }
  return Decode(d, &r->dir_wcc);
}

bool Decode(Decoder& d, REMOVE3res* r) {
  r->status = DecodeStatus(d);
  return Decode(d, &r->dir_wcc);
}

bool Decode(Decoder& d, RENAME3res* r) {
  r->status = DecodeStatus(d);
  return Decode(d, &r->fromdir_wcc) && Decode(d, &r->todir_wcc);
}

bool Decode(Decoder& d, LINK3res* r) {
  r->status = DecodeStatus(d);
  return Decode(d, &r->file_attributes) && Decode(d, &r->linkdir_wcc);
}

bool Decode(Decoder& d, READDIR3res* r) {
  r->status = DecodeStatus(d);
  r->entries.clear();
  if (!Decode(d, &r->dir_attributes)) return false;
  if (r->status != NFS3_OK) return true;
  if (!DecodeFixed(d, r->cookieverf, kCookieVerfSize)) return false;
  while (d.Bool()) {
    if (r->entries.size() >= kMaxDirEntries) d.Fail();
    if (!d.ok()) return false;
    entry3& entry = r->entries.emplace_back();
    entry.fileid = d.U64();
    entry.name = DecodeName(d);
    entry.cookie = d.U64();
  }
  r->eof = d.Bool();
  return d.ok();
}

bool Decode(Decoder& d, READDIRPLUS3res* r) {
  r->status = DecodeStatus(d);
  r->entries.clear();
  if (!Decode(d, &r->dir_attributes)) return false;
  if (r->status != NFS3_OK) return true;
  if (!DecodeFixed(d, r->cookieverf, kCookieVerfSize)) return false;
  while (d.Bool()) {
    if (r->entries.size() >= kMaxDirEntries) d.Fail();
    if (!d.ok()) return false;
    entryplus3& entry = r->entries.emplace_back();
    entry.fileid = d.U64();
    entry.name = DecodeName(d);
    entry.cookie = d.U64();
    if (!Decode(d, &entry.name_attributes) || !Decode(d, &entry.name_handle)) return false;
  }
  r->eof = d.Bool();
  return d.ok();
}

bool Decode(Decoder& d, FSSTAT3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->obj_attributes)) return false;
  if (r->status != NFS3_OK) return true;
  r->tbytes = d.U64();
  r->fbytes = d.U64();
  r->abytes = d.U64();
  r->tfiles = d.U64();
  r->ffiles = d.U64();
  r->afiles = d.U64();
  r->invarsec = d.U32();
  return d.ok();
}

bool Decode(Decoder& d, FSINFO3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->obj_attributes)) return false;
  if (r->status != NFS3_OK) return true;
  r->rtmax = d.U32();
  r->rtpref = d.U32();
  r->rtmult = d.U32();
  r->wtmax = d.U32();
  r->wtpref = d.U32();
  r->wtmult = d.U32();
  r->dtpref = d.U32();
  r->maxfilesize = d.U64();
  DecodeTime(d, &r->time_delta);
  r->properties = d.U32();
  return d.ok();
}

bool Decode(Decoder& d, PATHCONF3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->obj_attributes)) return false;
  if (r->status != NFS3_OK) return true;
  r->linkmax = d.U32();
  r->name_max = d.U32();
  r->no_trunc = d.Bool();
  r->chown_restricted = d.Bool();
  r->case_insensitive = d.Bool();
  r->case_preserving = d.Bool();
  return d.ok();
}

bool Decode(Decoder& d, COMMIT3res* r) {
  r->status = DecodeStatus(d);
  if (!Decode(d, &r->file_wcc)) return false;
  if (r->status != NFS3_OK) return true;
  return DecodeFixed(d, r->verf, kWriteVerfSize);
}

const char* StatusName(nfsstat3 status) {
  switch (status) {
    case NFS3_OK: return "NFS3_OK";
    case NFS3ERR_PERM: return "NFS3ERR_PERM";
    case NFS3ERR_NOENT: return "NFS3ERR_NOENT";
    case NFS3ERR_IO: return "NFS3ERR_IO";
    case NFS3ERR_NXIO: return "NFS3ERR_NXIO";
    case NFS3ERR_ACCES: return "NFS3ERR_ACCES";
    case NFS3ERR_EXIST: return "NFS3ERR_EXIST";
    case NFS3ERR_XDEV: return "NFS3ERR_XDEV";
    case NFS3ERR_NODEV: return "NFS3ERR_NODEV";
    case NFS3ERR_NOTDIR: return "NFS3ERR_NOTDIR";
    case NFS3ERR_ISDIR: return "NFS3ERR_ISDIR";
    case NFS3ERR_INVAL: return "NFS3ERR_INVAL";
    case NFS3ERR_FBIG: return "NFS3ERR_FBIG";
    case NFS3ERR_NOSPC: return "NFS3ERR_NOSPC";
    case NFS3ERR_ROFS: return "NFS3ERR_ROFS";
    case NFS3ERR_MLINK: return "NFS3ERR_MLINK";
    case NFS3ERR_NAMETOOLONG: return "NFS3ERR_NAMETOOLONG";
    case NFS3ERR_NOTEMPTY: return "NFS3ERR_NOTEMPTY";
    case NFS3ERR_DQUOT: return "NFS3ERR_DQUOT";
    case NFS3ERR_STALE: return "NFS3ERR_STALE";
    case NFS3ERR_REMOTE: return "NFS3ERR_REMOTE";
    case NFS3ERR_BADHANDLE: return "NFS3ERR_BADHANDLE";
    case NFS3ERR_NOT_SYNC: return "NFS3ERR_NOT_SYNC";
    case NFS3ERR_BAD_COOKIE: return "NFS3ERR_BAD_COOKIE";
    case NFS3ERR_NOTSUPP: return "NFS3ERR_NOTSUPP";
    case NFS3ERR_TOOSMALL: return "NFS3ERR_TOOSMALL";
    case NFS3ERR_SERVERFAULT: return "NFS3ERR_SERVERFAULT";
    case NFS3ERR_BADTYPE: return "NFS3ERR_BADTYPE";
    case NFS3ERR_JUKEBOX: return "NFS3ERR_JUKEBOX";
  }
  return "NFS3ERR_(unknown)";
}

const char* ProcName(uint32_t proc) {
  static constexpr const char* kNames[kNumProcs] = {
      "NULL",   "GETATTR", "SETATTR", "LOOKUP", "ACCESS",  "READLINK", "READ",    "WRITE",
      "CREATE", "MKDIR",   "SYMLINK", "MKNOD",  "REMOVE",  "RMDIR",    "RENAME",  "LINK",
      "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT"};
  return proc < kNumProcs ? kNames[proc] : "UNKNOWN";
}

}  // namespace nfs3d::nfs3
