#include "nlm/nlm_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "common/log.h"
#include "nlm/nlm4_codec.h"
#include "nlm/nsm_codec.h"
#include "nlm/nsm_types.h"
#include "xdr/buffer_chain.h"
#include "xdr/encode_to_string.h"
#include "xdr/encoder.h"

namespace nfs3d::nlm {
namespace {

using xdr::EncodeToString;

LockOwner OwnerOf(const nlm4_lock& l) { return {l.caller_name, l.svid, l.oh}; }

// What an nlm4_lock names: the resolved file, the owner and the byte range.
struct LockTarget {
  std::string file;
  LockOwner owner;
  uint64_t first = 0, last = 0;
};

// Resolves alock's handle into *t; anything but NLM4_GRANTED means the call
// ends with that status.
nlm4_stats ResolveLock(const FileResolver& resolver, const rpc::CallContext& ctx,
                       const nlm4_lock& alock, LockTarget* t) {
  nlm4_stats stat = resolver(ctx, alock.fh, &t->file);
  if (stat != NLM4_GRANTED) return stat;
  t->owner = OwnerOf(alock);
  NlmRange(alock.l_offset, alock.l_len, &t->first, &t->last);
  return stat;
}

std::string CallerAddress(const rpc::CallContext& ctx) {
  return ctx.transport ? AddressString(ctx.transport->peer) : "";
}

// NSM states only grow (by 2 per restart); compared as serial numbers.
bool NewerState(int32_t state, int32_t than) {
  return static_cast<int32_t>(static_cast<uint32_t>(state) - static_cast<uint32_t>(than)) > 0;
}

}  // namespace

NlmService::NlmService(NlmOptions options, FileResolver resolver, PeerCaller* caller,
                       StatusStore* store)
    : options_(options),
      resolver_(std::move(resolver)),
      caller_(caller),
      store_(store),
      table_(options.limits),
      shares_(options.max_shares),
      runner_(options.callback_threads) {}

NlmService::~NlmService() { Stop(); }

void NlmService::Start(bool grace) {
  Open(grace);
  NotifyPreviousHosts();
}

void NlmService::Open(bool grace) {
  std::vector<MonitoredHost> previous;
  if (store_ != nullptr) previous = store_->previous_hosts();
  {
    absl::MutexLock lock(&mu_);
    grace_end_ = grace ? absl::Now() + options_.grace_period : absl::InfinitePast();
    grace_cleanup_done_ = !grace;
    for (const MonitoredHost& h : previous) {
      hosts_[h.name] = {h.address, h.local_address, true, h.nsm_state};
      previous_hosts_.push_back(h.name);
    }
  }
  if (grace) {
    NFS3D_LOG_INFO(
        "lock manager: grace period of %s for %d clients to reclaim locks (NSM state %d)",
        absl::FormatDuration(options_.grace_period), previous.size(), nsm_state());
  }
}

void NlmService::NotifyPreviousHosts() {
  std::vector<MonitoredHost> previous;
  if (store_ != nullptr) previous = store_->previous_hosts();
  for (const MonitoredHost& h : previous) {
    if (!runner_.Post([this, h] { SendNotify(h); })) {
      NFS3D_LOG_WARNING("lock manager: cannot queue SM_NOTIFY to %s", h.name);
    }
  }
}

void NlmService::Stop() {
  stopping_ = true;
  runner_.Stop();
}

bool NlmService::InGrace() const {
  {
    absl::MutexLock lock(&mu_);
    if (absl::Now() < grace_end_) return true;
  }
  return other_grace_ && other_grace_();
}

size_t NlmService::lock_count() const {
  absl::MutexLock lock(&mu_);
  return table_.size();
}

size_t NlmService::blocked_count() const {
  absl::MutexLock lock(&mu_);
  return blocked_.size();
}

std::vector<Lock> NlmService::LocksOf(const std::string& file) const {
  absl::MutexLock lock(&mu_);
  return table_.LocksOf(file);
}

nlm4_stats NlmService::NoteHost(const rpc::CallContext& ctx, const std::string& name,
                                bool monitored, int32_t nsm_state) {
  if (!grace_cleanup_done_ && absl::Now() >= grace_end_) ForgetUnreclaimedLocked();
  const std::string address = CallerAddress(ctx);
  auto it = hosts_.find(name);
  if (it == hosts_.end()) {
    if (hosts_.size() >= options_.max_hosts) return NLM4_DENIED_NOLOCKS;
    it = hosts_.emplace(name, Host{}).first;
  } else if (it->second.address != address) {
    // Another machine using the name, or the client from a new address
    // while its old one still holds state: neither may take that state over.
    if (HoldsStateLocked(name)) {
      LogRefusalLocked(absl::StrFormat("lock request naming %s (bound to %s) from %s", name,
                                       it->second.address, address));
      return NLM4_DENIED_NOLOCKS;
    }
    it->second.nsm_state = 0;  // a new binding: what the old one said does not count
  }
  Host& host = it->second;
  std::string local = ctx.transport ? AddressString(ctx.transport->local) : "";
  // A new state (the client rebooted) is written too: once per reboot.
  bool changed = address != host.address || local != host.local_address ||
                 (nsm_state != 0 && nsm_state != host.nsm_state);
  host.address = address;
  host.local_address = local;
  if (nsm_state != 0) host.nsm_state = nsm_state;
  if (!monitored || store_ == nullptr || (host.recorded && !changed)) return NLM4_GRANTED;
  if (absl::Status s = store_->AddHost({name, address, local, host.nsm_state}); !s.ok()) {
    NFS3D_LOG_ERROR("lock manager: cannot record client %s: %s", name, s.ToString());
    return NLM4_DENIED_NOLOCKS;
  }
  host.recorded = true;
  return NLM4_GRANTED;
}

bool NlmService::FromHostLocked(const rpc::CallContext& ctx, const std::string& name,
                                const char* what) {
  auto it = hosts_.find(name);
  if (it == hosts_.end()) return false;  // nothing of it here to change
  const std::string address = CallerAddress(ctx);
  if (it->second.address == address) return true;
  LogRefusalLocked(absl::StrFormat("%s naming %s (bound to %s) from %s", what, name,
                                   it->second.address, address));
  return false;
}

bool NlmService::HoldsStateLocked(const std::string& name) const {
  if (table_.CountOf(name) != 0) return true;
  if (!grace_cleanup_done_ &&
      std::find(previous_hosts_.begin(), previous_hosts_.end(), name) != previous_hosts_.end()) {
    return true;  // its reclaims are owed in the grace period
  }
  auto by_name = [&](const auto& entry) { return entry.owner.host == name; };
  if (std::any_of(blocked_.begin(), blocked_.end(), by_name)) return true;
  for (const auto& [id, grant] : grants_) {
    if (by_name(grant)) return true;
  }
  for (const auto& [file, share] : shares_.All()) {  // rare: only on a change of address
    if (share.host == name) return true;
  }
  return false;
}

void NlmService::LogRefusalLocked(const std::string& what) {
  refusal_log_.Warning(absl::StrCat("lock manager: ignored ", what));
}

nlm4_testres NlmService::Test(const rpc::CallContext& ctx, const nlm4_testargs& args) {
  nlm4_testres res;
  res.cookie = args.cookie;
  LockTarget target;
  res.stat = ResolveLock(resolver_, ctx, args.alock, &target);
  if (res.stat != NLM4_GRANTED) return res;
  const auto& [file, owner, first, last] = target;
  if (InGrace()) {
    res.stat = NLM4_DENIED_GRACE_PERIOD;
    return res;
  }
  absl::MutexLock lock(&mu_);
  std::optional<nlm::Lock> conflict = table_.Test(file, owner, first, last, args.exclusive);
  if (!conflict && mirror_ != nullptr) {
    conflict = mirror_->Conflict(file, owner, first, last, args.exclusive);
  }
  if (conflict) {
    res.stat = NLM4_DENIED;
    res.holder.exclusive = conflict->exclusive;
    res.holder.svid = conflict->owner.svid;
    // No owner handle: with it (and the svid) any caller could name the
    // holder in an UNLOCK. knfsd's nlmsvc_testlock returns none either.
    ToNlmRange(conflict->first, conflict->last, &res.holder.l_offset, &res.holder.l_len);
  }
  return res;
}

nlm4_res NlmService::Lock(const rpc::CallContext& ctx, const nlm4_lockargs& args, bool monitored) {
  nlm4_res res;
  res.cookie = args.cookie;
  LockTarget target;
  res.stat = ResolveLock(resolver_, ctx, args.alock, &target);
  if (res.stat != NLM4_GRANTED) return res;
  const auto& [file, owner, first, last] = target;
  if (!args.reclaim && InGrace()) {
    res.stat = NLM4_DENIED_GRACE_PERIOD;
    return res;
  }

  absl::MutexLock lock(&mu_);
  res.stat = NoteHost(ctx, owner.host, monitored, args.state);
  if (res.stat != NLM4_GRANTED) return res;
  // By `target`, not its bindings: clang before 16 cannot capture those.
  auto same_request = [&](const auto& r) {
    return r.file == target.file && r.owner == target.owner && r.first == target.first &&
           r.last == target.last && r.exclusive == args.exclusive;
  };
  switch (LockMirrored(file, owner, first, last, args.exclusive)) {
    case LockResult::kGranted:
      // A waiter asking again (or a retransmission) got what a callback may
      // still be delivering: the callback's outcome must not undo it.
      for (auto& [id, grant] : grants_) {
        if (same_request(grant)) grant.confirmed = true;
      }
      blocked_.remove_if(same_request);
      if (args.reclaim) {
        NFS3D_LOG_INFO("lock manager: %s reclaimed a lock (svid %d, %u+%u)", owner.host, owner.svid,
                       args.alock.l_offset, args.alock.l_len);
      }
      res.stat = NLM4_GRANTED;
      return res;
    case LockResult::kNoLocks:
      res.stat = NLM4_DENIED_NOLOCKS;
      return res;
    case LockResult::kConflict:
      break;
  }
  if (!args.block || !monitored) {
    res.stat = NLM4_DENIED;
    return res;
  }
  size_t mine = 0;
  for (Blocked& b : blocked_) {
    if (same_request(b)) {  // a re-sent blocking request: still the one waiter
      b.cookie = args.cookie;
      b.alock = args.alock;
      if (ctx.transport) b.peer = ctx.transport->peer;
      res.stat = NLM4_BLOCKED;
      return res;
    }
    if (b.owner.host == owner.host) ++mine;
  }
  if (blocked_.size() >= options_.max_blocked || mine >= options_.max_blocked_per_host) {
    res.stat = NLM4_DENIED_NOLOCKS;
    return res;
  }
  if (WouldDeadlock(file, owner, first, last, args.exclusive)) {
    NFS3D_LOG_INFO("lock manager: %s (svid %d) would deadlock waiting; refused", owner.host,
                   owner.svid);
    res.stat = NLM4_DEADLCK;
    return res;
  }
  Blocked b;
  b.file = file;
  b.owner = owner;
  b.first = first;
  b.last = last;
  b.exclusive = args.exclusive;
  b.alock = args.alock;
  b.cookie = args.cookie;
  if (ctx.transport) {
    b.peer = ctx.transport->peer;
    b.transport = ctx.transport->transport;
  }
  b.vers = ctx.vers;
  blocked_.push_back(std::move(b));
  res.stat = NLM4_BLOCKED;
  return res;
}

nlm4_res NlmService::Cancel(const rpc::CallContext& ctx, const nlm4_cancargs& args) {
  nlm4_res res;
  res.cookie = args.cookie;
  LockTarget target;
  res.stat = ResolveLock(resolver_, ctx, args.alock, &target);
  if (res.stat != NLM4_GRANTED) return res;
  const auto& [file, owner, first, last] = target;
  // By `target`, not its bindings: clang before 16 cannot capture those.
  auto same_request = [&](const auto& r) {
    return r.file == target.file && r.owner == target.owner && r.first == target.first &&
           r.last == target.last && r.exclusive == args.exclusive;
  };
  absl::MutexLock lock(&mu_);
  if (!FromHostLocked(ctx, owner.host, "CANCEL")) {
    // Not the owner's host: there is no waiter of this caller to cancel.
    res.stat = NLM4_DENIED;
    return res;
  }
  size_t before = blocked_.size();
  blocked_.remove_if(same_request);
  bool cancelled = blocked_.size() != before;
  // Granted but not yet delivered: the waiter gave up, so take it back.
  for (auto it = grants_.begin(); it != grants_.end();) {
    if (same_request(it->second) && !it->second.confirmed) {
      UnlockMirrored(file, owner, first, last);
      it = grants_.erase(it);
      cancelled = true;
    } else {
      ++it;
    }
  }
  if (cancelled) GrantWaiters(file);
  res.stat = cancelled ? NLM4_GRANTED : NLM4_DENIED;
  return res;
}

nlm4_res NlmService::Unlock(const rpc::CallContext& ctx, const nlm4_unlockargs& args) {
  nlm4_res res;
  res.cookie = args.cookie;
  LockTarget target;
  res.stat = ResolveLock(resolver_, ctx, args.alock, &target);
  if (res.stat != NLM4_GRANTED) return res;
  const auto& [file, owner, first, last] = target;
  absl::MutexLock lock(&mu_);
  if (!FromHostLocked(ctx, owner.host, "UNLOCK")) {
    // knfsd's answer: the caller holds no such lock, so unlocking it is done.
    res.stat = NLM4_GRANTED;
    return res;
  }
  if (UnlockMirrored(file, owner, first, last) == LockResult::kNoLocks) {
    res.stat = NLM4_DENIED_NOLOCKS;
    return res;
  }
  for (auto it = grants_.begin(); it != grants_.end();) {
    bool overlaps = it->second.file == file && it->second.owner == owner &&
                    it->second.first <= last && first <= it->second.last;
    it = overlaps ? grants_.erase(it) : std::next(it);
  }
  GrantWaiters(file);
  res.stat = NLM4_GRANTED;
  return res;
}

nlm4_shareres NlmService::Share(const rpc::CallContext& ctx, const nlm4_shareargs& args) {
  nlm4_shareres res;
  res.cookie = args.cookie;
  std::string file;
  res.stat = resolver_(ctx, args.share.fh, &file);
  if (res.stat != NLM4_GRANTED) return res;
  if (!args.reclaim && InGrace()) {
    res.stat = NLM4_DENIED_GRACE_PERIOD;
    return res;
  }
  absl::MutexLock lock(&mu_);
  res.stat = NoteHost(ctx, args.share.caller_name, true, 0);
  if (res.stat != NLM4_GRANTED) return res;
  res.stat = shares_.Share(
      file, {args.share.caller_name, args.share.oh, args.share.mode, args.share.access});
  return res;
}

nlm4_shareres NlmService::Unshare(const rpc::CallContext& ctx, const nlm4_shareargs& args) {
  nlm4_shareres res;
  res.cookie = args.cookie;
  std::string file;
  res.stat = resolver_(ctx, args.share.fh, &file);
  if (res.stat != NLM4_GRANTED) return res;
  absl::MutexLock lock(&mu_);
  if (FromHostLocked(ctx, args.share.caller_name, "UNSHARE")) {
    shares_.Unshare(file, args.share.caller_name, args.share.oh);
  }
  return res;
}

void NlmService::FreeAll(const rpc::CallContext& ctx, const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (!FromHostLocked(ctx, name, "FREE_ALL")) return;
  for (const std::string& file : ReleaseHostLocked(name)) GrantWaiters(file);
}

bool NlmService::HostRebooted(const std::string& name, int32_t state, const sockaddr_storage* from,
                              bool trusted) {
  const std::string address = from ? AddressString(*from) : "";
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  auto named = hosts_.find(name);
  if (named != hosts_.end() &&
      (trusted || (!address.empty() && named->second.address == address))) {
    names.push_back(name);
  } else if (!address.empty()) {
    // The name in SM_NOTIFY need not be the one in its locks (a short name
    // and a qualified one): the hosts bound to the sender's address.
    for (const auto& [host_name, host] : hosts_) {
      if (host.address == address) names.push_back(host_name);
    }
  }
  if (names.empty() && named != hosts_.end()) {
    LogRefusalLocked(absl::StrFormat("SM_NOTIFY naming %s (bound to %s) from %s", name,
                                     named->second.address, address));
  }
  bool released = false;
  std::vector<std::string> files;  // granted to waiters once every name went
  for (const std::string& n : names) {
    // Root here may clear a client whose NSM state went back (its state
    // file was lost): it could stop nfs3d anyway.
    const int32_t known = hosts_.find(n)->second.nsm_state;
    if (!trusted && known != 0 && !NewerState(state, known)) {
      LogRefusalLocked(
          absl::StrFormat("SM_NOTIFY for %s with state %d, not newer than %d", n, state, known));
      continue;
    }
    NFS3D_LOG_INFO("lock manager: client %s rebooted: releasing its locks", n);
    std::vector<std::string> of_host = ReleaseHostLocked(n);
    files.insert(files.end(), of_host.begin(), of_host.end());
    released = true;
  }
  for (const std::string& file : files) GrantWaiters(file);
  return released;
}

std::vector<std::string> NlmService::ReleaseHostLocked(const std::string& name) {
  std::vector<std::string> files = table_.ReleaseHost(name);
  if (mirror_ != nullptr) mirror_->ForgetHost(name);
  shares_.ReleaseHost(name);
  blocked_.remove_if([&](const Blocked& b) { return b.owner.host == name; });
  for (auto it = grants_.begin(); it != grants_.end();) {
    it = it->second.owner.host == name ? grants_.erase(it) : std::next(it);
  }
  auto host = hosts_.find(name);
  if (host != hosts_.end()) {
    if (host->second.recorded && store_ != nullptr) {
      if (absl::Status s = store_->RemoveHost(name); !s.ok()) {
        NFS3D_LOG_WARNING("lock manager: %s", s.ToString());
      }
    }
    hosts_.erase(host);
  }
  // Nothing owed to it any more: its name may be bound anew.
  previous_hosts_.erase(std::remove(previous_hosts_.begin(), previous_hosts_.end(), name),
                        previous_hosts_.end());
  return files;
}

// After the grace period, clients that were told to reclaim and hold nothing
// need no notification after the next restart.
void NlmService::ForgetUnreclaimedLocked() {
  grace_cleanup_done_ = true;
  for (const std::string& name : previous_hosts_) {
    if (HoldsStateLocked(name)) continue;
    auto it = hosts_.find(name);
    if (it == hosts_.end()) continue;
    if (store_ != nullptr) store_->RemoveHost(name).IgnoreError();
    hosts_.erase(it);
  }
  previous_hosts_.clear();
}

std::vector<nlm::Lock> NlmService::OwnLocksIn(const std::string& file, const LockOwner& owner,
                                              uint64_t first, uint64_t last) const {
  std::vector<nlm::Lock> own;
  for (nlm::Lock l : table_.LocksOf(file)) {
    if (!(l.owner == owner) || l.last < first || l.first > last) continue;
    l.first = std::max(l.first, first);
    l.last = std::min(l.last, last);
    own.push_back(std::move(l));
  }
  return own;
}

void NlmService::GrantWaiters(const std::string& file) {
  for (auto it = blocked_.begin(); it != blocked_.end();) {
    if (it->file != file) {
      ++it;
      continue;
    }
    std::vector<nlm::Lock> held_before = OwnLocksIn(file, it->owner, it->first, it->last);
    if (LockMirrored(file, it->owner, it->first, it->last, it->exclusive) != LockResult::kGranted) {
      ++it;
      continue;
    }
    uint64_t id = next_grant_id_++;
    Grant& grant = grants_[id];
    grant.held_before = std::move(held_before);
    static_cast<Blocked&>(grant) = std::move(*it);
    it = blocked_.erase(it);
    PostGranted(id, grant);
  }
}

void NlmService::PostGranted(uint64_t grant_id, const Blocked& granted) {
  if (!runner_.Post([this, grant_id, granted] { SendGranted(grant_id, granted); })) {
    // Cannot deliver now: the client's next poll (LOCK again) finds it held.
    NFS3D_LOG_WARNING("lock manager: callback queue full; %s will poll", granted.owner.host);
  }
}

bool NlmService::WouldDeadlock(const std::string& file, const LockOwner& owner, uint64_t first,
                               uint64_t last, bool exclusive) const {
  // Walks "waits for" edges from the request: to the owners of the locks it
  // conflicts with, from each of them to the owners their own queued
  // requests conflict with, and so on; reaching the requester is a cycle.
  // The walk runs under the lock manager's mutex, so it stops after
  // kMaxDeadlockOwners owners (then the request just waits): clients
  // cannot make every LOCK scan the whole table.
  constexpr size_t kMaxDeadlockOwners = 256;
  std::vector<LockOwner> frontier, seen;
  auto add_holders = [&](const std::string& f, const LockOwner& waiter, uint64_t lo, uint64_t hi,
                         bool excl) {
    for (const nlm::Lock& l : table_.LocksOf(f)) {
      if (l.owner == waiter || l.last < lo || hi < l.first || !(excl || l.exclusive)) continue;
      if (std::find(seen.begin(), seen.end(), l.owner) != seen.end()) continue;
      seen.push_back(l.owner);
      frontier.push_back(l.owner);
    }
  };
  add_holders(file, owner, first, last, exclusive);
  while (!frontier.empty() && seen.size() <= kMaxDeadlockOwners) {
    const LockOwner holder = frontier.back();
    frontier.pop_back();
    if (holder == owner) return true;
    for (const Blocked& b : blocked_) {
      if (b.owner == holder) add_holders(b.file, b.owner, b.first, b.last, b.exclusive);
    }
  }
  return false;
}

void NlmService::SetMirror(LockMirror* mirror) {
  absl::MutexLock lock(&mu_);
  mirror_ = mirror;
}

LockResult NlmService::LockMirrored(const std::string& file, const LockOwner& owner, uint64_t first,
                                    uint64_t last, bool exclusive) {
  if (mirror_ != nullptr && !mirror_->Set(file, owner, first, last, exclusive)) {
    return LockResult::kConflict;  // held by a process on the server
  }
  const LockResult result = table_.Lock(file, owner, first, last, exclusive);
  // Rare (a limit, or a conflict with an owner the mirror could not hold):
  // the mirror shows the table again. That briefly unlocks the range there.
  if (result != LockResult::kGranted) SyncMirror(file, owner, first, last);
  return result;
}

LockResult NlmService::UnlockMirrored(const std::string& file, const LockOwner& owner,
                                      uint64_t first, uint64_t last) {
  const LockResult result = table_.Unlock(file, owner, first, last);
  SyncMirror(file, owner, first, last);
  return result;
}

void NlmService::SyncMirror(const std::string& file, const LockOwner& owner, uint64_t first,
                            uint64_t last) {
  if (mirror_ == nullptr) return;
  mirror_->Set(file, owner, first, last, std::nullopt);
  bool holds_any = false;
  for (const nlm::Lock& l : table_.LocksOf(file)) {
    if (!(l.owner == owner)) continue;
    holds_any = true;
    if (l.last < first || last < l.first) continue;
    mirror_->Set(file, owner, std::max(l.first, first), std::min(l.last, last), l.exclusive);
  }
  if (!holds_any) mirror_->Forget(file, owner);  // its descriptor goes too
}

void NlmService::SendGranted(uint64_t grant_id, const Blocked& b) {
  PeerCall call;
  call.peer = b.peer;
  call.transport = b.transport;
  call.prog = kProgram;
  call.vers = b.vers;
  call.proc = kGranted;
  nlm4_testargs args;
  args.cookie = b.cookie;
  args.exclusive = b.exclusive;
  args.alock = b.alock;
  if (b.vers == kVersion4) {
    call.args = EncodeToString(args);
  } else {
    call.args = EncodeToString(static_cast<const nlm_testargs&>(args));
  }
  absl::StatusOr<std::string> reply = caller_->Call(call);
  nlm4_res res;
  bool refused = false;
  if (reply.ok()) {
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(reply->data()), reply->size());
    refused = Decode(d, &res) && res.stat != NLM4_GRANTED;
  } else {
    // Undelivered: keep the lock; the waiting client polls with LOCK again
    // (Linux every 30 s) and is then told it has it.
    NFS3D_LOG_WARNING("lock manager: GRANTED callback to %s failed: %s", b.owner.host,
                      reply.status().ToString());
  }
  if (reply.ok() && !refused) {
    NFS3D_LOG_INFO("lock manager: GRANTED callback to %s delivered", b.owner.host);
  }
  absl::MutexLock lock(&mu_);
  auto it = grants_.find(grant_id);
  if (it == grants_.end()) return;
  if (refused && !it->second.confirmed) {
    // The client no longer waits for it (e.g. the process was interrupted):
    // the range goes back to what the owner held before.
    UnlockMirrored(b.file, b.owner, b.first, b.last);
    for (const nlm::Lock& l : it->second.held_before) {
      LockMirrored(b.file, b.owner, l.first, l.last, l.exclusive);
    }
    grants_.erase(it);
    GrantWaiters(b.file);
    return;
  }
  grants_.erase(it);
}

void NlmService::SendNotify(const MonitoredHost& host) {
  PeerCall call;
  if (!ParseAddress(host.address, &call.peer)) return;
  // A client on this very machine (calling our own address) would be
  // "notified" through nfs3d's own NSM, which would take it for a reboot.
  if (host.address == host.local_address) return;
  call.transport = rpc::Transport::kUdp;
  call.prog = nsm::kProgram;
  call.vers = nsm::kVersion;
  call.proc = nsm::kNotify;
  nsm::stat_chge args;
  // The client monitors us under the address it mounted from.
  args.mon_name = host.local_address;
  args.state = nsm_state();
  call.args = EncodeToString(args);
  for (int attempt = 1; attempt <= options_.notify_attempts && !stopping_; ++attempt) {
    absl::StatusOr<std::string> reply = caller_->Call(call);
    if (reply.ok()) {
      NFS3D_LOG_INFO("lock manager: told %s (%s) to reclaim its locks", host.name, host.address);
      return;
    }
    NFS3D_LOG_WARNING("lock manager: SM_NOTIFY to %s (%s), attempt %d: %s", host.name, host.address,
                      attempt, reply.status().ToString());
    absl::Time until = absl::Now() + options_.notify_retry;
    while (!stopping_ && absl::Now() < until) absl::SleepFor(absl::Milliseconds(50));
  }
}

void NlmService::SendResult(const rpc::CallContext& ctx, uint32_t res_proc, std::string encoded) {
  if (ctx.transport == nullptr) return;
  PeerCall call;
  call.peer = ctx.transport->peer;
  call.transport = ctx.transport->transport;
  call.prog = kProgram;
  call.vers = ctx.vers;
  call.proc = res_proc;
  call.args = std::move(encoded);
  CallAsync(std::move(call));
}

void NlmService::CallAsync(PeerCall call) {
  runner_.Post([this, call = std::move(call)] {
    absl::StatusOr<std::string> reply = caller_->Call(call);
    if (!reply.ok()) {
      NFS3D_LOG_WARNING("lock manager: call %u/%u/%u to %s failed: %s", call.prog, call.vers,
                        call.proc, AddressString(call.peer), reply.status().ToString());
    }
  });
}

}  // namespace nfs3d::nlm
