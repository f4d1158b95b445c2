#include "nlm/nsm_program.h"

#include <netinet/in.h>

#include <algorithm>

#include "common/auth_flavor.h"
#include "common/log.h"
#include "nlm/nlm4_codec.h"
#include "nlm/nsm_codec.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::nsm {
namespace {

using nlm::Void;
using rpc::CallContext;

bool SameId(const my_id& a, const my_id& b) {
  return a.my_name == b.my_name && a.my_prog == b.my_prog && a.my_vers == b.my_vers &&
         a.my_proc == b.my_proc;
}

uint16_t PeerPort(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
  if (peer.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port);
  }
  return 0;
}

// Root on this machine: a reserved source port on a loopback address (only
// root binds one; any local user can claim uid 0 in AUTH_SYS). The kernel's
// lockd calls its statd with AUTH_NONE from such a port; an AUTH_SYS
// credential must say uid 0. rpc.statd asks for loopback only (nfs-utils
// statd/monitor.c); without the port any local user could have nfs3d call
// back, as root from a reserved port, on their behalf.
bool FromLocalRoot(const CallContext& ctx) {
  const bool root_cred =
      ctx.cred.flavor == kAuthNone || (ctx.cred.flavor == kAuthSys && ctx.cred.uid == 0);
  return ctx.transport != nullptr && rpc::IsLoopbackPeer(*ctx.transport) &&
         PeerPort(ctx.transport->peer) < 1024 && root_cred;
}

void Null(NsmService&, const CallContext&, const Void&, Void*) {}

void Stat(NsmService& s, const CallContext&, const sm_name&, sm_stat_res* r) {
  r->res_stat = STAT_SUCC;
  r->state = s.state();
}

// Only a lock manager is called back (as rpc.statd allows): the callback is
// an AUTH_SYS uid 0 call from a reserved port to whatever it names.
// (rpc.statd also allows only procedures 16 and 24; the program suffices.)
void Mon(NsmService& s, const CallContext& ctx, const mon& m, sm_stat_res* r) {
  r->state = s.state();
  const bool allowed =
      FromLocalRoot(ctx) && static_cast<uint32_t>(m.id.id.my_prog) == nlm::kProgram;
  if (!allowed) {
    NFS3D_LOG_DEBUG(
        "status monitor: SM_MON for program %d refused: only root on loopback may "
        "monitor, for the lock manager (program %u)",
        m.id.id.my_prog, nlm::kProgram);
  }
  r->res_stat = allowed && s.Monitor(m) ? STAT_SUCC : STAT_FAIL;
}

void Unmon(NsmService& s, const CallContext& ctx, const mon_id& id, sm_stat* r) {
  if (FromLocalRoot(ctx)) s.Unmonitor(id);
  r->state = s.state();
}

void UnmonAll(NsmService& s, const CallContext& ctx, const my_id& id, sm_stat* r) {
  if (FromLocalRoot(ctx)) s.UnmonitorAll(id);
  r->state = s.state();
}

void SimuCrash(NsmService&, const CallContext&, const Void&, Void*) {}

void Notify(NsmService& s, const CallContext& ctx, const stat_chge& change, Void*) {
  s.Notify(change, ctx.transport ? &ctx.transport->peer : nullptr, FromLocalRoot(ctx));
}

template <typename Args, typename Res,
          void (*Fn)(NsmService&, const CallContext&, const Args&, Res*)>
constexpr rpc::ProcFn Proc() {
  return &rpc::TypedProc<NsmService, Args, Res, Fn>;
}

// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr rpc::Procedure kNsmV1[] = {
    {.number = kNull, .name = "NULL", .run = Proc<Void, Void, Null>()},
    {.number = kStat, .name = "STAT", .run = Proc<sm_name, sm_stat_res, Stat>()},
    {.number = kMon, .name = "MON", .run = Proc<mon, sm_stat_res, Mon>(), .idempotent = false},
    {.number = kUnmon, .name = "UNMON", .run = Proc<mon_id, sm_stat, Unmon>(), .idempotent = false},
    {.number = kUnmonAll, .name = "UNMON_ALL", .run = Proc<my_id, sm_stat, UnmonAll>(),
     .idempotent = false},
    {.number = kSimuCrash, .name = "SIMU_CRASH", .run = Proc<Void, Void, SimuCrash>()},
    {.number = kNotify, .name = "NOTIFY", .run = Proc<stat_chge, Void, Notify>(),
     .idempotent = false},
};
// clang-format on
static_assert(std::size(kNsmV1) == kNumProcs);

}  // namespace

bool NsmService::Monitor(const mon& m) {
  absl::MutexLock lock(&mu_);
  for (mon& existing : monitors_) {
    if (existing.id.mon_name == m.id.mon_name && SameId(existing.id.id, m.id.id)) {
      existing.priv = m.priv;
      return true;
    }
  }
  if (monitors_.size() >= max_monitors_) return false;
  monitors_.push_back(m);
  return true;
}

void NsmService::Unmonitor(const mon_id& id) {
  absl::MutexLock lock(&mu_);
  monitors_.erase(std::remove_if(monitors_.begin(), monitors_.end(),
                                 [&](const mon& m) {
                                   return m.id.mon_name == id.mon_name && SameId(m.id.id, id.id);
                                 }),
                  monitors_.end());
}

void NsmService::UnmonitorAll(const my_id& id) {
  absl::MutexLock lock(&mu_);
  monitors_.erase(std::remove_if(monitors_.begin(), monitors_.end(),
                                 [&](const mon& m) { return SameId(m.id.id, id); }),
                  monitors_.end());
}

size_t NsmService::monitor_count() const {
  absl::MutexLock lock(&mu_);
  return monitors_.size();
}

void NsmService::Notify(const stat_chge& change, const sockaddr_storage* from, bool trusted) {
  const std::string address = from ? nlm::AddressString(*from) : "";
  NFS3D_LOG_INFO("status monitor: SM_NOTIFY for %s (state %d) from %s", change.mon_name,
                 change.state, address);
  const bool released = nlm_->HostRebooted(change.mon_name, change.state, from, trusted);
  // Monitors hear of it when it came from the host itself (lockd's mon_name
  // is the server's address) or from root here, not from anyone naming it.
  if (!released && !trusted && address != change.mon_name) return;
  std::vector<mon> to_call;
  {
    absl::MutexLock lock(&mu_);
    for (const mon& m : monitors_) {
      if (m.id.mon_name == change.mon_name) to_call.push_back(m);
    }
  }
  // Monitors are local processes: call them back on the loopback address.
  for (const mon& m : to_call) {
    nlm::PeerCall call;
    auto* sin = reinterpret_cast<sockaddr_in*>(&call.peer);
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    call.transport = rpc::Transport::kUdp;
    call.prog = static_cast<uint32_t>(m.id.id.my_prog);
    call.vers = static_cast<uint32_t>(m.id.id.my_vers);
    call.proc = static_cast<uint32_t>(m.id.id.my_proc);
    sm_status status{change.mon_name, change.state, m.priv};
    xdr::BufferChain chain;
    xdr::Encoder e(&chain);
    Encode(e, status);
    call.args = chain.Flatten();
    nlm_->CallAsync(std::move(call));
  }
}

rpc::Program MakeNsmProgram(NsmService* service) {
  rpc::Program program;
  program.number = kProgram;
  program.name = "status";
  program.versions = {{kVersion, kNsmV1}};
  program.service = service;
  return program;
}

}  // namespace nfs3d::nsm
