// The one mapping from errors to nfsstat3. Backend errors carry an errno (or a
// vfs pseudo-errno) as a Status payload; every procedure turns them into a
// status here and nowhere else.
#ifndef NFS3D_NFSD_NFS3_ERRORS_H_
#define NFS3D_NFSD_NFS3_ERRORS_H_

#include "absl/status/status.h"

#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd {

// errno / vfs pseudo-errno -> nfsstat3. 0 is NFS3_OK. An errno with no NFSv3
// meaning becomes NFS3ERR_IO (the file system failed, as far as the client
// can tell); an unknown pseudo-errno (>= 10000, a server bug) becomes
// NFS3ERR_SERVERFAULT.
nfs3::nfsstat3 ErrnoToNfsStat(int err);

// Status from the vfs layer -> nfsstat3 via vfs::ErrnoOf (a Status without an
// errno payload counts as EIO). NFS3ERR_IO and NFS3ERR_SERVERFAULT are also
// logged, with the status, at most once a minute.
nfs3::nfsstat3 StatusToNfsStat(const absl::Status& status);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NFS3_ERRORS_H_
