#include "rpc/gss/gss_context_table.h"

#include <sys/random.h>

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

}  // namespace

GssContext::~GssContext() {
  absl::MutexLock lock(&mu);
  if (gss != GSS_C_NO_CONTEXT) {
    OM_uint32 minor = 0;
    gss_delete_sec_context(&minor, &gss, GSS_C_NO_BUFFER);
  }
}

void GssContextTable::Insert(const std::shared_ptr<GssContext>& ctx, absl::Time now) {
  ctx->last_used_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  std::vector<std::shared_ptr<GssContext>> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  MakeRoomLocked(now, &gone);
  do {
    FillRandom(ctx->handle.data(), ctx->handle.size());
  } while (contexts_.contains(Key(ctx->handle)));
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
  absl::MutexLock lock(&mu_);
  auto it = contexts_.find(Key(handle));
  if (it == contexts_.end()) return nullptr;
  it->second->last_used_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  return it->second;
}

void GssContextTable::Erase(absl::Span<const uint8_t> handle) {
  std::shared_ptr<GssContext> gone;  // released after the lock
  absl::MutexLock lock(&mu_);
  auto it = contexts_.find(Key(handle));
  if (it == contexts_.end()) return;
  gone = std::move(it->second);
  contexts_.erase(it);
}

size_t GssContextTable::size() const {
  absl::MutexLock lock(&mu_);
  return contexts_.size();
}

void GssContextTable::MakeRoomLocked(absl::Time now,
                                     std::vector<std::shared_ptr<GssContext>>* gone) {
  if (contexts_.size() < max_) return;
  // Expired contexts go first; the scan only runs when the table is full.
  for (auto it = contexts_.begin(); it != contexts_.end();) {
    if (it->second->expiry <= now) {
      gone->push_back(std::move(it->second));
      contexts_.erase(it++);
    } else {
      ++it;
    }
  }
  while (contexts_.size() >= max_) {
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
