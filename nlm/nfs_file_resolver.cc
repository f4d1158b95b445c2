#include "nlm/nfs_file_resolver.h"

#include <cstring>

namespace nfs3d::nlm {

nlm4_stats NlmStatusFor(nfs3::nfsstat3 status) {
  switch (status) {
    case nfs3::NFS3_OK: return NLM4_GRANTED;
    case nfs3::NFS3ERR_STALE:
    case nfs3::NFS3ERR_BADHANDLE: return NLM4_STALE_FH;
    case nfs3::NFS3ERR_ROFS: return NLM4_ROFS;
    default: return NLM4_FAILED;  // not allowed to use the file at all
  }
}

FileResolver MakeNfsFileResolver(const nfsd::NfsServer* nfs) {
  return [nfs](const rpc::CallContext& ctx, const std::string& fh, std::string* key) {
    if (fh.empty() || fh.size() > nfs3::kFhSize) return NLM4_STALE_FH;
    nfs3::nfs_fh3 handle;
    handle.len = static_cast<uint8_t>(fh.size());
    std::memcpy(handle.data, fh.data(), fh.size());
    nfsd::CallAuth auth;
    nlm4_stats stat = NlmStatusFor(nfs->Authorize(ctx, handle, &auth, /*lock_request=*/true));
    if (stat == NLM4_GRANTED) *key = fh;
    return stat;
  };
}

}  // namespace nfs3d::nlm
