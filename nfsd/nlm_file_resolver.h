// The NFS side of file locking: an NLM file handle is the NFSv3 handle of the
// file, so it goes through the NFS server's Authorize (authentic handle,
// known export, client listed, `secure` port), and the handle bytes name the
// file in the lock table (nfs3d's handles are stable and unique per file
// within an export). nlm/ defines what it needs (nlm::FileResolver) and knows
// nothing of nfsd/; this file, on the NFS side, provides it.
#ifndef NFS3D_NFSD_NLM_FILE_RESOLVER_H_
#define NFS3D_NFSD_NLM_FILE_RESOLVER_H_

#include "nfsd/nfs_server.h"
#include "nlm/nlm_service.h"

namespace nfs3d::nfsd {

// `nfs` must outlive the resolver.
nlm::FileResolver MakeNlmFileResolver(const NfsServer* nfs);

// The NLM status for an Authorize result.
nlm::nlm4_stats NlmStatusFor(nfs3::nfsstat3 status);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NLM_FILE_RESOLVER_H_
