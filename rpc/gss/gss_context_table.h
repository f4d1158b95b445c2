// The server's RPCSEC_GSS contexts, by handle. Established contexts are
// bounded in number (the least recently used goes first once the table is
// full, expired ones before that), each expiring with the ticket it was made
// from. Half-open ones (GSS-API asked for another round, CONTINUE_NEEDED) are
// kept apart: anyone may start one without proving anything, so they are
// bounded in all and per client address, live only seconds, and make room
// only among themselves; they never push out an established context.
#ifndef NFS3D_RPC_GSS_GSS_CONTEXT_TABLE_H_
#define NFS3D_RPC_GSS_GSS_CONTEXT_TABLE_H_

#include <gssapi/gssapi.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "rpc/gss/gss_protection.h"
#include "rpc/gss/seq_window.h"

namespace nfs3d::rpc::gss {

// Who a context's principal is here.
struct GssIdentity {
  std::string principal;  // as GSS-API displays it, e.g. "alice@EXAMPLE.ORG"
  bool mapped = false;    // false: no local user; the export's anonymous ids
  uint32_t uid = 65534;
  uint32_t gid = 65534;
  std::vector<uint32_t> gids;
};

struct GssContext {
  explicit GssContext(uint32_t seq_window) : window(seq_window) {}
  ~GssContext();
  GssContext(const GssContext&) = delete;
  GssContext& operator=(const GssContext&) = delete;

  std::array<uint8_t, 16> handle{};
  absl::Mutex mu;
  // The context while it is being established (INIT, CONTINUE_INIT).
  gss_ctx_id_t gss ABSL_GUARDED_BY(mu) = GSS_C_NO_CONTEXT;
  SeqWindow window ABSL_GUARDED_BY(mu);
  // Per-message tokens once established: set once, under mu, before
  // `established`; used without mu after (GssProtection is thread-safe).
  std::unique_ptr<GssProtection> protection;
  // Set once, under mu, when the context is established; read-only after.
  std::atomic<bool> established{false};
  absl::Time expiry = absl::InfiniteFuture();
  GssIdentity identity;
  std::atomic<int64_t> last_used_ns{0};
  // Half-open only, set before it enters the table: the client's address
  // (its bound) and when the context is dropped unless established.
  std::string peer;
  absl::Time half_open_until = absl::InfiniteFuture();
};

struct GssContextLimits {
  size_t max_contexts = 4096;  // established
  size_t max_half_open = 256;
  size_t max_half_open_per_address = 8;
  absl::Duration half_open_lifetime = absl::Seconds(5);
};

class GssContextTable {
 public:
  explicit GssContextTable(const GssContextLimits& limits);
  GssContextTable(const GssContextTable&) = delete;
  GssContextTable& operator=(const GssContextTable&) = delete;

  // Gives ctx a fresh random handle and adds it, making room if needed. Only
  // contexts GSS-API accepted come here, so junk INIT calls never push out
  // live contexts.
  void Insert(const std::shared_ptr<GssContext>& ctx, absl::Time now);
  // A half-open context from `peer` (an address, no port): a fresh handle,
  // a life of half_open_lifetime; the oldest half-open context of that
  // address, else of all, goes when a bound is reached.
  void InsertHalfOpen(const std::shared_ptr<GssContext>& ctx, std::string peer, absl::Time now);
  // A half-open context GSS-API has now established: counted among the
  // established ones from here on, under the handle it has.
  void Promote(const std::shared_ptr<GssContext>& ctx, absl::Time now);
  // Adds ctx under the handle it has (a context taken over from another
  // process); false when that handle is taken already.
  bool Adopt(const std::shared_ptr<GssContext>& ctx, absl::Time now);
  // Every established context, for a handover.
  std::vector<std::shared_ptr<GssContext>> All() const;
  // The context with this handle, or null (also for a half-open one past
  // its time, which goes then).
  std::shared_ptr<GssContext> Find(absl::Span<const uint8_t> handle, absl::Time now);
  void Erase(absl::Span<const uint8_t> handle);
  size_t size() const;  // both kinds
  size_t half_open() const;

 private:
  // A view for lookups (the map finds by string_view without building a
  // string: a 16-byte handle is past std::string's inline size).
  static absl::string_view Key(absl::Span<const uint8_t> handle) {
    return absl::string_view(reinterpret_cast<const char*>(handle.data()), handle.size());
  }
  // Moves contexts out to make room; the caller lets them go after unlocking
  // (a context's destructor takes its own lock).
  void MakeRoomLocked(absl::Time now, std::vector<std::shared_ptr<GssContext>>* gone)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same among half-open contexts, for one more from `peer`.
  void MakeHalfOpenRoomLocked(const std::string& peer, absl::Time now,
                              std::vector<std::shared_ptr<GssContext>>* gone)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A random handle neither map has.
  void NewHandleLocked(GssContext& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const GssContextLimits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<GssContext>> contexts_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<GssContext>> half_open_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_GSS_CONTEXT_TABLE_H_
