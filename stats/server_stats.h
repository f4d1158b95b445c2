// Server statistics kept on the hot path: per-procedure call/error counters
// per transport, per-procedure latency histograms, RPC-level rejections,
// retransmissions seen, READ/WRITE byte counts and size distributions.
//
// Cost: every worker thread writes only its own shard (a plain relaxed load
// + store per counter, no lock, no read-modify-write on a shared cache line);
// a snapshot sums the shards. A thread finds its shard through a one-entry
// thread_local cache keyed by the registry's unique id, so several registries
// in one process (tests) work.
//
// With the CMake option NFS3D_STATS=OFF, NFS3D_STATS_ENABLED is 0 and
// CallRecorder does nothing: the hot path carries no statistics code at all.
#ifndef NFS3D_STATS_SERVER_STATS_H_
#define NFS3D_STATS_SERVER_STATS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/types/span.h"

#include "common/auth_flavor.h"
#include "stats/latency_buckets.h"
#include "stats/origin_table.h"
#include "xdr/buffer_chain.h"

#ifndef NFS3D_STATS_ENABLED
#define NFS3D_STATS_ENABLED 1
#endif

namespace nfs3d::stats {

// Transport index: 0 = udp, 1 = tcp (the values of rpc::Transport).
inline constexpr int kNumTransports = 2;
inline constexpr const char* kTransportNames[kNumTransports] = {"udp", "tcp"};

inline constexpr int kMaxSlots = 256;    // procedures over all programs and versions
inline constexpr int kMaxVersions = 32;  // (program, version) pairs
// Size bucket i counts READ/WRITE transfers of at most 512 << i bytes
// (512 B .. 1 MiB); the last bucket is +Inf.
inline constexpr int kSizeBuckets = 12;

// Why a call message did not run a procedure to a normal reply.
enum class RpcEvent : uint8_t {
  kNone = 0,
  kMalformed,    // undecodable header: dropped (nfsstat "badfmt")
  kRpcMismatch,  // RPC version != 2
  kAuthError,    // credential/verifier refused, or AUTH_TOOWEAK from a procedure
  kProgUnavail,
  kProgMismatch,
  kProcUnavail,
  kGarbageArgs,
  kSystemErr,
  kDropped,        // procedure asked for no reply
  kDrcReplay,      // retransmission answered from the duplicate request cache
  kDrcInProgress,  // retransmission dropped: the original is still running
  kCount,
};
inline constexpr int kNumRpcEvents = static_cast<int>(RpcEvent::kCount);
// Prometheus label values, indexed by RpcEvent.
const char* RpcEventName(RpcEvent event);
// True for the events that count as a failed call (not the DRC ones).
inline bool IsRpcError(RpcEvent e) {
  return e != RpcEvent::kNone && e != RpcEvent::kDrcReplay && e != RpcEvent::kDrcInProgress;
}

// The counter slot of the auth flavor a call ran under (common/auth_flavor.h:
// AUTH_NONE, AUTH_SYS, the Kerberos pseudo-flavors of RPCSEC_GSS; anything
// else is "other").
enum class FlavorSlot : uint8_t { kNone = 0, kSys, kKrb5, kKrb5i, kKrb5p, kOther, kCount };
inline constexpr int kNumFlavors = static_cast<int>(FlavorSlot::kCount);
FlavorSlot FlavorSlotOf(uint32_t flavor);
// Prometheus label values: the flavor's sec= name, or "other".
const char* FlavorSlotName(FlavorSlot slot);

// Written by one thread only: relaxed load + store, no atomic RMW.
class Counter {
 public:
  void Add(uint64_t n) {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t Get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

struct ProcShard {
  Counter calls[kNumTransports];
  Counter errors[kNumTransports];
  Counter latency[kLatencyBuckets + 1];
  Counter latency_ns;
};

// A lock for a shard's own thread and the rare snapshot: taking it is one
// atomic exchange, releasing it a plain store (std::mutex costs two atomic
// read-modify-writes per call).
class ShardLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

// Per-origin tables of one shard: its thread records under `mu`, which only
// snapshots contend for.
struct OriginShard {
  OriginShard(size_t clients, size_t exports, size_t users)
      : clients(clients), exports(exports), users(users) {}
  ShardLock mu;
  OriginTable clients;
  OriginTable exports;
  OriginTable users;
};

// How many origins each shard tracks exactly (and each snapshot keeps);
// zero clients turns per-origin accounting off.
struct OriginLimits {
  size_t clients = 128;
  size_t exports = 64;
  size_t users = 64;
};

struct OriginsSnapshot {
  OriginSnapshot clients;
  OriginSnapshot exports;
  OriginSnapshot users;
};

class SlowCallLog;

struct Shard {
  std::unique_ptr<OriginShard> origins;  // null: per-origin accounting off
  ProcShard procs[kMaxSlots];
  Counter messages[kNumTransports];  // every call message received
  Counter events[kNumTransports][kNumRpcEvents];
  Counter flavors[kNumTransports][kNumFlavors];  // authenticated calls
  Counter read_bytes;
  Counter write_bytes;
  Counter read_sizes[kSizeBuckets + 1];
  Counter write_sizes[kSizeBuckets + 1];
};

inline int SizeBucket(uint64_t bytes) {
  if (bytes <= 512) return 0;
  int b = 64 - __builtin_clzll((bytes - 1) >> 9);
  return b < kSizeBuckets ? b : kSizeBuckets;
}
// Upper bounds, for printing.
inline uint64_t SizeBound(int bucket) { return 512ull << bucket; }

// Summed over every shard.
struct ProcSnapshot {
  std::string program;  // "nfs", "mount", ...
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  std::string name;  // "READ"
  std::array<uint64_t, kNumTransports> calls{};
  std::array<uint64_t, kNumTransports> errors{};
  std::array<uint64_t, kLatencyBuckets + 1> latency{};  // per bucket, not cumulative
  uint64_t latency_ns = 0;
};

struct Snapshot {
  std::vector<ProcSnapshot> procs;
  std::array<uint64_t, kNumTransports> messages{};
  std::array<std::array<uint64_t, kNumRpcEvents>, kNumTransports> events{};
  std::array<std::array<uint64_t, kNumFlavors>, kNumTransports> flavors{};
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  std::array<uint64_t, kSizeBuckets + 1> read_sizes{};
  std::array<uint64_t, kSizeBuckets + 1> write_sizes{};
};

class ServerStats {
 public:
  ServerStats();
  ~ServerStats();
  ServerStats(const ServerStats&) = delete;
  ServerStats& operator=(const ServerStats&) = delete;

  // Gives the procedures of (prog, vers) their slots; names[i] names
  // procedure i. Registering the same pair again keeps its slots. Returns
  // false when the slots ran out (those procedures are then not counted).
  bool AddProgramVersion(uint32_t prog, uint32_t vers, const std::string& program,
                         const std::vector<std::string>& names);
  // First slot of (prog, vers), or -1; `count` receives the number of
  // procedures. Lock-free.
  int SlotBase(uint32_t prog, uint32_t vers, uint32_t* count) const;

  // The calling thread's shard.
  Shard& Local() {
    thread_local LocalCache cache;
    if (cache.owner == id_) return *cache.shard;
    return LocalSlow(&cache);
  }

  // Every counter summed over the shards, plus what was carried over.
  Snapshot Take() const;
  // Counts `earlier` (a predecessor's counters, handed over) in every later
  // Take: a procedure by (prog, vers, proc), arrays element by element.
  void Carry(const Snapshot& earlier);

  // Before the first call is recorded (shards made earlier keep theirs).
  void SetOriginLimits(const OriginLimits& limits);
  OriginLimits origin_limits() const;
  // Merged over every shard: the busiest origins of each kind.
  OriginsSnapshot TakeOrigins() const;

  // Calls slower than its threshold are logged there; null: none. The log
  // must outlive every call recorded.
  void SetSlowCallLog(SlowCallLog* log) { slow_log_.store(log, std::memory_order_release); }
  SlowCallLog* slow_log() const { return slow_log_.load(std::memory_order_acquire); }

 private:
  struct LocalCache {
    uint64_t owner = 0;
    Shard* shard = nullptr;
  };
  struct VersionSlots {
    uint32_t prog = 0;
    uint32_t vers = 0;
    int base = 0;
    uint32_t count = 0;
  };
  Shard& LocalSlow(LocalCache* cache);

  const uint64_t id_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Shard>> shards_;                // guarded by mu_
  std::vector<std::pair<uint64_t, Shard*>> shard_of_thread_;  // native thread id -> shard
  std::array<VersionSlots, kMaxVersions> versions_{};         // [0, num_versions_) published
  std::atomic<int> num_versions_{0};
  int next_slot_ = 0;                     // guarded by mu_
  std::vector<ProcSnapshot> slot_names_;  // guarded by mu_; names only
  OriginLimits origin_limits_;            // guarded by mu_
  std::atomic<SlowCallLog*> slow_log_{nullptr};
  Snapshot carried_;  // guarded by mu_
};

// Adds every counter of `from` to `into`; a procedure `into` lacks is
// appended.
void AddSnapshot(const Snapshot& from, Snapshot* into);

#if NFS3D_STATS_ENABLED

// Records one call message when it goes out of scope. The dispatcher creates
// one per call and tells it what happened; `stats` may be null (no-op).
class CallRecorder {
 public:
  CallRecorder(ServerStats* stats, int transport, const xdr::BufferChain* reply)
      : stats_(stats), reply_(reply), transport_(transport) {
    if (stats_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~CallRecorder() { Settle(); }
  CallRecorder(const CallRecorder&) = delete;
  CallRecorder& operator=(const CallRecorder&) = delete;

  void Event(RpcEvent event) { event_ = event; }
  // The call resolved to procedure `proc` of (prog, vers).
  void Procedure(uint32_t prog, uint32_t vers, uint32_t proc) {
    prog_ = prog;
    vers_ = vers;
    proc_ = proc;
    has_proc_ = true;
  }
  // Offset in the reply where the procedure's results begin.
  void ResultsAt(size_t offset) {
    results_at_ = offset;
    if (stats_ != nullptr && stats_->slow_log() != nullptr) {
      run_start_ = std::chrono::steady_clock::now();
    }
  }
  // The client address the call came from.
  void Peer(const sockaddr_storage& peer) {
    if (stats_ == nullptr) return;
    client_ = ClientKey(peer);
    has_peer_ = true;
  }
  // The authenticated caller: a uid, or for RPCSEC_GSS its principal.
  void User(uint32_t flavor, uint32_t uid, const std::string& principal);
  // The export the call's file handle belongs to.
  void Export(uint32_t export_id) { export_ = ExportKey(export_id); }
  // The procedure `name` returned; `args` (its arguments) are still alive.
  // Keeps what the slow-call log would want if the call is slow so far.
  void Ran(const char* program, const char* name, uint32_t xid, absl::Span<const uint8_t> args);
  // The call was authenticated with this RPC flavor.
  void AuthFlavor(uint32_t flavor) {
    flavor_ = FlavorSlotOf(flavor);
    has_flavor_ = true;
  }
  // Records the call now, from the reply as it is (before RPCSEC_GSS seals
  // it); nothing more is recorded later.
  void Settle() {
    if (stats_ != nullptr) Finish();
    stats_ = nullptr;
  }

 private:
  void Finish();
  // Adds the call to its client, export and user.
  void RecordOrigins(Shard& s, const CallOutcome& call);
  // The status and READ/WRITE count in the results; counts the bytes.
  void ReadResults(Shard& s, CallOutcome* call);
  void LogIfSlow(uint64_t ns);

  ServerStats* stats_;
  const xdr::BufferChain* reply_;
  std::chrono::steady_clock::time_point start_;
  int transport_;
  RpcEvent event_ = RpcEvent::kNone;
  bool has_proc_ = false;
  bool has_flavor_ = false;
  FlavorSlot flavor_ = FlavorSlot::kNone;
  uint32_t prog_ = 0, vers_ = 0, proc_ = 0;
  size_t results_at_ = 0;
  bool has_peer_ = false;
  OriginKey client_;
  OriginKey export_;  // kNoExport until Export()
  OriginKey user_;    // {0, 0}: not authenticated
  std::string principal_;
  // For the slow-call log only (filled when the call is already slow).
  const char* program_name_ = nullptr;
  const char* proc_name_ = nullptr;
  std::chrono::steady_clock::time_point run_start_;
  std::chrono::steady_clock::time_point ran_at_;
  uint32_t xid_ = 0;
  uint8_t handle_len_ = 0;
  uint8_t handle_[64];
};

#else  // statistics compiled out

class CallRecorder {
 public:
  CallRecorder(ServerStats*, int, const xdr::BufferChain*) {}
  void Event(RpcEvent) {}
  void Procedure(uint32_t, uint32_t, uint32_t) {}
  void ResultsAt(size_t) {}
  void Peer(const sockaddr_storage&) {}
  void User(uint32_t, uint32_t, const std::string&) {}
  void Export(uint32_t) {}
  void Ran(const char*, const char*, uint32_t, absl::Span<const uint8_t>) {}
  void AuthFlavor(uint32_t) {}
  void Settle() {}
};

#endif

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_SERVER_STATS_H_
