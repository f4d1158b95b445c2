// REMOVE, RMDIR, RENAME, LINK (RFC 1813 §3.3.12-3.3.15).
#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "nfsd/nfs3_names.h"
#include "nfsd/nfs3_procs.h"

namespace nfs3d::nfsd::proc {

void Remove(NfsServer& s, const CallContext& ctx, const n3::REMOVE3args& args,
            n3::REMOVE3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.object.dir, &auth)) != n3::NFS3_OK) return;
  if ((res->status = CheckName(args.object.name, NameUse::kRemove)) != n3::NFS3_OK) return;
  vfs::Wcc wcc;
  res->status = StatusToNfsStat(s.backend().Remove(auth.cred, auth.handle, args.object.name, &wcc));
  res->dir_wcc = ToWccData(wcc);
}

void Rmdir(NfsServer& s, const CallContext& ctx, const n3::RMDIR3args& args, n3::RMDIR3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.object.dir, &auth)) != n3::NFS3_OK) return;
  if ((res->status = CheckName(args.object.name, NameUse::kRmdir)) != n3::NFS3_OK) return;
  vfs::Wcc wcc;
  res->status = StatusToNfsStat(s.backend().Rmdir(auth.cred, auth.handle, args.object.name, &wcc));
  res->dir_wcc = ToWccData(wcc);
}

void Rename(NfsServer& s, const CallContext& ctx, const n3::RENAME3args& args,
            n3::RENAME3res* res) {
  CallAuth auth;
  vfs::FileHandle to_dir;
  if ((res->status = s.Authorize(ctx, args.from.dir, &auth)) != n3::NFS3_OK ||
      (res->status = s.AuthorizeSecond(args.to.dir, auth, &to_dir)) != n3::NFS3_OK ||
      (res->status = CheckName(args.from.name, NameUse::kRename)) != n3::NFS3_OK ||
      (res->status = CheckName(args.to.name, NameUse::kRename)) != n3::NFS3_OK) {
    return;
  }
  vfs::Wcc from_wcc, to_wcc;
  res->status = StatusToNfsStat(s.backend().Rename(auth.cred, auth.handle, args.from.name, to_dir,
                                                   args.to.name, &from_wcc, &to_wcc));
  res->fromdir_wcc = ToWccData(from_wcc);
  res->todir_wcc = ToWccData(to_wcc);
}

void Link(NfsServer& s, const CallContext& ctx, const n3::LINK3args& args, n3::LINK3res* res) {
  CallAuth auth;
  vfs::FileHandle dir;
  if ((res->status = s.Authorize(ctx, args.file, &auth)) != n3::NFS3_OK ||
      (res->status = s.AuthorizeSecond(args.link.dir, auth, &dir)) != n3::NFS3_OK ||
      (res->status = CheckName(args.link.name, NameUse::kCreate)) != n3::NFS3_OK) {
    return;
  }
  std::optional<vfs::Attributes> file_attrs;
  vfs::Wcc wcc;
  res->status = StatusToNfsStat(
      s.backend().Link(auth.cred, auth.handle, dir, args.link.name, &file_attrs, &wcc));
  res->file_attributes = ToPostOpAttr(file_attrs);
  res->linkdir_wcc = ToWccData(wcc);
}

}  // namespace nfs3d::nfsd::proc
