// Duplicate request cache (DRC) for non-idempotent procedures.
//
// A retransmitted CREATE/REMOVE/RENAME... must not run twice: the second run
// would fail (NOENT, EXIST) although the first succeeded. The cache remembers
// the encoded reply of every non-idempotent call it saw recently and replays
// it for a retransmission; a retransmission that arrives while the original
// is still running is dropped (the client will retry once more and then get
// the cached reply).
//
// Key: client address, xid, prog, vers, proc and a hash of the argument
// bytes. The address part is
//   - UDP: address family + IP + port. A UDP client keeps its socket, so the
//     port narrows the key to one client process.
//   - TCP: address family + IP only. After a reconnect the client retransmits
//     from a new source port; including the port would miss exactly the case
//     the cache exists for. The xid plus argument hash keep clients on one
//     host apart.
// RPCSEC_GSS (RFC 2203 §5.3.3.1) gives every retransmission a new sequence
// number, hence a new verifier and, for krb5i/krb5p, new argument bytes on
// the wire. So for those calls the dispatcher keys on what a retransmission
// keeps: the plain (unwrapped) arguments, and the peer part gains the
// caller's principal, so one user's reply never answers another user on the
// same host. The cache holds the plain reply; each replay is sealed afresh
// with the retransmission's sequence number (as knfsd does).
// A cached entry is only a hit when every field matches; the same
// (address, xid) with different prog/vers/proc/arguments is a new call, and
// it replaces the old entry. Replies are only ever returned for an exact key,
// so one client's reply never goes to another.
//
// Bounded by entry count and total reply bytes; the least recently used
// completed entries go first (calls still running are kept while possible).
// Thread-safe.
#ifndef NFS3D_RPC_DUPLICATE_CACHE_H_
#define NFS3D_RPC_DUPLICATE_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "rpc/call_context.h"

namespace nfs3d::rpc {

struct DrcKey {
  std::string peer;  // family + address bytes (+ port for UDP)
  uint32_t xid = 0;
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  uint64_t checksum = 0;  // hash of the argument bytes
};

struct DuplicateCacheOptions {
  size_t max_entries = 8192;
  size_t max_bytes = 32 << 20;  // sum of cached reply sizes
};

struct DuplicateCacheStats {
  uint64_t hits = 0;               // replies replayed
  uint64_t in_progress_drops = 0;  // duplicates dropped while the original ran
  uint64_t evictions = 0;          // entries pushed out by the bounds
  uint64_t insertions = 0;         // new in-progress entries
};

class DuplicateCache {
 public:
  explicit DuplicateCache(DuplicateCacheOptions options = {});
  DuplicateCache(const DuplicateCache&) = delete;
  DuplicateCache& operator=(const DuplicateCache&) = delete;

  static DrcKey MakeKey(const TransportInfo& transport, uint32_t xid, uint32_t prog, uint32_t vers,
                        uint32_t proc, absl::Span<const uint8_t> args);

  enum class Outcome : uint8_t {
    kNew,         // an in-progress entry was inserted: run the call, then Complete/Abandon
    kReplay,      // *reply holds the cached reply bytes: send them
    kInProgress,  // the same call is running right now: drop this one
  };
  struct Begin {
    Outcome outcome;
    uint64_t token = 0;  // for kNew: pass to Complete/Abandon
  };

  // Looks the call up; see Outcome.
  Begin Start(const DrcKey& key, std::string* reply);
  // Stores the encoded reply of a call Start answered kNew for. Ignored if
  // the entry has meanwhile been replaced or evicted.
  void Complete(const DrcKey& key, uint64_t token, std::string reply);
  // Forgets the in-progress entry (call dropped or failed before running) so
  // a retransmission runs it again.
  void Abandon(const DrcKey& key, uint64_t token);

  DuplicateCacheStats stats() const;
  size_t size() const;

  // The completed entries, least recently used first (calls still running
  // are left out: they have no reply yet), for a successor process.
  struct Record {
    DrcKey key;
    std::string reply;
  };
  std::vector<Record> Export() const;
  // Adds completed entries (in Export's order) as if their calls had run
  // here; the bounds apply.
  void Import(std::vector<Record> records);

 private:
  // Lookup index: (peer, xid). Everything else in DrcKey is compared on hit.
  struct IndexKey {
    std::string peer;
    uint32_t xid;
    bool operator==(const IndexKey& o) const { return xid == o.xid && peer == o.peer; }
    template <typename H>
    friend H AbslHashValue(H h, const IndexKey& k) {
      return H::combine(std::move(h), k.peer, k.xid);
    }
  };
  struct Entry {
    DrcKey key;
    uint64_t token = 0;
    bool done = false;
    std::string reply;
  };
  using Lru = std::list<Entry>;  // front = most recently used

  static bool SameCall(const DrcKey& a, const DrcKey& b);
  void EraseLocked(Lru::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DuplicateCacheOptions options_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<IndexKey, Lru::iterator> index_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;

  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> in_progress_drops_{0};
  std::atomic<uint64_t> evictions_{0};
  std::atomic<uint64_t> insertions_{0};
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_DUPLICATE_CACHE_H_
