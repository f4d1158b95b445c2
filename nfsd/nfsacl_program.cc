#include "nfsd/nfsacl_program.h"

#include <algorithm>

#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "xdr/nfs3_codec.h"
#include "xdr/nfsacl_codec.h"

namespace nfs3d::nfsd {
namespace {

namespace n3 = nfs3d::nfs3;
namespace na = nfs3d::nfsacl;
using rpc::CallContext;

void Null(NfsServer&, const CallContext&, const n3::Void&, n3::Void*) {}

// The object's attributes for a failure reply (none if they cannot be had).
n3::post_op_attr CurrentAttrs(NfsServer& s, const CallAuth& auth) {
  absl::StatusOr<vfs::Attributes> a = s.backend().GetAttr(auth.cred, auth.handle);
  return a.ok() ? n3::post_op_attr(ToFattr3(*a)) : std::nullopt;
}

void Getacl(NfsServer& s, const CallContext& ctx, const na::GETACL3args& args,
            na::GETACL3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.fh, &auth)) != n3::NFS3_OK) return;
  if ((args.mask & ~na::kMaskAll) != 0) {
    res->status = n3::NFS3ERR_INVAL;
    return;
  }
  std::optional<vfs::Attributes> attrs;
  absl::StatusOr<vfs::AclPair> acls;  // no_acl: what a file system without ACLs shows
  if (auth.acl) {
    acls = s.backend().GetAcl(auth.cred, auth.handle, &attrs);
  } else if (absl::StatusOr<vfs::Attributes> a = s.backend().GetAttr(auth.cred, auth.handle);
             a.ok()) {
    attrs = *a;
    acls = vfs::AclPair{vfs::AclFromMode(a->mode), {}};
  } else {
    acls = a.status();
  }
  res->attr = ToPostOpAttr(attrs);
  if (!acls.ok() || !attrs) {
    res->status = StatusToNfsStat(acls.ok() ? absl::InternalError("no attributes") : acls.status());
    return;
  }
  res->mask = args.mask;
  if (args.mask & (na::kAcl | na::kAclCnt)) {
    res->access = ToWireAcl(acls->access, args.mask & na::kAcl, false, attrs->uid, attrs->gid);
  }
  if (args.mask & (na::kDfAcl | na::kDfAclCnt)) {
    res->default_acl =
        ToWireAcl(acls->default_acl, args.mask & na::kDfAcl, true, attrs->uid, attrs->gid);
  }
}

void Setacl(NfsServer& s, const CallContext& ctx, const na::SETACL3args& args,
            na::SETACL3res* res) {
  CallAuth auth;
  res->status = s.Authorize(ctx, args.fh, &auth);
  if (res->status == n3::NFS3ERR_ROFS) res->attr = CurrentAttrs(s, auth);
  if (res->status != n3::NFS3_OK) return;
  absl::StatusOr<vfs::Acl> access = FromWireAcl(args.access);
  absl::StatusOr<vfs::Acl> default_acl = FromWireAcl(args.default_acl);
  if (!auth.acl || !access.ok() || !default_acl.ok()) {
    res->status = auth.acl ? n3::NFS3ERR_INVAL : n3::NFS3ERR_NOTSUPP;
    res->attr = CurrentAttrs(s, auth);
    return;
  }
  std::optional<vfs::Attributes> attrs;
  absl::Status st =
      s.backend().SetAcl(auth.cred, auth.handle, (args.mask & na::kAcl) ? &*access : nullptr,
                         (args.mask & na::kDfAcl) ? &*default_acl : nullptr, &attrs);
  res->status = StatusToNfsStat(st);
  res->attr = ToPostOpAttr(attrs);
}

template <typename Args, typename Res,
          void (*Fn)(NfsServer&, const CallContext&, const Args&, Res*)>
constexpr rpc::ProcFn Typed() {
  return &rpc::TypedProc<NfsServer, Args, Res, Fn>;
}

// Linux retries NFS3ERR_JUKEBOX for its NFSv3 calls but not for its NFSACL
// calls (the retry loop is nfs3proc.c's own): `cp -p` got errno 528
// (EJUKEBOX) from a CephFS export while the cluster did not answer (the
// 30-min two-head soak). So a call the file system asks to try later gets
// no reply, and the client's RPC layer sends it again, as for MNT.
template <typename Args, typename Res,
          void (*Fn)(NfsServer&, const CallContext&, const Args&, Res*)>
rpc::ProcResult DropIfTryLater(NfsServer& s, const CallContext& ctx, const Args& args, Res* res) {
  Fn(s, ctx, args, res);
  return res->status == n3::NFS3ERR_JUKEBOX ? rpc::ProcResult::kDrop : rpc::ProcResult::kSuccess;
}
template <typename Args, typename Res,
          void (*Fn)(NfsServer&, const CallContext&, const Args&, Res*)>
constexpr rpc::ProcFn TypedOrDrop() {
  return &rpc::TypedProcOrDrop<NfsServer, Args, Res, DropIfTryLater<Args, Res, Fn>>;
}

// Re-running a SETACL sets the same ACLs again: nothing for the duplicate
// request cache to keep (knfsd does not cache it either).
// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr rpc::Procedure kProcedures[] = {
    {.number = na::kNull, .name = "NULL", .run = Typed<n3::Void, n3::Void, Null>()},
    {.number = na::kGetacl, .name = "GETACL",
     .run = TypedOrDrop<na::GETACL3args, na::GETACL3res, Getacl>(), .max_reply = na::kMaxGetaclReply},
    {.number = na::kSetacl, .name = "SETACL",
     .run = TypedOrDrop<na::SETACL3args, na::SETACL3res, Setacl>(), .modifies = true,
     .max_reply = 4 + 4 + 84},
};
// clang-format on
static_assert(std::size(kProcedures) == na::kNumProcs);

bool KnownTag(uint32_t tag) {
  switch (tag) {
    case vfs::kAclUserObj:
    case vfs::kAclUser:
    case vfs::kAclGroupObj:
    case vfs::kAclGroup:
    case vfs::kAclMask:
    case vfs::kAclOther:
      return true;
    default:
      return false;
  }
}

}  // namespace

nfsacl::acl ToWireAcl(const vfs::Acl& acl, bool with_entries, bool is_default, uint32_t uid,
                      uint32_t gid) {
  nfsacl::acl wire;
  if (acl.empty()) return wire;
  vfs::Acl sent = acl;
  if (sent.size() == 3) {
    // Solaris expects a mask in every ACL: the group's permissions.
    vfs::AclEntry mask = sent[1];
    mask.tag = vfs::kAclMask;
    sent.insert(sent.begin() + 2, mask);
  }
  wire.count = static_cast<uint32_t>(sent.size());
  if (!with_entries) return wire;
  const uint32_t flag = is_default ? na::kDefaultFlag : 0;
  for (const vfs::AclEntry& e : sent) {
    uint32_t id = 0;
    if (e.tag == vfs::kAclUserObj) id = uid;
    if (e.tag == vfs::kAclGroupObj) id = gid;
    if (e.tag == vfs::kAclUser || e.tag == vfs::kAclGroup) id = e.id;
    wire.entries.push_back({e.tag | flag, id, e.perm & 7});
  }
  return wire;
}

absl::StatusOr<vfs::Acl> FromWireAcl(const nfsacl::acl& wire) {
  vfs::Acl acl;
  for (const nfsacl::aclent& e : wire.entries) {
    vfs::AclEntry entry{e.type & ~na::kDefaultFlag, e.id, e.perm};
    if (!KnownTag(entry.tag)) return absl::InvalidArgumentError("unknown ACL entry type");
    if (entry.tag == vfs::kAclMask) entry.perm &= 7;  // Solaris sets extra bits
    if (entry.perm & ~7u) return absl::InvalidArgumentError("ACL permission beyond rwx");
    acl.push_back(entry);
  }
  vfs::CanonicalizeAcl(&acl);
  if (acl.size() == 4) {
    auto group = std::find_if(acl.begin(), acl.end(),
                              [](const vfs::AclEntry& e) { return e.tag == vfs::kAclGroupObj; });
    auto mask = std::find_if(acl.begin(), acl.end(),
                             [](const vfs::AclEntry& e) { return e.tag == vfs::kAclMask; });
    if (group != acl.end() && mask != acl.end() && group->perm == mask->perm) acl.erase(mask);
  }
  return acl;
}

rpc::Program NfsAclProgram(NfsServer* server) {
  return rpc::SingleVersionProgram(na::kProgram, "nfs_acl", na::kVersion, kProcedures, server);
}

}  // namespace nfs3d::nfsd
