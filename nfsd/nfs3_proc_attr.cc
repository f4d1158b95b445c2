// NULL, GETATTR, SETATTR, ACCESS (RFC 1813 §3.3.0-3.3.2, §3.3.4).
#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "nfsd/nfs3_procs.h"

namespace nfs3d::nfsd::proc {

void Null(NfsServer&, const CallContext&, const n3::Void&, n3::Void*) {}

void Getattr(NfsServer& s, const CallContext& ctx, const n3::GETATTR3args& args,
             n3::GETATTR3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.object, &auth)) != n3::NFS3_OK) return;
  absl::StatusOr<vfs::Attributes> attrs = s.backend().GetAttr(auth.cred, auth.handle);
  if (!attrs.ok()) {
    res->status = StatusToNfsStat(attrs.status());
    return;
  }
  res->obj_attributes = ToFattr3(*attrs);
}

void Setattr(NfsServer& s, const CallContext& ctx, const n3::SETATTR3args& args,
             n3::SETATTR3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.object, &auth)) != n3::NFS3_OK) return;
  std::optional<vfs::Time> guard;
  if (args.guard) guard = ToVfsTime(*args.guard);
  vfs::Wcc wcc;
  absl::Status st = s.backend().SetAttr(auth.cred, auth.handle,
                                        ToSetAttributes(args.new_attributes), guard, &wcc);
  res->status = StatusToNfsStat(st);
  res->obj_wcc = ToWccData(wcc);
}

void Access(NfsServer& s, const CallContext& ctx, const n3::ACCESS3args& args,
            n3::ACCESS3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.object, &auth)) != n3::NFS3_OK) return;
  std::optional<vfs::Attributes> attrs;
  absl::StatusOr<vfs::AccessResult> r =
      s.backend().Access(auth.cred, auth.handle, args.access, &attrs);
  res->obj_attributes = ToPostOpAttr(attrs);
  if (!r.ok()) {
    res->status = StatusToNfsStat(r.status());
    return;
  }
  uint32_t granted = r->granted & args.access;
  // Nothing can be changed through a read-only export, whatever the mode bits.
  if (auth.read_only) granted &= ~(n3::ACCESS3_MODIFY | n3::ACCESS3_EXTEND | n3::ACCESS3_DELETE);
  res->access = granted;
}

}  // namespace nfs3d::nfsd::proc
