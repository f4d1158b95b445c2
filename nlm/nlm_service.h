// nfs3d's lock manager: the state behind the NLM procedures. It holds the
// byte-range lock table and share reservations, the queue of blocked LOCK
// requests (granted in order with a GRANTED callback when a conflicting lock
// goes away), the grace period after a restart, and which clients hold locks
// (recorded in the StatusStore so they can be told to reclaim after a
// restart).
//
// A blocking LOCK that would wait, directly or through other waiters, for a
// lock its own owner holds is refused with NLM4_DEADLCK instead of queued
// (as knfsd's lockd does); locks of processes on the server are not part of
// that graph.
//
// Idempotency: a LOCK the owner already holds is granted again without a
// second record (the table replaces an owner's range), a re-sent blocking
// LOCK finds its queued entry instead of queueing twice, and LOCK/UNLOCK/
// CANCEL rows are non-idempotent so the duplicate request cache answers
// retransmissions with the first reply.
//
// A client host is its caller_name *and* the address it calls from (as in
// knfsd's lockd): a name is bound to the address of its first call, and while
// it holds anything (locks, shares, waiters, or a reclaim still owed in the
// grace period) calls naming it from another address change nothing of its
// state: UNLOCK, UNSHARE and FREE_ALL do nothing, CANCEL finds no waiter,
// LOCK and SHARE are refused with NLM4_DENIED_NOLOCKS, SM_NOTIFY is ignored
// (unless it comes from root on loopback: a local statd). A name holding
// nothing is rebound to its next caller's address. TEST does not hand out
// the owner handle of a conflicting lock (knfsd's nlmsvc_testlock neither).
//
// Thread-safe. Outgoing calls run on a TaskRunner, never under the mutex.
#ifndef NFS3D_NLM_NLM_SERVICE_H_
#define NFS3D_NLM_NLM_SERVICE_H_

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "common/rate_limited_log.h"
#include "nlm/lock_mirror.h"
#include "nlm/lock_table.h"
#include "nlm/nlm4_types.h"
#include "nlm/nlm_snapshot.h"
#include "nlm/peer_caller.h"
#include "nlm/share_table.h"
#include "nlm/status_store.h"
#include "nlm/task_runner.h"
#include "rpc/call_context.h"

namespace nfs3d::nlm {

struct NlmOptions {
  absl::Duration grace_period = absl::Seconds(90);
  LockLimits limits;
  size_t max_shares = 4096;
  size_t max_blocked = 4096;  // queued blocking LOCKs, all clients
  size_t max_blocked_per_host = 256;
  size_t max_hosts = 4096;  // distinct client names known at once
  size_t callback_threads = 2;
  int notify_attempts = 5;  // SM_NOTIFY tries per host after a restart
  absl::Duration notify_retry = absl::Seconds(2);
};

// Checks that the caller may use the NLM file handle `fh` and sets *key to
// the identity of the file in the lock table. Returns NLM4_GRANTED or the
// status to answer with (NLM4_STALE_FH, NLM4_FAILED, ...).
using FileResolver =
    std::function<nlm4_stats(const rpc::CallContext& ctx, const std::string& fh, std::string* key)>;

class NlmService {
 public:
  // `caller` must outlive the service; `store` may be null (nothing is
  // persisted, no restart notification).
  NlmService(NlmOptions options, FileResolver resolver, PeerCaller* caller, StatusStore* store);
  ~NlmService();
  NlmService(const NlmService&) = delete;
  NlmService& operator=(const NlmService&) = delete;

  // Mirrors every lock onto `mirror` too (may be null: none), so processes
  // on the server and NLM clients see each other's locks. A lock blocked by
  // a local process is granted when the client asks again (Linux polls every
  // 30 s), not by a GRANTED callback: nothing tells nfs3d when a local lock
  // goes. Call before Start; `mirror` must outlive the service.
  void SetMirror(LockMirror* mirror);

  // A grace period kept elsewhere as well: the other heads of a cluster
  // serving the same files (nlm/cluster_grace.h). While it returns
  // true, new locks are refused here too. Call before Start; may be slow
  // (it is never called under the service's lock).
  void SetOtherGrace(std::function<bool()> in_grace) { other_grace_ = std::move(in_grace); }

  // Begins serving. With `grace`, new locks are refused for the grace period
  // while clients reclaim. Sends SM_NOTIFY to the hosts the store remembers.
  // Start is Open then NotifyPreviousHosts.
  void Start(bool grace);
  // The first half of Start, before the server answers its first call (so
  // no lock is granted ahead of the grace period); NotifyPreviousHosts once
  // clients can reach the server (listening and registered) to reclaim.
  void Open(bool grace);
  void NotifyPreviousHosts();
  // Stops outgoing calls. Idempotent.
  void Stop();
  // Handover to a successor process (nlm/nlm_snapshot.h): the state, taken
  // once no call runs any more (after Stop). A grace period that ended
  // has its clean-up done first.
  NlmSnapshot Snapshot();
  // Instead of Start, in the successor: serves the predecessor's locks,
  // shares and hosts as they were (the mirror already holds the locks: see
  // OfdLockMirror::Adopt), with no grace period beyond the one that was
  // running and no SM_NOTIFY: no client lost anything.
  void StartFrom(const NlmSnapshot& snapshot);

  nlm4_testres Test(const rpc::CallContext& ctx, const nlm4_testargs& args);
  // monitored: false for NM_LOCK (the host is not recorded for notification).
  nlm4_res Lock(const rpc::CallContext& ctx, const nlm4_lockargs& args, bool monitored);
  nlm4_res Cancel(const rpc::CallContext& ctx, const nlm4_cancargs& args);
  nlm4_res Unlock(const rpc::CallContext& ctx, const nlm4_unlockargs& args);
  nlm4_shareres Share(const rpc::CallContext& ctx, const nlm4_shareargs& args);
  nlm4_shareres Unshare(const rpc::CallContext& ctx, const nlm4_shareargs& args);
  // FREE_ALL: drop everything host `name` holds, if the call comes from it.
  void FreeAll(const rpc::CallContext& ctx, const std::string& name);
  // SM_NOTIFY: the host called `name` rebooted and is now in NSM state
  // `state`: its locks, shares and waiters go. Honoured when it comes from
  // the host's address (`from`, may be null) and only if `state` is newer
  // than the last one the host announced in a LOCK, or from a `trusted`
  // caller (root on loopback) whatever the state. A name not known here
  // stands for the hosts bound to `from` (a client calling itself by another
  // name in SM_NOTIFY). Returns whether a host's state went.
  bool HostRebooted(const std::string& name, int32_t state, const sockaddr_storage* from,
                    bool trusted);

  // Sends the encoded results of a *_MSG call to the caller's lock manager
  // as procedure `res_proc` (the matching *_RES).
  void SendResult(const rpc::CallContext& ctx, uint32_t res_proc, std::string encoded);
  // Queues an outgoing call whose result does not matter.
  void CallAsync(PeerCall call);

  // True while new locks are refused: this server's grace period after a
  // restart, or another head's (SetOtherGrace).
  bool InGrace() const;
  int32_t nsm_state() const { return store_ ? store_->state() : 1; }

  // For tests and stats.
  size_t lock_count() const;
  size_t blocked_count() const;
  std::vector<nlm::Lock> LocksOf(const std::string& file) const;
  void DrainCallbacks() { runner_.Drain(); }

 private:
  struct Blocked {
    std::string file;
    LockOwner owner;
    uint64_t first = 0, last = 0;
    bool exclusive = false;
    nlm4_lock alock;
    netobj cookie;
    sockaddr_storage peer{};
    rpc::Transport transport = rpc::Transport::kUdp;
    uint32_t vers = kVersion4;
  };
  // A lock handed to a waiter whose GRANTED callback is in flight.
  struct Grant : Blocked {
    bool confirmed = false;  // the owner asked again and got it: keep it whatever the callback says
    // The owner's own locks inside the range before the grant (e.g. the
    // shared lock it waited to upgrade): put back if the client refuses it.
    std::vector<nlm::Lock> held_before;
  };
  struct Host {
    std::string address;  // the one it is bound to
    std::string local_address;
    bool recorded = false;
    int32_t nsm_state = 0;  // the last one its LOCKs named; 0: not known
  };

  // Remembers the caller; records it durably before its first monitored lock.
  // NLM4_DENIED_NOLOCKS if `name` is bound to another address and holds state.
  nlm4_stats NoteHost(const rpc::CallContext& ctx, const std::string& name, bool monitored,
                      int32_t nsm_state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True if the call comes from the address host `name` is bound to; false
  // for a name not known here, logged (`what` is the call) for another address.
  bool FromHostLocked(const rpc::CallContext& ctx, const std::string& name, const char* what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True if `name` has anything another address must not take over.
  bool HoldsStateLocked(const std::string& name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A call refused for coming from the wrong address: a warning at most
  // every 10 s, with the count of those held back (refusal_log_).
  void LogRefusalLocked(const std::string& what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void GrantWaiters(const std::string& file) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // owner's locks of `file` that overlap [first, last], cut to it.
  std::vector<nlm::Lock> OwnLocksIn(const std::string& file, const LockOwner& owner, uint64_t first,
                                    uint64_t last) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues the GRANTED callback of grants_[grant_id].
  void PostGranted(uint64_t grant_id, const Blocked& granted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Handover (nlm_handover.cc): the queue and the undelivered grants, and back.
  void SnapshotWaitersLocked(NlmSnapshot* snapshot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartWaitersLocked(const NlmSnapshot& snapshot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True if owner waiting for [first, last] of file would close a cycle of
  // NLM owners each waiting for a lock the next one holds (NLM4_DEADLCK).
  bool WouldDeadlock(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
                     bool exclusive) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // LockTable::Lock and Unlock, mirrored: a lock is taken on the mirror
  // first (a local conflict is a conflict), and the mirror is made to show
  // the table's state again whenever the table did not change as asked.
  LockResult LockMirrored(const std::string& file, const LockOwner& owner, uint64_t first,
                          uint64_t last, bool exclusive) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  LockResult UnlockMirrored(const std::string& file, const LockOwner& owner, uint64_t first,
                            uint64_t last) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the mirror over [first, last] to what the table holds for owner.
  void SyncMirror(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops everything of host `name`; returns the files whose waiters may now
  // get their locks (GrantWaiters), left to the caller so that one SM_NOTIFY
  // releasing several names grants nothing to a name it releases next.
  std::vector<std::string> ReleaseHostLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetUnreclaimedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendGranted(uint64_t grant_id, const Blocked& blocked);
  void SendNotify(const MonitoredHost& host);

  const NlmOptions options_;
  const FileResolver resolver_;
  PeerCaller* const caller_;
  StatusStore* const store_;
  std::atomic<bool> stopping_{false};

  mutable absl::Mutex mu_;
  absl::Time grace_end_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool grace_cleanup_done_ ABSL_GUARDED_BY(mu_) = true;
  LockTable table_ ABSL_GUARDED_BY(mu_);
  LockMirror* mirror_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::function<bool()> other_grace_;  // set before Start, then only read
  ShareTable shares_ ABSL_GUARDED_BY(mu_);
  std::list<Blocked> blocked_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Grant> grants_ ABSL_GUARDED_BY(mu_);
  uint64_t next_grant_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, Host> hosts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> previous_hosts_ ABSL_GUARDED_BY(mu_);  // to forget after grace
  log::RateLimitedLog refusal_log_{absl::Seconds(10)};

  TaskRunner runner_;  // last: its threads stop before the state above goes
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NLM_SERVICE_H_
