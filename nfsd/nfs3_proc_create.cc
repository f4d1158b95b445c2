// CREATE, MKDIR, SYMLINK, MKNOD (RFC 1813 §3.3.8-3.3.11): all answer diropres3.
#include <algorithm>

#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "nfsd/nfs3_names.h"
#include "nfsd/nfs3_procs.h"

namespace nfs3d::nfsd::proc {
namespace {

// Authorizes the parent directory and checks the new name.
bool Begin(NfsServer& s, const CallContext& ctx, const n3::diropargs3& where, CallAuth* auth,
           n3::diropres3* res) {
  res->status = s.Authorize(ctx, where.dir, auth);
  if (res->status == n3::NFS3_OK) res->status = CheckName(where.name, NameUse::kCreate);
  return res->status == n3::NFS3_OK;
}

void Finish(const absl::StatusOr<vfs::CreateResult>& r, const vfs::Wcc& dir_wcc,
            n3::diropres3* res) {
  res->dir_wcc = ToWccData(dir_wcc);  // sent on failure too
  if (!r.ok()) {
    res->status = StatusToNfsStat(r.status());
    return;
  }
  res->obj = ToNfsHandle(r->handle);
  res->obj_attributes = ToPostOpAttr(r->attributes);
}

}  // namespace

void Create(NfsServer& s, const CallContext& ctx, const n3::CREATE3args& args, n3::diropres3* res) {
  CallAuth auth;
  if (!Begin(s, ctx, args.where, &auth, res)) return;
  vfs::CreateMode mode = vfs::CreateMode::kUnchecked;
  vfs::SetAttributes attrs;
  vfs::Verifier verf{};
  switch (args.mode) {
    case n3::UNCHECKED:
      attrs = ToSetAttributes(args.obj_attributes);
      break;
    case n3::GUARDED:
      mode = vfs::CreateMode::kGuarded;
      attrs = ToSetAttributes(args.obj_attributes);
      break;
    case n3::EXCLUSIVE:
      // No attributes: the client sets them with SETATTR afterwards (§3.3.8).
      mode = vfs::CreateMode::kExclusive;
      std::copy(std::begin(args.verf), std::end(args.verf), verf.begin());
      break;
    default:
      res->status = n3::NFS3ERR_INVAL;
      return;
  }
  vfs::Wcc dir_wcc;
  Finish(s.backend().Create(auth.cred, auth.handle, args.where.name, mode, attrs, verf, &dir_wcc),
         dir_wcc, res);
}

void Mkdir(NfsServer& s, const CallContext& ctx, const n3::MKDIR3args& args, n3::diropres3* res) {
  CallAuth auth;
  if (!Begin(s, ctx, args.where, &auth, res)) return;
  vfs::Wcc dir_wcc;
  Finish(s.backend().Mkdir(auth.cred, auth.handle, args.where.name,
                           ToSetAttributes(args.attributes), &dir_wcc),
         dir_wcc, res);
}

void Symlink(NfsServer& s, const CallContext& ctx, const n3::SYMLINK3args& args,
             n3::diropres3* res) {
  CallAuth auth;
  if (!Begin(s, ctx, args.where, &auth, res)) return;
  if (args.symlink_data.empty()) {
    res->status = n3::NFS3ERR_INVAL;  // symlink(2) refuses an empty target (ENOENT)
    return;
  }
  vfs::Wcc dir_wcc;
  Finish(s.backend().Symlink(auth.cred, auth.handle, args.where.name, args.symlink_data,
                             ToSetAttributes(args.symlink_attributes), &dir_wcc),
         dir_wcc, res);
}

void Mknod(NfsServer& s, const CallContext& ctx, const n3::MKNOD3args& args, n3::diropres3* res) {
  CallAuth auth;
  if (!Begin(s, ctx, args.where, &auth, res)) return;
  vfs::FileType type;
  const n3::sattr3* sattr = &args.pipe_attributes;
  switch (args.type) {
    case n3::NF3CHR:
      type = vfs::FileType::kChar;
      sattr = &args.dev_attributes;
      break;
    case n3::NF3BLK:
      type = vfs::FileType::kBlock;
      sattr = &args.dev_attributes;
      break;
    case n3::NF3SOCK:
      type = vfs::FileType::kSocket;
      break;
    case n3::NF3FIFO:
      type = vfs::FileType::kFifo;
      break;
    default:
      // Regular files, directories and symlinks have their own procedures.
      res->status = n3::NFS3ERR_BADTYPE;
      return;
  }
  const bool device = type == vfs::FileType::kChar || type == vfs::FileType::kBlock;
  vfs::Wcc dir_wcc;
  Finish(s.backend().Mknod(auth.cred, auth.handle, args.where.name, type,
                           device ? args.spec.specdata1 : 0, device ? args.spec.specdata2 : 0,
                           ToSetAttributes(*sattr), &dir_wcc),
         dir_wcc, res);
}

}  // namespace nfs3d::nfsd::proc
