#include "nfsd/nfs3_errors.h"

#include <cerrno>

#include "common/rate_limited_log.h"
#include "vfs/vfs_error.h"

namespace nfs3d::nfsd {

using namespace nfs3;  // nfsstat3 values, named as in RFC 1813

nfsstat3 ErrnoToNfsStat(int err) {
  switch (err) {
    case 0:
      return NFS3_OK;
    case EPERM:
      return NFS3ERR_PERM;
    case ENOENT:
      return NFS3ERR_NOENT;
    case EIO:
      return NFS3ERR_IO;
    case ENXIO:
      return NFS3ERR_NXIO;
    case EACCES:
      return NFS3ERR_ACCES;
    case ETXTBSY:
      return NFS3ERR_ACCES;  // no NFSv3 equivalent; the file is busy
    case EEXIST:
      return NFS3ERR_EXIST;
    case EXDEV:
      return NFS3ERR_XDEV;
    case ENODEV:
      return NFS3ERR_NODEV;
    case ENOTDIR:
      return NFS3ERR_NOTDIR;
    case EISDIR:
      return NFS3ERR_ISDIR;
    case EINVAL:
      return NFS3ERR_INVAL;
    case ELOOP:
      return NFS3ERR_INVAL;  // e.g. O_NOFOLLOW open of a symlink: wrong type
    case EOVERFLOW:
      return NFS3ERR_INVAL;
    case EFBIG:
      return NFS3ERR_FBIG;
    case ENOSPC:
      return NFS3ERR_NOSPC;
    case EROFS:
      return NFS3ERR_ROFS;
    case EMLINK:
      return NFS3ERR_MLINK;
    case ENAMETOOLONG:
      return NFS3ERR_NAMETOOLONG;
    case ENOTEMPTY:
      return NFS3ERR_NOTEMPTY;
    case EDQUOT:
      return NFS3ERR_DQUOT;
    case ESTALE:
      return NFS3ERR_STALE;
    case EREMOTE:
      return NFS3ERR_REMOTE;
    case EOPNOTSUPP:
      return NFS3ERR_NOTSUPP;  // == ENOTSUP on Linux
    case ENOSYS:
      return NFS3ERR_NOTSUPP;
    // "Try again later": the client waits and retransmits.
    case EAGAIN:
      return NFS3ERR_JUKEBOX;  // == EWOULDBLOCK on Linux
    case EINTR:
      return NFS3ERR_JUKEBOX;
    case ENOMEM:
      return NFS3ERR_JUKEBOX;
    case EMFILE:
      return NFS3ERR_JUKEBOX;
    case ENFILE:
      return NFS3ERR_JUKEBOX;
    case ETIMEDOUT:
      return NFS3ERR_JUKEBOX;
    case vfs::kErrBadHandle:
      return NFS3ERR_BADHANDLE;
    case vfs::kErrNotSync:
      return NFS3ERR_NOT_SYNC;
    case vfs::kErrBadCookie:
      return NFS3ERR_BAD_COOKIE;
    case vfs::kErrTooSmall:
      return NFS3ERR_TOOSMALL;
    case vfs::kErrBadType:
      return NFS3ERR_BADTYPE;
    case vfs::kErrJukebox:
      return NFS3ERR_JUKEBOX;
    default:
      return err >= 10000 ? NFS3ERR_SERVERFAULT : NFS3ERR_IO;
  }
}

nfsstat3 StatusToNfsStat(const absl::Status& status) {
  const nfsstat3 stat = ErrnoToNfsStat(vfs::ErrnoOf(status));
  if (stat == NFS3ERR_IO || stat == NFS3ERR_SERVERFAULT) {
    // An application sees these as EIO even on a hard mount: say which
    // failure it was (a line a minute, whoever causes them).
    static auto* const failures = new log::RateLimitedLog(absl::Minutes(1));
    failures->Warningf("answered %s: %s", stat == NFS3ERR_IO ? "NFS3ERR_IO" : "NFS3ERR_SERVERFAULT",
                       status.ToString());
  }
  return stat;
}

}  // namespace nfs3d::nfsd
