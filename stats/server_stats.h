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
#include <vector>

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
// Latency bucket i counts calls that took at most 2^i microseconds
// (1 us .. ~8.4 s); the last bucket is +Inf.
inline constexpr int kLatencyBuckets = 24;
// Size bucket i counts READ/WRITE transfers of at most 512 << i bytes
// (512 B .. 1 MiB); the last bucket is +Inf.
inline constexpr int kSizeBuckets = 12;

// Why a call message did not run a procedure to a normal reply.
enum class RpcEvent : uint8_t {
  kNone = 0,
  kMalformed,       // undecodable header: dropped (nfsstat "badfmt")
  kRpcMismatch,     // RPC version != 2
  kAuthError,       // credential/verifier refused, or AUTH_TOOWEAK from a procedure
  kProgUnavail,
  kProgMismatch,
  kProcUnavail,
  kGarbageArgs,
  kSystemErr,
  kDropped,         // procedure asked for no reply
  kDrcReplay,       // retransmission answered from the duplicate request cache
  kDrcInProgress,   // retransmission dropped: the original is still running
  kCount,
};
inline constexpr int kNumRpcEvents = static_cast<int>(RpcEvent::kCount);
// Prometheus label values, indexed by RpcEvent.
const char* RpcEventName(RpcEvent event);
// True for the events that count as a failed call (not the DRC ones).
inline bool IsRpcError(RpcEvent e) {
  return e != RpcEvent::kNone && e != RpcEvent::kDrcReplay && e != RpcEvent::kDrcInProgress;
}

// The auth flavor a call ran under (RFC 5531 flavors; Kerberos as the
// RFC 2623 pseudo-flavors of RPCSEC_GSS).
enum class Flavor : uint8_t { kNone = 0, kSys, kKrb5, kKrb5i, kKrb5p, kOther, kCount };
inline constexpr int kNumFlavors = static_cast<int>(Flavor::kCount);
Flavor FlavorOf(uint32_t rpc_flavor);
// Prometheus label values, indexed by Flavor.
const char* FlavorName(Flavor flavor);

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

struct Shard {
  ProcShard procs[kMaxSlots];
  Counter messages[kNumTransports];  // every call message received
  Counter events[kNumTransports][kNumRpcEvents];
  Counter flavors[kNumTransports][kNumFlavors];  // authenticated calls
  Counter read_bytes;
  Counter write_bytes;
  Counter read_sizes[kSizeBuckets + 1];
  Counter write_sizes[kSizeBuckets + 1];
};

inline int LatencyBucket(uint64_t ns) {
  uint64_t us = (ns + 999) / 1000;
  if (us <= 1) return 0;
  int b = 64 - __builtin_clzll(us - 1);  // ceil(log2(us))
  return b < kLatencyBuckets ? b : kLatencyBuckets;
}
inline int SizeBucket(uint64_t bytes) {
  if (bytes <= 512) return 0;
  int b = 64 - __builtin_clzll((bytes - 1) >> 9);
  return b < kSizeBuckets ? b : kSizeBuckets;
}
// Upper bounds, for printing.
inline double LatencyBound(int bucket) { return static_cast<double>(1ull << bucket) * 1e-6; }
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

  Snapshot Take() const;

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
  std::vector<std::unique_ptr<Shard>> shards_;  // guarded by mu_
  std::vector<std::pair<uint64_t, Shard*>> shard_of_thread_;  // native thread id -> shard
  std::array<VersionSlots, kMaxVersions> versions_{};  // [0, num_versions_) published
  std::atomic<int> num_versions_{0};
  int next_slot_ = 0;                     // guarded by mu_
  std::vector<ProcSnapshot> slot_names_;  // guarded by mu_; names only
};

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
  void ResultsAt(size_t offset) { results_at_ = offset; }
  // The call was authenticated with this RPC flavor.
  void AuthFlavor(uint32_t flavor) {
    flavor_ = FlavorOf(flavor);
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

  ServerStats* stats_;
  const xdr::BufferChain* reply_;
  std::chrono::steady_clock::time_point start_;
  int transport_;
  RpcEvent event_ = RpcEvent::kNone;
  bool has_proc_ = false;
  bool has_flavor_ = false;
  Flavor flavor_ = Flavor::kNone;
  uint32_t prog_ = 0, vers_ = 0, proc_ = 0;
  size_t results_at_ = 0;
};

#else  // statistics compiled out

class CallRecorder {
 public:
  CallRecorder(ServerStats*, int, const xdr::BufferChain*) {}
  void Event(RpcEvent) {}
  void Procedure(uint32_t, uint32_t, uint32_t) {}
  void ResultsAt(size_t) {}
  void AuthFlavor(uint32_t) {}
  void Settle() {}
};

#endif

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_SERVER_STATS_H_
