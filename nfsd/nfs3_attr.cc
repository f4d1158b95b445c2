#include "nfsd/nfs3_attr.h"

#include <algorithm>
#include <cstring>

namespace nfs3d::nfsd {

nfs3::ftype3 ToFtype3(vfs::FileType type) {
  switch (type) {
    case vfs::FileType::kRegular:
      return nfs3::NF3REG;
    case vfs::FileType::kDirectory:
      return nfs3::NF3DIR;
    case vfs::FileType::kBlock:
      return nfs3::NF3BLK;
    case vfs::FileType::kChar:
      return nfs3::NF3CHR;
    case vfs::FileType::kSymlink:
      return nfs3::NF3LNK;
    case vfs::FileType::kSocket:
      return nfs3::NF3SOCK;
    case vfs::FileType::kFifo:
      return nfs3::NF3FIFO;
  }
  return nfs3::NF3REG;
}

nfs3::nfstime3 ToNfsTime(const vfs::Time& t) { return {t.seconds, t.nseconds}; }
vfs::Time ToVfsTime(const nfs3::nfstime3& t) { return {t.seconds, t.nseconds}; }

nfs3::fattr3 ToFattr3(const vfs::Attributes& a) {
  nfs3::fattr3 f;
  f.type = ToFtype3(a.type);
  f.mode = a.mode & 07777;
  // A live file never reports nlink 0 (clients treat it as deleted).
  f.nlink = std::max<uint32_t>(a.nlink, 1);
  f.uid = a.uid;
  f.gid = a.gid;
  f.size = a.size;
  f.used = a.used;
  f.rdev = {a.rdev_major, a.rdev_minor};
  f.fsid = a.fsid;
  f.fileid = a.fileid;
  f.atime = ToNfsTime(a.atime);
  f.mtime = ToNfsTime(a.mtime);
  f.ctime = ToNfsTime(a.ctime);
  return f;
}

nfs3::post_op_attr ToPostOpAttr(const std::optional<vfs::Attributes>& a) {
  if (!a) return std::nullopt;
  return ToFattr3(*a);
}

nfs3::wcc_attr ToWccAttr(const vfs::WccAttr& a) {
  return {a.size, ToNfsTime(a.mtime), ToNfsTime(a.ctime)};
}

nfs3::wcc_data ToWccData(const vfs::Wcc& w) {
  nfs3::wcc_data d;
  if (w.before) d.before = ToWccAttr(*w.before);
  d.after = ToPostOpAttr(w.after);
  return d;
}

namespace {
vfs::SetTime ToSetTime(nfs3::time_how how) {
  switch (how) {
    case nfs3::SET_TO_SERVER_TIME:
      return vfs::SetTime::kServerTime;
    case nfs3::SET_TO_CLIENT_TIME:
      return vfs::SetTime::kClientTime;
    default:
      return vfs::SetTime::kDontChange;
  }
}
}  // namespace

vfs::SetAttributes ToSetAttributes(const nfs3::sattr3& s) {
  vfs::SetAttributes a;
  if (s.mode) a.mode = *s.mode & 07777;
  a.uid = s.uid;
  a.gid = s.gid;
  a.size = s.size;
  a.atime_how = ToSetTime(s.atime_how);
  a.atime = ToVfsTime(s.atime);
  a.mtime_how = ToSetTime(s.mtime_how);
  a.mtime = ToVfsTime(s.mtime);
  return a;
}

vfs::FileHandle ToVfsHandle(const nfs3::nfs_fh3& fh) {
  vfs::FileHandle out;
  out.len = static_cast<uint8_t>(std::min<size_t>(fh.len, vfs::kMaxHandleSize));
  std::memcpy(out.data, fh.data, out.len);
  return out;
}

nfs3::nfs_fh3 ToNfsHandle(const vfs::FileHandle& fh) {
  nfs3::nfs_fh3 out;
  out.len = static_cast<uint8_t>(std::min<size_t>(fh.len, nfs3::kFhSize));
  std::memcpy(out.data, fh.data, out.len);
  return out;
}

}  // namespace nfs3d::nfsd
