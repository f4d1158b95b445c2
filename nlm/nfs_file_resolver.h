// How NLM file handles are checked and identified in nfs3d: an NLM fh is the
// NFSv3 handle of the file, so it goes through the NFS server's Authorize
// (authentic handle, known export, client listed, `secure` port) and the
// handle bytes name the file in the lock table (nfs3d's handles are stable
// and unique per file within an export).
#ifndef NFS3D_NLM_NFS_FILE_RESOLVER_H_
#define NFS3D_NLM_NFS_FILE_RESOLVER_H_

#include "nfsd/nfs_server.h"
#include "nlm/nlm_service.h"

namespace nfs3d::nlm {

// `nfs` must outlive the resolver.
FileResolver MakeNfsFileResolver(const nfsd::NfsServer* nfs);

// The NLM status for an Authorize result.
nlm4_stats NlmStatusFor(nfs3::nfsstat3 status);

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NFS_FILE_RESOLVER_H_
