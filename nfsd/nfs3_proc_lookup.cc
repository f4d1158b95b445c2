// LOOKUP, READLINK (RFC 1813 §3.3.3, §3.3.5).
#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "nfsd/nfs3_names.h"
#include "nfsd/nfs3_procs.h"

namespace nfs3d::nfsd::proc {

void Lookup(NfsServer& s, const CallContext& ctx, const n3::LOOKUP3args& args,
            n3::LOOKUP3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.what.dir, &auth)) != n3::NFS3_OK) return;
  if ((res->status = CheckName(args.what.name, NameUse::kLookup)) != n3::NFS3_OK) return;
  std::optional<vfs::Attributes> dir_attrs;
  absl::StatusOr<vfs::LookupResult> r =
      s.backend().Lookup(auth.cred, auth.handle, args.what.name, &dir_attrs);
  res->dir_attributes = ToPostOpAttr(dir_attrs);  // sent on failure too
  if (!r.ok()) {
    res->status = StatusToNfsStat(r.status());
    return;
  }
  res->object = ToNfsHandle(r->handle);
  res->obj_attributes = ToFattr3(r->attributes);
}

void Readlink(NfsServer& s, const CallContext& ctx, const n3::READLINK3args& args,
              n3::READLINK3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.symlink, &auth)) != n3::NFS3_OK) return;
  std::optional<vfs::Attributes> attrs;
  absl::StatusOr<std::string> target = s.backend().Readlink(auth.cred, auth.handle, &attrs);
  res->symlink_attributes = ToPostOpAttr(attrs);
  if (!target.ok()) {
    res->status = StatusToNfsStat(target.status());
    return;
  }
  res->data = std::move(*target);
}

}  // namespace nfs3d::nfsd::proc
