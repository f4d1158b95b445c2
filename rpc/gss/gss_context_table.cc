#include "rpc/gss/gss_context_table.h"

#include <sys/random.h>

#include <algorithm>
#include <utility>

namespace nfs3d::rpc::gss {
namespace {

void FillRandom(uint8_t* out, size_t n) {
  while (n > 0) {
    ssize_t got = getrandom(out, n, 0);
    if (got <= 0) continue;  // EINTR; getrandom does not fail once seeded
    out += got;
    n -= static_cast<size_t>(got);
  }
}

// Zero would leave no room at all; one of each is the least that works.
GssContextLimits AtLeastOne(GssContextLimits l) {
  l.max_contexts = std::max<size_t>(l.max_contexts, 1);
  l.max_half_open = std::max<size_t>(l.max_half_open, 1);
  l.max_half_open_per_address = std::max<size_t>(l.max_half_open_per_address, 1);
  return l;
}

}  // namespace

GssContext::~GssContext() {
  absl::MutexLock lock(&mu);
  if (gss != GSS_C_NO_CONTEXT) {
    OM_uint32 minor = 0;
    gss_delete_sec_context(&minor, &gss, GSS_C_NO_BUFFER);
  }
}

GssContextTable::GssContextTable(const GssContextLimits& limits) : limits_(AtLeastOne(limits)) {}

void GssContextTable::NewHandleLocked(GssContext& ctx) {
  do {
    FillRandom(ctx.handle.data(), ctx.handle.size());
  } while (contexts_.contains(Key(ctx.handle)) || half_open_.contains(Key(ctx.handle)));
}

void GssContextTable::Insert(const std::shared_ptr<GssContext>& ctx, absl::Time now) {
  ctx->last_used_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  std::vector<std::shared_ptr<GssContext>> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  MakeRoomLocked(now, &gone);
  NewHandleLocked(*ctx);
  contexts_.emplace(std::string(Key(ctx->handle)), ctx);
}

void GssContextTable::InsertHalfOpen(const std::shared_ptr<GssContext>& ctx, std::string peer,
                                     absl::Time now) {
  ctx->last_used_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  ctx->half_open_until = now + limits_.half_open_lifetime;
  ctx->peer = std::move(peer);
  std::vector<std::shared_ptr<GssContext>> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  MakeHalfOpenRoomLocked(ctx->peer, now, &gone);
  NewHandleLocked(*ctx);
  half_open_.emplace(std::string(Key(ctx->handle)), ctx);
}

void GssContextTable::Promote(const std::shared_ptr<GssContext>& ctx, absl::Time now) {
  ctx->last_used_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  std::vector<std::shared_ptr<GssContext>> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  if (auto it = half_open_.find(Key(ctx->handle)); it != half_open_.end()) {
    gone.push_back(std::move(it->second));
    half_open_.erase(it);
  }
  if (contexts_.contains(Key(ctx->handle))) return;
  MakeRoomLocked(now, &gone);
  contexts_.emplace(std::string(Key(ctx->handle)), ctx);
}

bool GssContextTable::Adopt(const std::shared_ptr<GssContext>& ctx, absl::Time now) {
  ctx->last_used_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  std::vector<std::shared_ptr<GssContext>> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  if (contexts_.contains(Key(ctx->handle))) return false;
  MakeRoomLocked(now, &gone);
  contexts_.emplace(std::string(Key(ctx->handle)), ctx);
  return true;
}

std::vector<std::shared_ptr<GssContext>> GssContextTable::All() const {
  std::vector<std::shared_ptr<GssContext>> out;
  absl::MutexLock lock(&mu_);
  out.reserve(contexts_.size());
  for (const auto& [key, ctx] : contexts_) out.push_back(ctx);
  return out;
}

std::shared_ptr<GssContext> GssContextTable::Find(absl::Span<const uint8_t> handle,
                                                  absl::Time now) {
  std::shared_ptr<GssContext> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  auto it = contexts_.find(Key(handle));
  if (it == contexts_.end()) {
    it = half_open_.find(Key(handle));
    if (it == half_open_.end()) return nullptr;
    if (it->second->half_open_until <= now) {
      gone = std::move(it->second);
      half_open_.erase(it);
      return nullptr;
    }
  }
  it->second->last_used_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  return it->second;
}

void GssContextTable::Erase(absl::Span<const uint8_t> handle) {
  std::shared_ptr<GssContext> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  for (auto* map : {&contexts_, &half_open_}) {
    auto it = map->find(Key(handle));
    if (it == map->end()) continue;
    gone = std::move(it->second);
    map->erase(it);
    return;
  }
}

size_t GssContextTable::size() const {
  absl::MutexLock lock(&mu_);
  return contexts_.size() + half_open_.size();
}

size_t GssContextTable::half_open() const {
  absl::MutexLock lock(&mu_);
  return half_open_.size();
}

void GssContextTable::MakeHalfOpenRoomLocked(const std::string& peer, absl::Time now,
                                             std::vector<std::shared_ptr<GssContext>>* gone) {
  // Past their time first; the tables are small (max_half_open), so a scan
  // per new half-open context is cheap.
  size_t of_peer = 0;
  auto oldest_of_peer = half_open_.end();
  for (auto it = half_open_.begin(); it != half_open_.end();) {
    if (it->second->half_open_until <= now) {
      gone->push_back(std::move(it->second));
      half_open_.erase(it++);
      continue;
    }
    if (it->second->peer == peer) {
      ++of_peer;
      if (oldest_of_peer == half_open_.end() ||
          it->second->half_open_until < oldest_of_peer->second->half_open_until) {
        oldest_of_peer = it;
      }
    }
    ++it;
  }
  auto drop = half_open_.end();
  if (of_peer >= limits_.max_half_open_per_address) {
    drop = oldest_of_peer;
  } else if (half_open_.size() >= limits_.max_half_open) {
    drop = std::min_element(half_open_.begin(), half_open_.end(), [](const auto& a, const auto& b) {
      return a.second->half_open_until < b.second->half_open_until;
    });
  }
  if (drop == half_open_.end()) return;
  gone->push_back(std::move(drop->second));
  half_open_.erase(drop);
}

void GssContextTable::MakeRoomLocked(absl::Time now,
                                     std::vector<std::shared_ptr<GssContext>>* gone) {
  if (contexts_.size() < limits_.max_contexts) return;
  // Expired contexts go first; the scan only runs when the table is full.
  for (auto it = contexts_.begin(); it != contexts_.end();) {
    if (it->second->expiry <= now) {
      gone->push_back(std::move(it->second));
      contexts_.erase(it++);
    } else {
      ++it;
    }
  }
  while (contexts_.size() >= limits_.max_contexts) {
    auto oldest = contexts_.begin();
    for (auto it = contexts_.begin(); it != contexts_.end(); ++it) {
      if (it->second->last_used_ns.load(std::memory_order_relaxed) <
          oldest->second->last_used_ns.load(std::memory_order_relaxed)) {
        oldest = it;
      }
    }
    gone->push_back(std::move(oldest->second));
    contexts_.erase(oldest);
  }
}

}  // namespace nfs3d::rpc::gss
