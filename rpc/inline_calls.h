// Which calls a transport runs right on its io thread instead of handing
// them to the worker pool. For NULL, GETATTR, LOOKUP and ACCESS the two
// thread hops (io -> worker -> io) cost more than the call itself: a GETATTR
// is one fstat on a cached descriptor, a LOOKUP of a name seen before an
// fstatat and a name_to_handle_at (server CPU per LOOKUP halved when it moved
// here: 20 -> 10 us). The price: a handle that is not cached yet is resolved
// (open_by_handle_at), or a name looked up, on the io thread; that is one
// metadata lookup, which may wait for the disk on a cold inode, stalling the
// other connections of that io thread meanwhile. Everything that reads or
// writes data, creates or syncs stays on the workers, and so does any of
// these calls the server says may wait on something remote
// (RpcServerOptions::call_may_block: a CephFS file's, which may wait for the
// cluster up to its timeout).
#ifndef NFS3D_RPC_INLINE_CALLS_H_
#define NFS3D_RPC_INLINE_CALLS_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace nfs3d::rpc {

// Peeks at a call message's header (xid, CALL, rpcvers, prog, vers, proc):
// true for NULL of any program and NFSv3 GETATTR, LOOKUP and ACCESS.
// Malformed messages are not inline (the worker path reports them as usual).
bool RunsInline(absl::Span<const uint8_t> call);

// True for NULL of any program.
bool IsNullCall(absl::Span<const uint8_t> call);

// True for an NFSv3 READ, and a WRITE whose stable_how is UNSTABLE, under
// AUTH_NONE or AUTH_SYS (RPCSEC_GSS may seal the arguments): calls that copy
// between the network and the page cache and wait for no sync. A UDP
// listener runs them on its io thread while the machine has no core to
// spare (rpc/udp_server.h); outside the InlineBudget, which they would
// exhaust at once (16 READ calls arrive together).
bool IsPageCacheCall(absl::Span<const uint8_t> call);

// Inline calls run one after another on one io thread, so a client with many
// calls in flight on one connection (or from one UDP address) would get one
// core. Within one read (TCP) or one drain of the socket (UDP), the first
// kInlineCallsPerRead inline calls run inline; further GETATTRs go to the
// metadata pool with the other metadata calls, where they run on as many
// cores as are free, while the machine has a core to spare (SpareCores: the
// hop costs a thread wake-up, worth it only then). NULL always runs inline:
// a hop costs more than it does. A client with few calls in flight sees no
// change.
class InlineBudget {
 public:
  static constexpr size_t kInlineCallsPerRead = 8;

  // True if `call` runs inline now. `can_spread`: it may go to the metadata
  // pool instead (WorkerPools::CanSpread).
  bool RunHere(absl::Span<const uint8_t> call, bool can_spread) {
    if (!RunsInline(call)) return false;
    if (can_spread && used_ >= kInlineCallsPerRead && !IsNullCall(call)) return false;
    ++used_;
    return true;
  }
  // A new read (TCP) or drain (UDP) begins.
  void Reset() { used_ = 0; }

 private:
  size_t used_ = 0;
};

// True for NFSv3 COMMIT: it waits for an fsync, so a transport that hands
// calls to workers in batches posts it alone, never in front of others.
bool WaitsForSync(absl::Span<const uint8_t> call);

// True for NFSv3 calls other than READ, WRITE and COMMIT: short metadata
// calls, which a server may run on a small pool of its own (WorkerPools).
bool IsNfsMetadataCall(absl::Span<const uint8_t> call);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_INLINE_CALLS_H_
