#include "rpc/duplicate_cache.h"

#include <netinet/in.h>

#include <cstring>
#include <iterator>
#include <string_view>
#include <utility>

#include "absl/strings/string_view.h"

namespace nfs3d::rpc {

namespace {

// 64-bit multiply-xorshift over 8-byte words, finished like MurmurHash3's
// fmix64: fast, and the same in every process and on every build.
uint64_t StableHash(const uint8_t* p, size_t n, uint64_t seed) {
  constexpr uint64_t kMul = 0xff51afd7ed558ccdull;
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  for (size_t k = 0; i < n; ++i, k += 8) tail |= uint64_t{p[i]} << k;
  h = (h ^ tail ^ (uint64_t{n} << 56)) * kMul;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace
namespace {

void AppendBytes(std::string* out, const void* data, size_t len) {
  out->append(static_cast<const char*>(data), len);
}

// Address family + IP (+ port) as raw bytes; see the header for why TCP
// leaves the port out.
std::string PeerKey(const TransportInfo& t) {
  std::string out;
  const bool with_port = t.transport == Transport::kUdp;
  out.push_back(static_cast<char>(t.transport));
  sa_family_t family = t.peer.ss_family;
  AppendBytes(&out, &family, sizeof(family));
  if (family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&t.peer);
    AppendBytes(&out, &sin->sin_addr, sizeof(sin->sin_addr));
    if (with_port) AppendBytes(&out, &sin->sin_port, sizeof(sin->sin_port));
  } else if (family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&t.peer);
    AppendBytes(&out, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
    AppendBytes(&out, &sin6->sin6_scope_id, sizeof(sin6->sin6_scope_id));
    if (with_port) AppendBytes(&out, &sin6->sin6_port, sizeof(sin6->sin6_port));
  } else {
    // Unknown family (tests, AF_UNIX): the whole address is the identity.
    size_t len = t.peer_len <= sizeof(t.peer) ? t.peer_len : sizeof(t.peer);
    AppendBytes(&out, &t.peer, len);
  }
  return out;
}

}  // namespace

DuplicateCache::DuplicateCache(DuplicateCacheOptions options) : options_(options) {}

DrcKey DuplicateCache::MakeKey(const TransportInfo& transport, uint32_t xid, uint32_t prog,
                               uint32_t vers, uint32_t proc, absl::Span<const uint8_t> args) {
  DrcKey key;
  key.peer = PeerKey(transport);
  key.xid = xid;
  key.prog = prog;
  key.vers = vers;
  key.proc = proc;
  // The checksum only has to tell a reused xid with another call from a
  // retransmission: the length plus the head (file handle, offset, count...)
  // and the tail of the arguments do that -- knfsd checksums 256 bytes.
  // Hashing all of a 1 MiB WRITE cost a fifth of the server's CPU. It is the
  // same in every process (not absl::Hash, which is seeded per process):
  // entries cross to a successor (docs/handover.md).
  constexpr size_t kHead = 512;
  constexpr size_t kTail = 64;
  const uint8_t* p = args.data();
  const size_t n = args.size();
  if (n <= kHead + kTail) {
    key.checksum = StableHash(p, n, n);
  } else {
    key.checksum = StableHash(p + n - kTail, kTail, StableHash(p, kHead, n));
  }
  return key;
}

bool DuplicateCache::SameCall(const DrcKey& a, const DrcKey& b) {
  return a.xid == b.xid && a.prog == b.prog && a.vers == b.vers && a.proc == b.proc &&
         a.checksum == b.checksum && a.peer == b.peer;
}

DuplicateCache::Begin DuplicateCache::Start(const DrcKey& key, std::string* reply) {
  absl::MutexLock lock(&mu_);
  auto found = index_.find(IndexKey{key.peer, key.xid});
  if (found != index_.end()) {
    Lru::iterator it = found->second;
    if (SameCall(it->key, key)) {
      lru_.splice(lru_.begin(), lru_, it);
      if (!it->done) {
        in_progress_drops_.fetch_add(1, std::memory_order_relaxed);
        return {Outcome::kInProgress};
      }
      hits_.fetch_add(1, std::memory_order_relaxed);
      *reply = it->reply;
      return {Outcome::kReplay};
    }
    // Same client and xid but another call: the old entry is stale.
    EraseLocked(it);
  }
  Entry entry;
  entry.key = key;
  entry.token = next_token_++;
  lru_.push_front(std::move(entry));
  index_.emplace(IndexKey{key.peer, key.xid}, lru_.begin());
  insertions_.fetch_add(1, std::memory_order_relaxed);
  uint64_t token = lru_.front().token;
  EvictLocked();
  return {Outcome::kNew, token};
}

void DuplicateCache::Complete(const DrcKey& key, uint64_t token, std::string reply) {
  absl::MutexLock lock(&mu_);
  auto found = index_.find(IndexKey{key.peer, key.xid});
  if (found == index_.end() || found->second->token != token) return;
  Lru::iterator it = found->second;
  if (reply.size() > options_.max_bytes) {
    // Too big to keep at all; a retransmission will run again.
    EraseLocked(it);
    return;
  }
  bytes_ += reply.size();
  it->reply = std::move(reply);
  it->done = true;
  EvictLocked();
}

void DuplicateCache::Abandon(const DrcKey& key, uint64_t token) {
  absl::MutexLock lock(&mu_);
  auto found = index_.find(IndexKey{key.peer, key.xid});
  if (found == index_.end() || found->second->token != token) return;
  EraseLocked(found->second);
}

std::vector<DuplicateCache::Record> DuplicateCache::Export() const {
  absl::MutexLock lock(&mu_);
  std::vector<Record> records;
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
    if (it->done) records.push_back({it->key, it->reply});
  }
  return records;
}

void DuplicateCache::Import(std::vector<Record> records) {
  absl::MutexLock lock(&mu_);
  for (Record& r : records) {
    if (r.reply.size() > options_.max_bytes) continue;
    auto found = index_.find(IndexKey{r.key.peer, r.key.xid});
    if (found != index_.end()) EraseLocked(found->second);
    Entry entry;
    entry.key = std::move(r.key);
    entry.token = next_token_++;
    entry.done = true;
    entry.reply = std::move(r.reply);
    bytes_ += entry.reply.size();
    lru_.push_front(std::move(entry));
    index_[IndexKey{lru_.front().key.peer, lru_.front().key.xid}] = lru_.begin();
    EvictLocked();
  }
}

void DuplicateCache::EraseLocked(Lru::iterator it) {
  bytes_ -= it->reply.size();
  index_.erase(IndexKey{it->key.peer, it->key.xid});
  lru_.erase(it);
}

void DuplicateCache::EvictLocked() {
  while (!lru_.empty() && (lru_.size() > options_.max_entries || bytes_ > options_.max_bytes)) {
    // Prefer the oldest completed entry: forgetting a running call would let
    // its retransmission run concurrently. Running calls are few (one per
    // worker thread), so the walk is short; if every entry is running, the
    // bound still wins.
    Lru::iterator victim = std::prev(lru_.end());
    for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
      if (it->done) {
        victim = std::prev(it.base());
        break;
      }
    }
    EraseLocked(victim);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
}

DuplicateCacheStats DuplicateCache::stats() const {
  DuplicateCacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.in_progress_drops = in_progress_drops_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.insertions = insertions_.load(std::memory_order_relaxed);
  return s;
}

size_t DuplicateCache::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

}  // namespace nfs3d::rpc
