#include "nfsd/nlm_file_resolver.h"

#include <cstring>

namespace nfs3d::nfsd {

nlm::nlm4_stats NlmStatusFor(nfs3::nfsstat3 status) {
  switch (status) {
    case nfs3::NFS3_OK:
      return nlm::NLM4_GRANTED;
    case nfs3::NFS3ERR_STALE:
    case nfs3::NFS3ERR_BADHANDLE:
      return nlm::NLM4_STALE_FH;
    case nfs3::NFS3ERR_ROFS:
      return nlm::NLM4_ROFS;
    default:
      return nlm::NLM4_FAILED;  // not allowed to use the file at all
  }
}

nlm::FileResolver MakeNlmFileResolver(const NfsServer* nfs) {
  return [nfs](const rpc::CallContext& ctx, const std::string& fh, std::string* key) {
    if (fh.empty() || fh.size() > nfs3::kFhSize) return nlm::NLM4_STALE_FH;
    nfs3::nfs_fh3 handle;
    handle.len = static_cast<uint8_t>(fh.size());
    std::memcpy(handle.data, fh.data(), fh.size());
    CallAuth auth;
    nlm::nlm4_stats stat = NlmStatusFor(nfs->Authorize(ctx, handle, &auth, /*lock_request=*/true));
    if (stat == nlm::NLM4_GRANTED) *key = fh;
    return stat;
  };
}

}  // namespace nfs3d::nfsd
