#include "stats/server_stats.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

#include "stats/slow_call_log.h"

namespace nfs3d::stats {
namespace {

std::atomic<uint64_t> next_registry_id{1};

constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kMountProgram = 100005;
constexpr uint32_t kNlmProgram = 100021;
constexpr uint32_t kNfsRead = 6;
constexpr uint32_t kNfsWrite = 7;
constexpr uint32_t kFattr3Size = 84;   // fattr3 on the wire
constexpr uint32_t kWccAttrSize = 24;  // wcc_attr on the wire

// Reads big-endian words at byte offsets of a reply chain (its memory
// segments; words inside a file segment, i.e. READ data sent by sendfile,
// are never needed and read as absent).
class ChainWords {
 public:
  explicit ChainWords(const xdr::BufferChain& chain) : segments_(chain.segments()) {}

  bool U32At(size_t offset, uint32_t* out) const {
    uint8_t b[4];
    size_t got = 0;
    for (const xdr::BufferChain::Segment& s : segments_) {
      if (offset >= s.len) {
        offset -= s.len;
        continue;
      }
      if (s.fd >= 0) return false;
      while (got < 4 && offset < s.len) b[got++] = s.data[offset++];
      if (got == 4) break;
      offset = 0;
    }
    if (got < 4) return false;
    *out = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
    return true;
  }

 private:
  const std::vector<xdr::BufferChain::Segment>& segments_;
};

// Where the procedure's status word sits in its results (bytes from their
// start), or -1 when its results carry no status. NFSv3: every procedure but
// NULL starts with nfsstat3. MOUNT: MNT starts with its status. NLM:
// TEST/LOCK/CANCEL/UNLOCK/GRANTED (and their v4 forms) carry a cookie first.
long StatusOffset(uint32_t prog, uint32_t proc, const ChainWords& words, size_t results) {
  if (prog == kNfsProgram) return proc != 0 ? 0 : -1;
  if (prog == kMountProgram) return proc == 1 ? 0 : -1;
  if (prog == kNlmProgram && proc >= 1 && proc <= 5) {
    uint32_t cookie_len = 0;
    if (!words.U32At(results, &cookie_len) || cookie_len > 1024) return -1;
    return 4 + ((cookie_len + 3) & ~3u);
  }
  return -1;
}

// The count of a successful READ3resok / WRITE3resok.
bool TransferCount(uint32_t proc, const ChainWords& words, size_t at, uint32_t* count) {
  size_t pos = at + 4;  // past the status
  uint32_t present = 0;
  if (proc == kNfsWrite) {
    if (!words.U32At(pos, &present)) return false;  // pre_op_attr
    pos += 4 + (present ? kWccAttrSize : 0);
  }
  if (!words.U32At(pos, &present)) return false;  // post_op_attr
  pos += 4 + (present ? kFattr3Size : 0);
  return words.U32At(pos, count);
}

}  // namespace

const char* RpcEventName(RpcEvent event) {
  switch (event) {
    case RpcEvent::kNone:
      return "none";
    case RpcEvent::kMalformed:
      return "malformed";
    case RpcEvent::kRpcMismatch:
      return "rpc_mismatch";
    case RpcEvent::kAuthError:
      return "auth_error";
    case RpcEvent::kProgUnavail:
      return "prog_unavail";
    case RpcEvent::kProgMismatch:
      return "prog_mismatch";
    case RpcEvent::kProcUnavail:
      return "proc_unavail";
    case RpcEvent::kGarbageArgs:
      return "garbage_args";
    case RpcEvent::kSystemErr:
      return "system_err";
    case RpcEvent::kDropped:
      return "dropped";
    case RpcEvent::kDrcReplay:
      return "drc_replay";
    case RpcEvent::kDrcInProgress:
      return "drc_in_progress";
    case RpcEvent::kCount:
      break;
  }
  return "?";
}

FlavorSlot FlavorSlotOf(uint32_t flavor) {
  switch (flavor) {
    case kAuthNone:
      return FlavorSlot::kNone;
    case kAuthSys:
      return FlavorSlot::kSys;
    case kKrb5:
      return FlavorSlot::kKrb5;
    case kKrb5i:
      return FlavorSlot::kKrb5i;
    case kKrb5p:
      return FlavorSlot::kKrb5p;
    default:
      return FlavorSlot::kOther;
  }
}

const char* FlavorSlotName(FlavorSlot slot) {
  static constexpr Flavor kFlavors[] = {kAuthNone, kAuthSys, kKrb5, kKrb5i, kKrb5p};
  const auto i = static_cast<size_t>(slot);
  // FlavorName's names are literals, so data() ends in a NUL.
  return i < std::size(kFlavors) ? FlavorName(kFlavors[i]).data() : "other";
}

ServerStats::ServerStats() : id_(next_registry_id.fetch_add(1)) { slot_names_.resize(kMaxSlots); }

ServerStats::~ServerStats() = default;

bool ServerStats::AddProgramVersion(uint32_t prog, uint32_t vers, const std::string& program,
                                    const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  const int n = num_versions_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (versions_[i].prog == prog && versions_[i].vers == vers) {
      return names.size() <= versions_[i].count;
    }
  }
  if (n >= kMaxVersions || next_slot_ + static_cast<int>(names.size()) > kMaxSlots) return false;
  VersionSlots& v = versions_[n];
  v.prog = prog;
  v.vers = vers;
  v.base = next_slot_;
  v.count = static_cast<uint32_t>(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    ProcSnapshot& s = slot_names_[next_slot_ + i];
    s.program = program;
    s.prog = prog;
    s.vers = vers;
    s.proc = static_cast<uint32_t>(i);
    s.name = names[i];
  }
  next_slot_ += static_cast<int>(names.size());
  num_versions_.store(n + 1, std::memory_order_release);
  return true;
}

int ServerStats::SlotBase(uint32_t prog, uint32_t vers, uint32_t* count) const {
  const int n = num_versions_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (versions_[i].prog == prog && versions_[i].vers == vers) {
      *count = versions_[i].count;
      return versions_[i].base;
    }
  }
  return -1;
}

Shard& ServerStats::LocalSlow(LocalCache* cache) {
  const uint64_t self = static_cast<uint64_t>(pthread_self());
  std::lock_guard<std::mutex> lock(mu_);
  Shard* shard = nullptr;
  for (auto& [thread, s] : shard_of_thread_) {
    if (thread == self) shard = s;
  }
  if (shard == nullptr) {
    shards_.push_back(std::make_unique<Shard>());
    shard = shards_.back().get();
    if (origin_limits_.clients > 0) {
      shard->origins = std::make_unique<OriginShard>(origin_limits_.clients, origin_limits_.exports,
                                                     origin_limits_.users);
    }
    shard_of_thread_.emplace_back(self, shard);
  }
  cache->owner = id_;
  cache->shard = shard;
  return *shard;
}

Snapshot ServerStats::Take() const {
  Snapshot out;
  std::lock_guard<std::mutex> lock(mu_);
  out.procs.assign(slot_names_.begin(), slot_names_.begin() + next_slot_);
  for (const auto& shard : shards_) {
    for (int i = 0; i < next_slot_; ++i) {
      const ProcShard& p = shard->procs[i];
      ProcSnapshot& o = out.procs[i];
      for (int t = 0; t < kNumTransports; ++t) {
        o.calls[t] += p.calls[t].Get();
        o.errors[t] += p.errors[t].Get();
      }
      for (int b = 0; b <= kLatencyBuckets; ++b) o.latency[b] += p.latency[b].Get();
      o.latency_ns += p.latency_ns.Get();
    }
    for (int t = 0; t < kNumTransports; ++t) {
      out.messages[t] += shard->messages[t].Get();
      for (int e = 0; e < kNumRpcEvents; ++e) out.events[t][e] += shard->events[t][e].Get();
      for (int f = 0; f < kNumFlavors; ++f) out.flavors[t][f] += shard->flavors[t][f].Get();
    }
    out.read_bytes += shard->read_bytes.Get();
    out.write_bytes += shard->write_bytes.Get();
    for (int b = 0; b <= kSizeBuckets; ++b) {
      out.read_sizes[b] += shard->read_sizes[b].Get();
      out.write_sizes[b] += shard->write_sizes[b].Get();
    }
  }
  AddSnapshot(carried_, &out);
  return out;
}

void ServerStats::Carry(const Snapshot& earlier) {
  std::lock_guard<std::mutex> lock(mu_);
  AddSnapshot(earlier, &carried_);
}

namespace {

template <typename T, size_t N>
void AddArray(const std::array<T, N>& from, std::array<T, N>* into) {
  for (size_t i = 0; i < N; ++i) (*into)[i] += from[i];
}

}  // namespace

void AddSnapshot(const Snapshot& from, Snapshot* into) {
  for (const ProcSnapshot& p : from.procs) {
    auto it = std::find_if(into->procs.begin(), into->procs.end(), [&p](const ProcSnapshot& q) {
      return q.prog == p.prog && q.vers == p.vers && q.proc == p.proc;
    });
    if (it == into->procs.end()) {
      into->procs.push_back(p);
      continue;
    }
    AddArray(p.calls, &it->calls);
    AddArray(p.errors, &it->errors);
    AddArray(p.latency, &it->latency);
    it->latency_ns += p.latency_ns;
  }
  AddArray(from.messages, &into->messages);
  for (int t = 0; t < kNumTransports; ++t) {
    AddArray(from.events[t], &into->events[t]);
    AddArray(from.flavors[t], &into->flavors[t]);
  }
  into->read_bytes += from.read_bytes;
  into->write_bytes += from.write_bytes;
  AddArray(from.read_sizes, &into->read_sizes);
  AddArray(from.write_sizes, &into->write_sizes);
}

void ServerStats::SetOriginLimits(const OriginLimits& limits) {
  std::lock_guard<std::mutex> lock(mu_);
  origin_limits_ = limits;
}

OriginLimits ServerStats::origin_limits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return origin_limits_;
}

OriginsSnapshot ServerStats::TakeOrigins() const {
  absl::flat_hash_map<OriginKey, OriginRow> merged[3];
  OriginCounters other[3];
  uint64_t evictions[3] = {0, 0, 0};
  size_t bytes[3] = {0, 0, 0};
  OriginLimits limits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    limits = origin_limits_;
    for (const auto& shard : shards_) {
      if (shard->origins == nullptr) continue;
      OriginShard& o = *shard->origins;
      std::lock_guard<ShardLock> shard_lock(o.mu);
      const OriginTable* tables[3] = {&o.clients, &o.exports, &o.users};
      for (int k = 0; k < 3; ++k) {
        tables[k]->MergeInto(&merged[k], &other[k], &evictions[k]);
        bytes[k] += tables[k]->MemoryBytes();
      }
    }
  }
  const size_t keep[3] = {limits.clients, limits.exports, limits.users};
  OriginSnapshot* out[3];
  OriginsSnapshot snapshot;
  out[0] = &snapshot.clients;
  out[1] = &snapshot.exports;
  out[2] = &snapshot.users;
  for (int k = 0; k < 3; ++k) {
    *out[k] = FinishSnapshot(std::move(merged[k]), other[k], evictions[k], keep[k], bytes[k]);
  }
  return snapshot;
}

#if NFS3D_STATS_ENABLED

void CallRecorder::User(uint32_t flavor, uint32_t uid, const std::string& principal) {
  if (stats_ == nullptr) return;
  const FlavorSlot slot = FlavorSlotOf(flavor);
  if ((slot == FlavorSlot::kKrb5 || slot == FlavorSlot::kKrb5i || slot == FlavorSlot::kKrb5p) &&
      !principal.empty()) {
    user_ = PrincipalKey(principal);
    principal_ = principal;
  } else {
    user_ = UidKey(uid);
  }
}

void CallRecorder::Ran(const char* program, const char* name, uint32_t xid,
                       absl::Span<const uint8_t> args) {
  if (stats_ == nullptr) return;
  SlowCallLog* log = stats_->slow_log();
  if (log == nullptr || log->threshold_ns() == 0) return;
  ran_at_ = std::chrono::steady_clock::now();
  program_name_ = program;
  proc_name_ = name;
  xid_ = xid;
  // NFSv3 arguments start with the file handle (opaque<64>); keep it only
  // for a call that is slow already, the ones the log will show.
  if (ran_at_ - start_ < std::chrono::nanoseconds(log->threshold_ns())) return;
  if (prog_ != kNfsProgram || proc_ == 0 || args.size() < 4) return;
  const uint32_t len =
      (uint32_t{args[0]} << 24) | (uint32_t{args[1]} << 16) | (uint32_t{args[2]} << 8) | args[3];
  if (len == 0 || len > sizeof(handle_) || args.size() < 4 + len) return;
  std::memcpy(handle_, args.data() + 4, len);
  handle_len_ = static_cast<uint8_t>(len);
}

void CallRecorder::RecordOrigins(Shard& s, const CallOutcome& call) {
  OriginShard& o = *s.origins;
  std::lock_guard<ShardLock> lock(o.mu);
  o.clients.Record(client_, nullptr, call);
  o.exports.Record(export_, nullptr, call);
  o.users.Record(user_, principal_.empty() ? nullptr : &principal_, call);
}

void CallRecorder::LogIfSlow(uint64_t ns) {
  SlowCallLog* log = stats_->slow_log();
  if (log == nullptr || log->threshold_ns() == 0 || ns < log->threshold_ns()) return;
  SlowCall call;
  call.client = has_peer_ ? ClientName(client_) : "-";
  call.user = !principal_.empty() ? principal_
              : user_.hi != 0     ? absl::StrCat(user_.lo)
                                  : std::string("-");
  call.has_export = IsExportKnown(export_);
  call.export_id = ExportIdOf(export_);
  call.proc = absl::StrCat(program_name_, " ", proc_name_);
  call.handle = absl::Span<const uint8_t>(handle_, handle_len_);
  call.xid = xid_;
  call.total_ns = ns;
  if (proc_name_ != nullptr && run_start_ >= start_) {
    call.proc_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(ran_at_ - run_start_).count());
  }
  log->Report(call);
}

void CallRecorder::Finish() {
  Shard& s = stats_->Local();
  const int t = transport_ & 1;
  s.messages[t].Add(1);
  if (event_ != RpcEvent::kNone) s.events[t][static_cast<int>(event_)].Add(1);
  if (has_flavor_) s.flavors[t][static_cast<int>(flavor_)].Add(1);

  CallOutcome call;
  call.error = IsRpcError(event_);
  call.retransmit = event_ == RpcEvent::kDrcReplay || event_ == RpcEvent::kDrcInProgress;
  ProcShard* p = nullptr;
  if (has_proc_) {
    uint32_t count = 0;
    const int base = stats_->SlotBase(prog_, vers_, &count);
    if (base >= 0 && proc_ < count) p = &s.procs[base + proc_];
  }
  if (p != nullptr) {
    p->calls[t].Add(1);
    ReadResults(s, &call);
  }
  if (p == nullptr && s.origins == nullptr) return;

  call.latency_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now() - start_)
                                              .count());
  call.latency_bucket = LatencyBucket(call.latency_ns);
  if (p != nullptr) {
    if (call.error) p->errors[t].Add(1);
    p->latency[call.latency_bucket].Add(1);
    p->latency_ns.Add(call.latency_ns);
  }
  if (s.origins != nullptr && has_peer_) RecordOrigins(s, call);
  if (proc_name_ != nullptr) LogIfSlow(call.latency_ns);
}

void CallRecorder::ReadResults(Shard& s, CallOutcome* call) {
  if (event_ != RpcEvent::kNone || results_at_ == 0 || reply_ == nullptr ||
      reply_->size() <= results_at_) {
    return;
  }
  ChainWords words(*reply_);
  long at = StatusOffset(prog_, proc_, words, results_at_);
  uint32_t status = 0;
  if (at < 0 || !words.U32At(results_at_ + at, &status)) return;
  call->error = status != 0;
  uint32_t bytes = 0;
  if (status != 0 || prog_ != kNfsProgram || (proc_ != kNfsRead && proc_ != kNfsWrite) ||
      !TransferCount(proc_, words, results_at_, &bytes)) {
    return;
  }
  if (proc_ == kNfsRead) {
    s.read_bytes.Add(bytes);
    s.read_sizes[SizeBucket(bytes)].Add(1);
    call->read_bytes = bytes;
  } else {
    s.write_bytes.Add(bytes);
    s.write_sizes[SizeBucket(bytes)].Add(1);
    call->write_bytes = bytes;
  }
}

#endif

}  // namespace nfs3d::stats
