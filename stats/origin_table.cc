#include "stats/origin_table.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/hash/hash.h"

namespace nfs3d::stats {
namespace {

constexpr uint64_t kExportKnown = 1;
constexpr uint64_t kUid = 1;
constexpr uint64_t kPrincipal = 2;

uint64_t LoadBig(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

OriginKey ClientKey(const sockaddr_storage& peer) {
  OriginKey key;
  if (peer.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&peer);
    key.lo = (uint64_t{0xffff} << 32) | ntohl(in->sin_addr.s_addr);
  } else if (peer.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&peer);
    key.hi = LoadBig(in6->sin6_addr.s6_addr);
    key.lo = LoadBig(in6->sin6_addr.s6_addr + 8);
  }
  return key;
}

std::string ClientName(const OriginKey& key) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (key.hi == 0 && (key.lo >> 32) == 0xffff) {
    in_addr a;
    a.s_addr = htonl(static_cast<uint32_t>(key.lo));
    inet_ntop(AF_INET, &a, text, sizeof(text));
    return text;
  }
  in6_addr a;
  for (int i = 0; i < 8; ++i) {
    a.s6_addr[i] = static_cast<uint8_t>(key.hi >> (56 - 8 * i));
    a.s6_addr[8 + i] = static_cast<uint8_t>(key.lo >> (56 - 8 * i));
  }
  inet_ntop(AF_INET6, &a, text, sizeof(text));
  return text;
}

OriginKey ExportKey(uint32_t export_id) { return OriginKey{kExportKnown, export_id}; }
OriginKey UidKey(uint32_t uid) { return OriginKey{kUid, uid}; }
OriginKey PrincipalKey(const std::string& principal) {
  return OriginKey{kPrincipal, absl::HashOf(principal)};
}

void OriginCounters::Add(const OriginCounters& o) {
  calls += o.calls;
  errors += o.errors;
  read_bytes += o.read_bytes;
  write_bytes += o.write_bytes;
  retransmits += o.retransmits;
  latency_ns += o.latency_ns;
  for (size_t b = 0; b < latency.size(); ++b) latency[b] += o.latency[b];
}

OriginTable::OriginTable(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {
  entries_.reserve(capacity_);
  index_.reserve(capacity_);
}

size_t OriginTable::Lightest() const {
  size_t lightest = 0;
  for (size_t i = 1; i < entries_.size(); ++i) {
    if (entries_[i].weight < entries_[lightest].weight) lightest = i;
  }
  return lightest;
}

void OriginTable::Record(const OriginKey& key, const std::string* name, const CallOutcome& call) {
  Entry* e;
  auto it = index_.end();
  if (last_ < entries_.size() && entries_[last_].key == key) {
    e = &entries_[last_];
  } else if ((it = index_.find(key)) != index_.end()) {
    e = &entries_[it->second];
    last_ = it->second;
  } else if (entries_.size() < capacity_) {
    last_ = entries_.size();
    index_.emplace(key, static_cast<uint32_t>(last_));
    e = &entries_.emplace_back();
    e->key = key;
    if (name != nullptr) e->name = *name;
  } else {
    // Space-saving: the newcomer takes the lightest entry's place and
    // inherits its weight, so a burst of one-off origins cannot push out an
    // origin that has been busy all along.
    const size_t slot = Lightest();
    last_ = slot;
    e = &entries_[slot];
    other_.Add(e->counters);
    ++evictions_;
    index_.erase(e->key);
    index_.emplace(key, static_cast<uint32_t>(slot));
    e->key = key;
    e->counters = OriginCounters{};
    e->name = name != nullptr ? *name : std::string();
  }
  ++e->weight;
  OriginCounters& c = e->counters;
  ++c.calls;
  c.errors += call.error;
  c.retransmits += call.retransmit;
  c.read_bytes += call.read_bytes;
  c.write_bytes += call.write_bytes;
  c.latency_ns += call.latency_ns;
  ++c.latency[call.latency_bucket];
}

size_t OriginTable::MemoryBytes() const {
  size_t bytes = entries_.capacity() * sizeof(Entry);
  // flat_hash_map: one slot plus one control byte per bucket.
  bytes += index_.bucket_count() * (sizeof(std::pair<OriginKey, uint32_t>) + 1);
  for (const Entry& e : entries_) bytes += e.name.capacity() > 15 ? e.name.capacity() : 0;
  return bytes;
}

void OriginTable::MergeInto(absl::flat_hash_map<OriginKey, OriginRow>* merged,
                            OriginCounters* other, uint64_t* evictions) const {
  for (const Entry& e : entries_) {
    OriginRow& row = (*merged)[e.key];
    row.key = e.key;
    if (row.name.empty()) row.name = e.name;
    row.counters.Add(e.counters);
  }
  other->Add(other_);
  *evictions += evictions_;
}

OriginSnapshot FinishSnapshot(absl::flat_hash_map<OriginKey, OriginRow>&& merged,
                              OriginCounters other, uint64_t evictions, size_t keep,
                              size_t tracked_bytes) {
  OriginSnapshot out;
  out.rows.reserve(merged.size());
  for (auto& [key, row] : merged) out.rows.push_back(std::move(row));
  std::sort(out.rows.begin(), out.rows.end(), [](const OriginRow& a, const OriginRow& b) {
    if (a.counters.calls != b.counters.calls) return a.counters.calls > b.counters.calls;
    return a.key.hi != b.key.hi ? a.key.hi < b.key.hi : a.key.lo < b.key.lo;
  });
  for (size_t i = keep; i < out.rows.size(); ++i) other.Add(out.rows[i].counters);
  if (out.rows.size() > keep) out.rows.resize(keep);
  out.other = other;
  out.evictions = evictions;
  out.tracked_bytes = tracked_bytes;
  return out;
}

size_t BytesPerTrackedOrigin() {
  OriginTable probe(1024);
  return probe.MemoryBytes() / probe.capacity();
}

}  // namespace nfs3d::stats
