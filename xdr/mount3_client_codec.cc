#include "xdr/mount3_client_codec.h"

namespace nfs3d::mount3 {

const char* StatusName(mountstat3 status) {
  switch (status) {
    case MNT3_OK: return "MNT3_OK";
    case MNT3ERR_PERM: return "MNT3ERR_PERM";
    case MNT3ERR_NOENT: return "MNT3ERR_NOENT";
    case MNT3ERR_IO: return "MNT3ERR_IO";
    case MNT3ERR_ACCES: return "MNT3ERR_ACCES";
    case MNT3ERR_NOTDIR: return "MNT3ERR_NOTDIR";
    case MNT3ERR_INVAL: return "MNT3ERR_INVAL";
    case MNT3ERR_NAMETOOLONG: return "MNT3ERR_NAMETOOLONG";
    case MNT3ERR_NOTSUPP: return "MNT3ERR_NOTSUPP";
    case MNT3ERR_SERVERFAULT: return "MNT3ERR_SERVERFAULT";
  }
  return "MNT3ERR_(unknown)";
}

}  // namespace nfs3d::mount3
