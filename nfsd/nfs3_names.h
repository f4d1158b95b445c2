// Checks on file names from the wire before they reach the backend: one
// component, no '/', no NUL, and "." / ".." only where they make sense.
#ifndef NFS3D_NFSD_NFS3_NAMES_H_
#define NFS3D_NFSD_NFS3_NAMES_H_

#include <string_view>

#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd {

enum class NameUse {
  kLookup,  // "." and ".." allowed
  kCreate,  // CREATE/MKDIR/SYMLINK/MKNOD/LINK target: dots exist already (EXIST)
  kRemove,  // REMOVE: ACCES (as knfsd)
  kRmdir,   // RMDIR: "." INVAL, ".." NOTEMPTY (as rmdir(2))
  kRename,  // RENAME source or target: dots INVAL
};

// NFS3_OK or the status to answer. Empty names and names with '/' or NUL are
// ACCES (as Linux lookup_one_len), over 255 bytes NAMETOOLONG.
nfs3::nfsstat3 CheckName(std::string_view name, NameUse use);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NFS3_NAMES_H_
