#include "nfsd/mount_program.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "common/auth_flavor.h"
#include "common/log.h"
#include "common/rate_limited_log.h"
#include "vfs/mount_point.h"
#include "vfs/vfs_error.h"
#include "xdr/mount3_codec.h"
#include "xdr/nfs3_codec.h"

namespace nfs3d::nfsd {
namespace {

using mount3::mountstat3;

// The peer's numeric address, the "hostname" MOUNT records and reports.
std::string PeerName(const rpc::CallContext& ctx) {
  std::optional<conf::IpAddress> ip =
      conf::IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&ctx.transport->peer));
  return ip ? ip->ToString() : "unknown";
}

// The export that holds `path`: the one with that exact path, else the one
// with the longest path that is a parent of it (knfsd lets clients mount a
// sub-directory of an export). *rest gets the remaining components.
const conf::Export* FindExportFor(const conf::ExportTable& table, const std::string& path,
                                  std::string* rest) {
  const conf::Export* best = nullptr;
  for (const conf::Export& exp : table.exports) {
    const std::string& p = exp.path;
    bool holds = path == p || (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
                               (p == "/" || path[p.size()] == '/'));
    if (holds && (best == nullptr || p.size() > best->path.size())) best = &exp;
  }
  if (best != nullptr) *rest = path.substr(std::min(path.size(), best->path.size()));
  return best;
}

// What any host can make MNT log again and again (a refused mount retried,
// a mount retransmitted all through an outage): a line per kind per minute.
log::RateLimitedLog& RefusedMountLog() {
  static auto* const refused = new log::RateLimitedLog(absl::Minutes(1));
  return *refused;
}
log::RateLimitedLog& FailedMountLog() {
  static auto* const failed = new log::RateLimitedLog(absl::Minutes(1));
  return *failed;
}

// Never sent: the file system asked to try later (kErrJukebox), and MNT,
// which has no such status, drops the call instead (TypedProcOrDrop).
constexpr mountstat3 kMntTryLater = static_cast<mountstat3>(~0u);

mountstat3 ToMountStat(const absl::Status& status) {
  switch (vfs::ErrnoOf(status)) {
    case vfs::kErrJukebox:
      return kMntTryLater;
    case ENOENT:
      return mount3::MNT3ERR_NOENT;
    case EACCES:
    case EPERM:
      return mount3::MNT3ERR_ACCES;
    case ENOTDIR:
      return mount3::MNT3ERR_NOTDIR;
    case ENAMETOOLONG:
      return mount3::MNT3ERR_NAMETOOLONG;
    default:
      return mount3::MNT3ERR_IO;
  }
}

// The flavors of a sec= list, in the order written (RFC 2623 §2.7: Kerberos
// as its pseudo-flavors); sys and none without one.
std::vector<uint32_t> ServedFlavors(const conf::ExportOptions& options) {
  if (options.sec.empty()) return {kAuthSys, kAuthNone};
  std::vector<uint32_t> out;
  for (const std::string& name : options.sec) {
    if (std::optional<Flavor> f = FlavorNamed(name)) out.push_back(*f);
  }
  return out;
}

// Resolves dirpath to a handle if the caller may mount it: an export's root,
// or a directory below it found by LOOKUPs with the caller's credential
// (symlinks are not followed).
// `flavors` gets the auth flavors the client may use (MNT v3 reply).
mountstat3 MountRoot(MountService& s, const rpc::CallContext& ctx, std::string_view dirpath,
                     vfs::FileHandle* handle, std::vector<uint32_t>* flavors = nullptr) {
  std::optional<std::string> path = conf::NormalizeExportPath(dirpath);
  if (!path) return mount3::MNT3ERR_NOENT;
  std::shared_ptr<const conf::ExportTable> table = s.nfs().exports();
  std::string rest;
  const conf::Export* exp = FindExportFor(*table, *path, &rest);
  if (exp == nullptr) return mount3::MNT3ERR_NOENT;
  const conf::ExportClient* client = s.nfs().MatchClient(*ctx.transport, *exp);
  if (client == nullptr) return mount3::MNT3ERR_ACCES;
  // A `secure` export mounted from an unprivileged port: refused like Linux
  // mountd does ("illegal port"), with MNT3ERR_ACCES rather than an RPC
  // AUTH_ERROR, so the client reports "access denied" for this export only.
  if (client->options.secure && !NfsServer::PrivilegedPort(*ctx.transport)) {
    RefusedMountLog().Warningf("refused MNT of %s from %s: unprivileged port on a secure export",
                               exp->path, PeerName(ctx));
    return mount3::MNT3ERR_ACCES;
  }
  if (const std::optional<std::string>& mp = client->options.mountpoint) {
    // `mountpoint`: an unmounted disk must not be replaced by the empty
    // directory beneath it.
    const std::string& dir = mp->empty() ? exp->path : *mp;
    absl::StatusOr<bool> mounted = vfs::IsMountPoint(dir);
    if (!mounted.ok() || !*mounted) {
      RefusedMountLog().Warningf(
          "refused MNT of %s from %s: %s is not a mount point (option mountpoint)", exp->path,
          PeerName(ctx), dir);
      return mount3::MNT3ERR_NOENT;
    }
    // Started before the disk was mounted: serve the disk, not what it covers.
    if (absl::Status refreshed = s.nfs().backend().RefreshExport(exp->export_id); !refreshed.ok()) {
      FailedMountLog().Warningf("MNT %s: %s", exp->path, refreshed.ToString());
      return mount3::MNT3ERR_SERVERFAULT;
    }
  }
  if (flavors != nullptr) *flavors = ServedFlavors(client->options);
  vfs::Backend& backend = s.nfs().backend();
  absl::StatusOr<vfs::FileHandle> root = backend.RootHandle(exp->export_id);
  if (!root.ok()) {
    FailedMountLog().Warningf("MNT %s: no root handle: %s", exp->path, root.status().ToString());
    return vfs::ErrnoOf(root.status()) == vfs::kErrJukebox ? kMntTryLater
                                                           : mount3::MNT3ERR_SERVERFAULT;
  }
  *handle = *root;
  const vfs::Cred cred = s.nfs().SquashCredential(ctx.cred, client->options);
  for (absl::string_view name : absl::StrSplit(rest, '/', absl::SkipEmpty())) {
    absl::StatusOr<vfs::LookupResult> next =
        backend.Lookup(cred, *handle, std::string_view(name.data(), name.size()), nullptr);
    if (!next.ok()) return ToMountStat(next.status());
    if (next->attributes.type != vfs::FileType::kDirectory) return mount3::MNT3ERR_NOTDIR;
    *handle = next->handle;
  }
  s.AddMount(PeerName(ctx), *path);
  NFS3D_LOG_INFO("client %s mounted %s", PeerName(ctx), *path);
  return mount3::MNT3_OK;
}

void Null(MountService&, const rpc::CallContext&, const nfs3::Void&, nfs3::Void*) {}

rpc::ProcResult Mnt3(MountService& s, const rpc::CallContext& ctx, const mount3::DirpathArgs& args,
                     mount3::MountRes3* res) {
  vfs::FileHandle fh;
  res->status = MountRoot(s, ctx, args.dirpath, &fh, &res->auth_flavors);
  if (res->status == kMntTryLater) return rpc::ProcResult::kDrop;
  if (res->status != mount3::MNT3_OK) return rpc::ProcResult::kSuccess;
  res->fhandle.len = fh.len;
  std::memcpy(res->fhandle.data, fh.data, fh.len);
  return rpc::ProcResult::kSuccess;
}

// v1 fhandles are a fixed 32 bytes; nfs3d's handles are longer, so v1 MNT can
// only refuse. v1 exists for showmount's EXPORT and DUMP, which work.
rpc::ProcResult Mnt1(MountService& s, const rpc::CallContext& ctx, const mount3::DirpathArgs& args,
                     mount3::MountRes1* res) {
  vfs::FileHandle fh;
  mountstat3 status = MountRoot(s, ctx, args.dirpath, &fh);
  if (status == kMntTryLater) return rpc::ProcResult::kDrop;
  if (status == mount3::MNT3_OK && fh.len > mount3::kFhSizeV1) status = mount3::MNT3ERR_NOTSUPP;
  res->status = status;
  if (status == mount3::MNT3_OK) std::memcpy(res->fhandle, fh.data, fh.len);
  return rpc::ProcResult::kSuccess;
}

void Dump(MountService& s, const rpc::CallContext&, const nfs3::Void&, mount3::MountList* res) {
  for (const auto& [host, dir] : s.Mounts()) res->entries.push_back({host, dir});
}

void Umnt(MountService& s, const rpc::CallContext& ctx, const mount3::DirpathArgs& args,
          nfs3::Void*) {
  s.RemoveMount(PeerName(ctx), std::string(args.dirpath));
  NFS3D_LOG_INFO("client %s unmounted %s", PeerName(ctx), std::string(args.dirpath));
}

void UmntAll(MountService& s, const rpc::CallContext& ctx, const nfs3::Void&, nfs3::Void*) {
  s.RemoveAllMounts(PeerName(ctx));
}

void Export(MountService& s, const rpc::CallContext&, const nfs3::Void&, mount3::ExportList* res) {
  std::shared_ptr<const conf::ExportTable> table = s.nfs().exports();
  for (const conf::Export& exp : table->exports) {
    mount3::ExportEntry entry{exp.path, {}};
    for (const conf::ExportClient& client : exp.clients) entry.groups.push_back(client.spec);
    res->entries.push_back(std::move(entry));
  }
}

template <typename Args, typename Res,
          void (*Fn)(MountService&, const rpc::CallContext&, const Args&, Res*)>
constexpr rpc::ProcFn Proc() {
  return &rpc::TypedProc<MountService, Args, Res, Fn>;
}
// MNT, which may drop the call (kMntTryLater).
template <typename Res, rpc::ProcResult (*Fn)(MountService&, const rpc::CallContext&,
                                              const mount3::DirpathArgs&, Res*)>
constexpr rpc::ProcFn MntProc() {
  return &rpc::TypedProcOrDrop<MountService, mount3::DirpathArgs, Res, Fn>;
}

// MOUNT changes no file system state, so no row is "modifies"; UMNT/UMNTALL
// are idempotent in effect (removing a list entry twice is harmless).
// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr rpc::Procedure kMountV3[] = {
    {.number = mount3::kNull, .name = "NULL", .run = Proc<nfs3::Void, nfs3::Void, Null>()},
    {.number = mount3::kMnt, .name = "MNT",
     .run = MntProc<mount3::MountRes3, Mnt3>()},
    {.number = mount3::kDump, .name = "DUMP", .run = Proc<nfs3::Void, mount3::MountList, Dump>()},
    {.number = mount3::kUmnt, .name = "UMNT", .run = Proc<mount3::DirpathArgs, nfs3::Void, Umnt>()},
    {.number = mount3::kUmntAll, .name = "UMNTALL", .run = Proc<nfs3::Void, nfs3::Void, UmntAll>()},
    {.number = mount3::kExport, .name = "EXPORT",
     .run = Proc<nfs3::Void, mount3::ExportList, Export>()},
};
// clang-format on

// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr rpc::Procedure kMountV1[] = {
    {.number = mount3::kNull, .name = "NULL", .run = Proc<nfs3::Void, nfs3::Void, Null>()},
    {.number = mount3::kMnt, .name = "MNT",
     .run = MntProc<mount3::MountRes1, Mnt1>()},
    {.number = mount3::kDump, .name = "DUMP", .run = Proc<nfs3::Void, mount3::MountList, Dump>()},
    {.number = mount3::kUmnt, .name = "UMNT", .run = Proc<mount3::DirpathArgs, nfs3::Void, Umnt>()},
    {.number = mount3::kUmntAll, .name = "UMNTALL", .run = Proc<nfs3::Void, nfs3::Void, UmntAll>()},
    {.number = mount3::kExport, .name = "EXPORT",
     .run = Proc<nfs3::Void, mount3::ExportList, Export>()},
};
// clang-format on

}  // namespace

void MountService::AddMount(const std::string& host, const std::string& dir) {
  absl::MutexLock lock(&mu_);
  mounts_.emplace(host, dir);
}

void MountService::RemoveMount(const std::string& host, const std::string& dir) {
  absl::MutexLock lock(&mu_);
  mounts_.erase({host, dir});
}

void MountService::RemoveAllMounts(const std::string& host) {
  absl::MutexLock lock(&mu_);
  for (auto it = mounts_.begin(); it != mounts_.end();) {
    it = it->first == host ? mounts_.erase(it) : std::next(it);
  }
}

std::set<std::pair<std::string, std::string>> MountService::Mounts() const {
  absl::MutexLock lock(&mu_);
  return mounts_;
}

rpc::Program MakeMountProgram(MountService* service) {
  rpc::Program program;
  program.number = mount3::kProgram;
  program.name = "mount";
  program.versions = {{mount3::kVersion1, kMountV1}, {mount3::kVersion3, kMountV3}};
  program.service = service;
  return program;
}

}  // namespace nfs3d::nfsd
