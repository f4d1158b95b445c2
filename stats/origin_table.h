// Bounded per-origin accounting: who (a client address, an export, a user)
// sent the calls. A table holds exact counters for at most `capacity`
// origins; when a new origin arrives at a full table, the entry with the
// least weight (calls, plus the weight it inherited) is evicted and its
// counters are added to "other" (the space-saving scheme of Metwally et al.,
// with exact counters besides the ranking weight). So the busiest origins
// stay tracked and exact once they are in, the sum of every row and "other"
// is always the total, and memory never grows with the number of origins.
//
// One thread writes a table (its stats shard's, under that shard's mutex);
// snapshots merge the shards' tables and keep the `capacity` busiest.
#ifndef NFS3D_STATS_ORIGIN_TABLE_H_
#define NFS3D_STATS_ORIGIN_TABLE_H_

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "stats/latency_buckets.h"

namespace nfs3d::stats {

// 128 bits that name an origin: an IPv6 (or v4-mapped) address, an export
// id, a uid or the hash of a principal.
struct OriginKey {
  uint64_t hi = 0;
  uint64_t lo = 0;
  bool operator==(const OriginKey& o) const { return hi == o.hi && lo == o.lo; }
  template <typename H>
  friend H AbslHashValue(H h, const OriginKey& k) {
    return H::combine(std::move(h), k.hi, k.lo);
  }
};

// The client address of `peer` (port dropped; IPv4 as v4-mapped IPv6).
OriginKey ClientKey(const sockaddr_storage& peer);
// "192.0.2.7", "2001:db8::1".
std::string ClientName(const OriginKey& key);
// Keys of the export and user tables.
inline constexpr uint64_t kNoExport = 0;  // calls that named no export
OriginKey ExportKey(uint32_t export_id);
OriginKey UidKey(uint32_t uid);
OriginKey PrincipalKey(const std::string& principal);
inline bool IsExportKnown(const OriginKey& key) { return key.hi != kNoExport; }
inline uint32_t ExportIdOf(const OriginKey& key) { return static_cast<uint32_t>(key.lo); }

struct OriginCounters {
  uint64_t calls = 0;
  uint64_t errors = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t retransmits = 0;  // answered or dropped by the duplicate request cache
  uint64_t latency_ns = 0;
  std::array<uint64_t, kLatencyBuckets + 1> latency{};  // per bucket, not cumulative

  void Add(const OriginCounters& o);
};

// What one call adds to each of its origins.
struct CallOutcome {
  bool error = false;
  bool retransmit = false;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t latency_ns = 0;
  int latency_bucket = 0;
};

struct OriginRow {
  OriginKey key;
  std::string name;  // set for principals only; the renderer names the rest
  OriginCounters counters;
};

struct OriginSnapshot {
  std::vector<OriginRow> rows;  // busiest first (by calls)
  OriginCounters other;         // every origin not in `rows`
  uint64_t evictions = 0;       // origins pushed out to "other" so far
  size_t tracked_bytes = 0;     // memory of the tables behind it
};

class OriginTable {
 public:
  explicit OriginTable(size_t capacity);

  // Adds one call to `key`'s entry (inserting it, evicting the lightest
  // when full). `name` is stored on insertion only; may be null.
  void Record(const OriginKey& key, const std::string* name, const CallOutcome& call);

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  // Bytes held: entries plus the index, at their reserved sizes.
  size_t MemoryBytes() const;
  // Adds this table into `merged` (rows by key), `other` and `evictions`.
  void MergeInto(absl::flat_hash_map<OriginKey, OriginRow>* merged, OriginCounters* other,
                 uint64_t* evictions) const;

 private:
  struct Entry {
    OriginKey key;
    uint64_t weight = 0;
    OriginCounters counters;
    std::string name;
  };
  size_t Lightest() const;

  const size_t capacity_;
  std::vector<Entry> entries_;
  absl::flat_hash_map<OriginKey, uint32_t> index_;  // key -> entries_ index
  size_t last_ = 0;  // the entry of the previous call: most calls repeat it
  OriginCounters other_;
  uint64_t evictions_ = 0;
};

// Merged rows of several tables, busiest `keep` first, the rest in other.
OriginSnapshot FinishSnapshot(absl::flat_hash_map<OriginKey, OriginRow>&& merged,
                              OriginCounters other, uint64_t evictions, size_t keep,
                              size_t tracked_bytes);

// Size of one tracked origin in one table (entry + index slot), for the
// documentation and the cap test.
size_t BytesPerTrackedOrigin();

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_ORIGIN_TABLE_H_
