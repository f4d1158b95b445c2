#include "rpc/duplicate_cache.h"

#include <netinet/in.h>

#include <iterator>
#include <string_view>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace nfs3d::rpc {
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
  // absl::Hash is seeded per process, which is all an in-memory cache needs.
  // The checksum only has to tell a reused xid with another call from a
  // retransmission: the length plus the head (file handle, offset, count...)
  // and the tail of the arguments do that -- knfsd checksums 256 bytes.
  // Hashing all of a 1 MiB WRITE cost a fifth of the server's CPU.
  constexpr size_t kHead = 512;
  constexpr size_t kTail = 64;
  const char* p = reinterpret_cast<const char*>(args.data());
  const size_t n = args.size();
  if (n <= kHead + kTail) {
    key.checksum = absl::HashOf(absl::string_view(p, n));
  } else {
    key.checksum =
        absl::HashOf(n, absl::string_view(p, kHead), absl::string_view(p + n - kTail, kTail));
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
