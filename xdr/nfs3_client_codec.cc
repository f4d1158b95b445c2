#include "xdr/nfs3_client_codec.h"

namespace nfs3d::nfs3 {

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
