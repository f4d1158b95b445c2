// FSSTAT, FSINFO, PATHCONF (RFC 1813 §3.3.18-3.3.20).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "nfsd/nfs3_procs.h"

namespace nfs3d::nfsd::proc {
namespace {
// Directory listings beyond this gain little and cost a big reply buffer.
constexpr uint32_t kMaxDtpref = 64 * 1024;
}  // namespace

void Fsstat(NfsServer& s, const CallContext& ctx, const n3::FSSTAT3args& args,
            n3::FSSTAT3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.fsroot, &auth)) != n3::NFS3_OK) return;
  std::optional<vfs::Attributes> attrs;
  absl::StatusOr<vfs::FsStat> st = s.backend().StatFs(auth.cred, auth.handle, &attrs);
  res->obj_attributes = ToPostOpAttr(attrs);
  if (!st.ok()) {
    res->status = StatusToNfsStat(st.status());
    return;
  }
  res->tbytes = st->total_bytes;
  res->fbytes = st->free_bytes;
  res->abytes = st->avail_bytes;
  res->tfiles = st->total_files;
  res->ffiles = st->free_files;
  res->afiles = st->avail_files;
  res->invarsec = 0;  // the file system may change at any time
}

// Sizes come from the transport that carried this call: a client mounting
// over UDP and one over TCP get different answers (as from knfsd).
void Fsinfo(NfsServer& s, const CallContext& ctx, const n3::FSINFO3args& args,
            n3::FSINFO3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.fsroot, &auth)) != n3::NFS3_OK) return;
  absl::StatusOr<vfs::Attributes> attrs = s.backend().GetAttr(auth.cred, auth.handle);
  if (!attrs.ok()) {
    res->status = StatusToNfsStat(attrs.status());
    return;
  }
  res->obj_attributes = ToFattr3(*attrs);
  const conf::TransferSizes sizes = s.SizesFor(ctx);
  res->rtmax = sizes.rsize_max;
  res->rtpref = sizes.rsize_pref;
  res->rtmult = kTransferMultiple;
  res->wtmax = sizes.wsize_max;
  res->wtpref = sizes.wsize_pref;
  res->wtmult = kTransferMultiple;
  res->dtpref = std::min(sizes.rsize_pref, kMaxDtpref);
  // Offsets are off_t on the server.
  res->maxfilesize = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  res->time_delta = {0, 1};  // nanosecond timestamps
  res->properties = n3::FSF3_LINK | n3::FSF3_SYMLINK | n3::FSF3_HOMOGENEOUS | n3::FSF3_CANSETTIME;
}

void Pathconf(NfsServer& s, const CallContext& ctx, const n3::PATHCONF3args& args,
              n3::PATHCONF3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.object, &auth)) != n3::NFS3_OK) return;
  std::optional<vfs::Attributes> attrs;
  absl::StatusOr<vfs::PathConf> pc = s.backend().GetPathConf(auth.cred, auth.handle, &attrs);
  res->obj_attributes = ToPostOpAttr(attrs);
  if (!pc.ok()) {
    res->status = StatusToNfsStat(pc.status());
    return;
  }
  res->linkmax = pc->link_max;
  res->name_max = pc->name_max;
  res->no_trunc = true;          // long names are refused, never truncated
  res->chown_restricted = true;  // Linux: only root may chown
  res->case_insensitive = false;
  res->case_preserving = true;
}

}  // namespace nfs3d::nfsd::proc
