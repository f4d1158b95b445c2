#include "nfsd/rquota_program.h"

#include <algorithm>
#include <limits>
#include <string>

#include "common/log.h"
#include "xdr/rquota_codec.h"

namespace nfs3d::nfsd {
namespace {

using rquota::GetQuotaRes;

// The export a quota path names: the export itself, or the deepest export
// above it (a client that mounted a sub-directory asks with that path).
const conf::Export* ExportOfPath(const conf::ExportTable& table, std::string_view path) {
  if (const conf::Export* exact = table.FindByPath(path)) return exact;
  const conf::Export* best = nullptr;
  for (const conf::Export& e : table.exports) {
    const bool below = path.size() > e.path.size() && path.substr(0, e.path.size()) == e.path &&
                       (e.path == "/" || path[e.path.size()] == '/');
    if (below && (best == nullptr || e.path.size() > best->path.size())) best = &e;
  }
  return best;
}

// rpc.rquotad's rule: root may ask about anyone, a user about itself and
// the groups it is in.
bool MayAsk(const vfs::Cred& cred, rquota::QuotaType type, uint32_t id) {
  if (cred.uid == 0) return true;
  if (type == rquota::kUserQuota) return cred.uid == id;
  return cred.gid == id ||
         std::find(cred.groups.begin(), cred.groups.end(), id) != cred.groups.end();
}

// struct rquota counts in 32 bits; like rpc.rquotad, a larger figure doubles
// the block size until every block count fits.
rquota::Rquota ToRquota(const vfs::Quota& q) {
  rquota::Rquota r;
  uint64_t bsize = rquota::kBlockSize;
  auto blocks = [&](uint64_t bytes) { return (bytes + bsize - 1) / bsize; };
  while (std::max({blocks(q.bytes_hard), blocks(q.bytes_soft), blocks(q.bytes_used)}) >
         std::numeric_limits<uint32_t>::max()) {
    bsize <<= 1;
  }
  auto clamp = [](uint64_t v) {
    return static_cast<uint32_t>(std::min<uint64_t>(v, std::numeric_limits<uint32_t>::max()));
  };
  r.bsize = static_cast<int32_t>(bsize);
  r.active = true;
  r.bhardlimit = clamp(blocks(q.bytes_hard));
  r.bsoftlimit = clamp(blocks(q.bytes_soft));
  r.curblocks = clamp(blocks(q.bytes_used));
  r.fhardlimit = clamp(q.files_hard);
  r.fsoftlimit = clamp(q.files_soft);
  r.curfiles = clamp(q.files_used);
  r.btimeleft = clamp(q.bytes_grace_left);
  r.ftimeleft = clamp(q.files_grace_left);
  return r;
}

void GetQuota(const NfsServer& nfs, const rpc::CallContext& ctx, const rquota::GetQuotaArgs& args,
              GetQuotaRes* res) {
  res->status = rquota::Q_EPERM;
  if (ctx.transport == nullptr) return;
  std::shared_ptr<const conf::ExportTable> table = nfs.exports();
  const conf::Export* exp = ExportOfPath(*table, args.path);
  if (exp == nullptr) {
    res->status = rquota::Q_NOQUOTA;  // not a file system of this server's
    return;
  }
  const conf::ExportClient* client = nfs.MatchClient(*ctx.transport, *exp);
  if (client == nullptr) return;
  const vfs::Cred cred = nfs.SquashCredential(ctx.cred, client->options);
  const auto type = static_cast<rquota::QuotaType>(args.type);
  const uint32_t id = static_cast<uint32_t>(args.id);
  if (!MayAsk(cred, type, id)) return;
  absl::StatusOr<std::optional<vfs::Quota>> quota = nfs.backend().GetQuota(
      exp->export_id, type == rquota::kUserQuota ? vfs::QuotaKind::kUser : vfs::QuotaKind::kGroup,
      id);
  if (!quota.ok()) {
    NFS3D_LOG_WARNING("rquota %s: %s", exp->path, quota.status().ToString());
    res->status = rquota::Q_NOQUOTA;
    return;
  }
  if (!quota->has_value()) {
    res->status = rquota::Q_NOQUOTA;
    return;
  }
  res->status = rquota::Q_OK;
  res->rquota = ToRquota(**quota);
}

void GetQuotaV1(const NfsServer& nfs, const rpc::CallContext& ctx,
                const rquota::GetQuotaArgsV1& args, GetQuotaRes* res) {
  rquota::GetQuotaArgs user = args;
  user.type = rquota::kUserQuota;
  GetQuota(nfs, ctx, user, res);
}

void GetQuotaV2(const NfsServer& nfs, const rpc::CallContext& ctx,
                const rquota::GetQuotaArgsV2& args, GetQuotaRes* res) {
  GetQuota(nfs, ctx, args, res);
}

template <typename Args>
void SetQuota(const NfsServer&, const rpc::CallContext&, const Args&, GetQuotaRes* res) {
  res->status = rquota::Q_EPERM;
}

void Null(const NfsServer&, const rpc::CallContext&, const nfs3::Void&, nfs3::Void*) {}

template <typename Args, typename Res,
          void (*Fn)(const NfsServer&, const rpc::CallContext&, const Args&, Res*)>
constexpr rpc::ProcFn Proc() {
  return &rpc::TypedProc<const NfsServer, Args, Res, Fn>;
}

// Nothing here changes file system state; SETQUOTA only refuses.
// clang-format off
constexpr rpc::Procedure kRquotaV1[] = {
    {.number = rquota::kNull, .name = "NULL", .run = Proc<nfs3::Void, nfs3::Void, Null>()},
    {.number = rquota::kGetQuota, .name = "GETQUOTA",
     .run = Proc<rquota::GetQuotaArgsV1, GetQuotaRes, GetQuotaV1>()},
    {.number = rquota::kGetActiveQuota, .name = "GETACTIVEQUOTA",
     .run = Proc<rquota::GetQuotaArgsV1, GetQuotaRes, GetQuotaV1>()},
    {.number = rquota::kSetQuota, .name = "SETQUOTA",
     .run = Proc<rquota::SetQuotaArgsV1, GetQuotaRes, SetQuota<rquota::SetQuotaArgsV1>>()},
    {.number = rquota::kSetActiveQuota, .name = "SETACTIVEQUOTA",
     .run = Proc<rquota::SetQuotaArgsV1, GetQuotaRes, SetQuota<rquota::SetQuotaArgsV1>>()},
};
constexpr rpc::Procedure kRquotaV2[] = {
    {.number = rquota::kNull, .name = "NULL", .run = Proc<nfs3::Void, nfs3::Void, Null>()},
    {.number = rquota::kGetQuota, .name = "GETQUOTA",
     .run = Proc<rquota::GetQuotaArgsV2, GetQuotaRes, GetQuotaV2>()},
    {.number = rquota::kGetActiveQuota, .name = "GETACTIVEQUOTA",
     .run = Proc<rquota::GetQuotaArgsV2, GetQuotaRes, GetQuotaV2>()},
    {.number = rquota::kSetQuota, .name = "SETQUOTA",
     .run = Proc<rquota::SetQuotaArgsV2, GetQuotaRes, SetQuota<rquota::SetQuotaArgsV2>>()},
    {.number = rquota::kSetActiveQuota, .name = "SETACTIVEQUOTA",
     .run = Proc<rquota::SetQuotaArgsV2, GetQuotaRes, SetQuota<rquota::SetQuotaArgsV2>>()},
};
// clang-format on

}  // namespace

rpc::Program MakeRquotaProgram(const NfsServer* nfs) {
  rpc::Program program;
  program.number = rquota::kProgram;
  program.name = "rquota";
  program.versions = {{rquota::kVersion1, kRquotaV1}, {rquota::kVersion2, kRquotaV2}};
  program.service = const_cast<NfsServer*>(nfs);  // used as const only
  return program;
}

}  // namespace nfs3d::nfsd
