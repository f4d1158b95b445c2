// The server's RPCSEC_GSS contexts, by handle: bounded in number (the least
// recently used goes first once the table is full, expired ones before
// that), each expiring with the ticket it was made from.
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
};

class GssContextTable {
 public:
  explicit GssContextTable(size_t max_contexts) : max_(max_contexts == 0 ? 1 : max_contexts) {}
  GssContextTable(const GssContextTable&) = delete;
  GssContextTable& operator=(const GssContextTable&) = delete;

  // Gives ctx a fresh random handle and adds it, making room if needed. Only
  // contexts GSS-API accepted come here, so junk INIT calls never push out
  // live contexts.
  void Insert(const std::shared_ptr<GssContext>& ctx, absl::Time now);
  // Adds ctx under the handle it has (a context taken over from another
  // process); false when that handle is taken already.
  bool Adopt(const std::shared_ptr<GssContext>& ctx, absl::Time now);
  // Every context, for a handover.
  std::vector<std::shared_ptr<GssContext>> All() const;
  // The context with this handle, or null.
  std::shared_ptr<GssContext> Find(absl::Span<const uint8_t> handle, absl::Time now);
  void Erase(absl::Span<const uint8_t> handle);
  size_t size() const;

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

  const size_t max_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<GssContext>> contexts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_GSS_CONTEXT_TABLE_H_
