// The remote quota program (RQUOTA 100011, versions 1 and 2), as knfsd sites
// get it from rpc.rquotad: `quota` on a client shows a user's usage and
// limits on an NFS mount. Quotas come from the exported file system
// (vfs::Backend::GetQuota). A caller may ask about itself (its uid, or a
// group it is in) and root about anyone, after the export's squashing;
// SETQUOTA is refused (Q_EPERM), as rpc.rquotad refuses it without -S.
#ifndef NFS3D_NFSD_RQUOTA_PROGRAM_H_
#define NFS3D_NFSD_RQUOTA_PROGRAM_H_

#include "nfsd/nfs_server.h"
#include "rpc/program.h"

namespace nfs3d::nfsd {

// The RQUOTA program served with `nfs`'s exports, client rules and backend;
// the returned Program refers to static tables and to `nfs`.
rpc::Program MakeRquotaProgram(const NfsServer* nfs);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_RQUOTA_PROGRAM_H_
