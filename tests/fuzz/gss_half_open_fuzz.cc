// libFuzzer target for RPCSEC_GSS context admission (rpc/gss/gss_context_table.h):
// the input picks the bounds (established contexts; half-open ones in all,
// per address and their lifetime) and then a sequence of what GssServer
// does with the table: INIT that needs another round (a half-open context
// from an address), INIT done in one round, CONTINUE_INIT that completes,
// fails or goes on, data calls and DESTROY on established contexts, lookups
// of any handle, and the clock moving on (the table takes `now` from its
// caller). A model of both kinds checks after every step:
//  - half-open contexts never exceed max_half_open, nor
//    max_half_open_per_address for one address; making room drops the
//    oldest of the address, else of all, after those past their time;
//  - a half-open context past its lifetime is gone when looked up, and
//    another is found as it is;
//  - established contexts change only by INIT/CONTINUE_INIT completing
//    (then, at max_contexts, expired ones and the least recently used go),
//    or DESTROY / expiry on use: half-open ones never push one out;
//  - a context the table drops is released (nothing else holds it).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "rpc/gss/gss_context_table.h"
#include "tests/fuzz/fuzz_check.h"

namespace nfs3d {
namespace {

using rpc::gss::GssContext;
using rpc::gss::GssContextLimits;
using rpc::gss::GssContextTable;
using Handle = std::array<uint8_t, 16>;

const char* const kPeers[] = {"192.0.2.1", "192.0.2.2", "192.0.2.3", "2001:db8::1", "2001:db8::2"};

struct HalfOpenEntry {
  Handle handle;
  std::weak_ptr<GssContext> ctx;
  std::string peer;
  absl::Time until;
};

struct EstablishedEntry {
  Handle handle;
  std::weak_ptr<GssContext> ctx;
  absl::Time expiry;
  absl::Time last_used;
};

GssContextLimits Limits(FuzzedDataProvider& in) {
  GssContextLimits l;
  if (in.ConsumeBool()) return l;  // the defaults: 4096, 256, 8 per address, 5 s
  l.max_contexts = in.ConsumeIntegralInRange<size_t>(1, 8);
  l.max_half_open = in.ConsumeIntegralInRange<size_t>(1, 16);
  l.max_half_open_per_address = in.ConsumeIntegralInRange<size_t>(1, 8);
  l.half_open_lifetime = absl::Milliseconds(in.ConsumeIntegralInRange(1, 8000));
  return l;
}

class Driver {
 public:
  explicit Driver(const GssContextLimits& limits) : limits_(limits), table_(limits) {}

  void Run(FuzzedDataProvider& in) {
    for (int ops = 0; ops < 1000 && in.remaining_bytes() > 0; ++ops) {
      switch (in.ConsumeIntegralInRange(0, 6)) {
        case 0:
          BeginInit(kPeers[in.ConsumeIntegralInRange<size_t>(0, std::size(kPeers) - 1)]);
          break;
        case 1:
          InitInOneRound(in);
          break;
        case 2:
          if (!half_open_.empty()) {
            ContinueInit(in.ConsumeIntegralInRange<size_t>(0, half_open_.size() - 1), in);
          }
          break;
        case 3:
          if (!established_.empty()) {
            UseEstablished(in.ConsumeIntegralInRange<size_t>(0, established_.size() - 1),
                           in.ConsumeBool());
          }
          break;
        case 4:
          now_ += absl::Milliseconds(in.ConsumeIntegralInRange(0, 3000));
          break;
        case 5:
          LookUpEverything(in);
          break;
        case 6:
          now_ += absl::Seconds(in.ConsumeIntegralInRange(0, 100));
          break;
      }
      Check();
    }
  }

 private:
  void BeginInit(const std::string& peer);
  void InitInOneRound(FuzzedDataProvider& in);
  void ContinueInit(size_t i, FuzzedDataProvider& in);
  void UseEstablished(size_t i, bool destroy);
  void LookUpEverything(FuzzedDataProvider& in);
  // Adds ctx (established, last used now) to the model after Insert or
  // Promote: at max_contexts the table dropped the expired ones, then the
  // least recently used, and nothing else.
  void AddEstablished(const std::shared_ptr<GssContext>& ctx, size_t before);
  void Check();

  static bool Gone(const std::weak_ptr<GssContext>& ctx) { return ctx.expired(); }

  const GssContextLimits limits_;
  GssContextTable table_;
  absl::Time now_ = absl::FromUnixSeconds(1000000000);
  std::vector<HalfOpenEntry> half_open_;
  std::vector<EstablishedEntry> established_;
};

void Driver::BeginInit(const std::string& peer) {
  // The table drops those past their time, then the oldest of the address
  // (or of all) if a bound is reached.
  std::vector<HalfOpenEntry> live;
  for (const HalfOpenEntry& h : half_open_) {
    if (h.until > now_) live.push_back(h);
  }
  const size_t of_peer = std::count_if(live.begin(), live.end(),
                                       [&](const HalfOpenEntry& h) { return h.peer == peer; });
  const bool per_address = of_peer >= limits_.max_half_open_per_address;
  const bool in_all = !per_address && live.size() >= limits_.max_half_open;
  absl::Time oldest = absl::InfiniteFuture();
  for (const HalfOpenEntry& h : live) {
    if (!per_address || h.peer == peer) oldest = std::min(oldest, h.until);
  }
  auto ctx = std::make_shared<GssContext>(16);
  table_.InsertHalfOpen(ctx, peer, now_);
  for (const HalfOpenEntry& h : half_open_) {
    if (h.until <= now_) FUZZ_CHECK(Gone(h.ctx));
  }
  size_t dropped = 0;
  for (const HalfOpenEntry& h : live) {
    if (!Gone(h.ctx)) continue;
    ++dropped;
    FUZZ_CHECK(h.until == oldest && (!per_address || h.peer == peer));
  }
  FUZZ_CHECK(dropped == (per_address || in_all ? 1 : 0));
  std::erase_if(half_open_, [](const HalfOpenEntry& h) { return Gone(h.ctx); });
  half_open_.push_back({ctx->handle, ctx, peer, now_ + limits_.half_open_lifetime});
}

void Driver::InitInOneRound(FuzzedDataProvider& in) {
  auto ctx = std::make_shared<GssContext>(16);
  ctx->established.store(true);
  ctx->expiry = now_ + absl::Milliseconds(in.ConsumeIntegralInRange(1, 20000));
  const size_t before = established_.size();
  table_.Insert(ctx, now_);
  AddEstablished(ctx, before);
}

void Driver::ContinueInit(size_t i, FuzzedDataProvider& in) {
  const HalfOpenEntry h = half_open_[i];
  std::shared_ptr<GssContext> ctx = table_.Find(h.handle, now_);
  if (h.until <= now_) {  // past its time: gone, whatever the client sends
    FUZZ_CHECK(ctx == nullptr);
    half_open_.erase(half_open_.begin() + static_cast<ptrdiff_t>(i));
    FUZZ_CHECK(Gone(h.ctx));
    return;
  }
  FUZZ_CHECK(ctx != nullptr && ctx == h.ctx.lock() && !ctx->established.load());
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0: {  // GSS-API completes it
      ctx->established.store(true);
      ctx->expiry = now_ + absl::Milliseconds(in.ConsumeIntegralInRange(1, 20000));
      half_open_.erase(half_open_.begin() + static_cast<ptrdiff_t>(i));
      const size_t before = established_.size();
      table_.Promote(ctx, now_);
      AddEstablished(ctx, before);
      break;
    }
    case 1:  // an error: the server erases it
      table_.Erase(ctx->handle);
      ctx.reset();
      half_open_.erase(half_open_.begin() + static_cast<ptrdiff_t>(i));
      FUZZ_CHECK(Gone(h.ctx));
      break;
    default:  // CONTINUE_NEEDED again: it stays as it is
      break;
  }
}

void Driver::AddEstablished(const std::shared_ptr<GssContext>& ctx, size_t before) {
  const bool full = before >= limits_.max_contexts;
  size_t live = 0;  // not expired
  for (const EstablishedEntry& e : established_) live += e.expiry > now_;
  const size_t lru_drops =
      full && live >= limits_.max_contexts ? live - limits_.max_contexts + 1 : 0;
  absl::Time newest_dropped = absl::InfinitePast(), oldest_kept = absl::InfiniteFuture();
  size_t dropped_live = 0;
  for (const EstablishedEntry& e : established_) {
    const bool gone = Gone(e.ctx);
    if (!full) FUZZ_CHECK(!gone);
    if (full && e.expiry <= now_) FUZZ_CHECK(gone);  // expired ones go first
    if (e.expiry <= now_) continue;
    if (gone) {
      ++dropped_live;
      newest_dropped = std::max(newest_dropped, e.last_used);
    } else {
      oldest_kept = std::min(oldest_kept, e.last_used);
    }
  }
  FUZZ_CHECK(dropped_live == lru_drops);
  FUZZ_CHECK(newest_dropped <= oldest_kept);  // the least recently used went
  std::erase_if(established_, [](const EstablishedEntry& e) { return Gone(e.ctx); });
  established_.push_back({ctx->handle, ctx, ctx->expiry, now_});
}

void Driver::UseEstablished(size_t i, bool destroy) {
  EstablishedEntry& e = established_[i];
  std::shared_ptr<GssContext> ctx = table_.Find(e.handle, now_);
  FUZZ_CHECK(ctx != nullptr && ctx == e.ctx.lock() && ctx->established.load());
  e.last_used = now_;
  if (!destroy && now_ < e.expiry) return;
  table_.Erase(e.handle);  // DESTROY, or a call on an expired context
  ctx.reset();
  FUZZ_CHECK(Gone(e.ctx));
  established_.erase(established_.begin() + static_cast<ptrdiff_t>(i));
}

void Driver::LookUpEverything(FuzzedDataProvider& in) {
  Handle junk{};
  in.ConsumeData(junk.data(), junk.size());
  FUZZ_CHECK(table_.Find(junk, now_) == nullptr);  // 2^-128 to be one
  for (const HalfOpenEntry& h : half_open_) {
    std::shared_ptr<GssContext> ctx = table_.Find(h.handle, now_);
    FUZZ_CHECK(h.until <= now_ ? ctx == nullptr : ctx == h.ctx.lock());
  }
  std::erase_if(half_open_, [&](const HalfOpenEntry& h) {
    if (h.until > now_) return false;
    FUZZ_CHECK(Gone(h.ctx));
    return true;
  });
}

void Driver::Check() {
  FUZZ_CHECK(table_.half_open() == half_open_.size());
  FUZZ_CHECK(half_open_.size() <= limits_.max_half_open);
  for (const char* peer : kPeers) {
    FUZZ_CHECK(static_cast<size_t>(
                   std::count_if(half_open_.begin(), half_open_.end(), [&](const HalfOpenEntry& h) {
                     return h.peer == peer;
                   })) <= limits_.max_half_open_per_address);
  }
  for (const HalfOpenEntry& h : half_open_) FUZZ_CHECK(!Gone(h.ctx));  // the table holds them
  std::set<Handle> model, real;
  for (const EstablishedEntry& e : established_) model.insert(e.handle);
  for (const std::shared_ptr<GssContext>& ctx : table_.All()) real.insert(ctx->handle);
  FUZZ_CHECK(model == real);
  FUZZ_CHECK(established_.size() <= limits_.max_contexts);
  FUZZ_CHECK(table_.size() == half_open_.size() + established_.size());
}

void Fuzz(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Driver driver(Limits(in));
  driver.Run(in);
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::Fuzz(data, size);
  return 0;
}
