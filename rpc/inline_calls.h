// Which calls a transport runs right on its io thread instead of handing
// them to the worker pool. For NULL and GETATTR the two thread hops (io ->
// worker -> io) cost more than the call itself: a GETATTR is one fstat on a
// cached descriptor. The price: a GETATTR of a handle that is not cached yet
// resolves it (open_by_handle_at) on the io thread; that is one metadata
// lookup, which may wait for the disk on a cold inode, stalling the other
// connections of that io thread meanwhile. Everything that reads or writes
// data, creates or syncs stays on the workers.
#ifndef NFS3D_RPC_INLINE_CALLS_H_
#define NFS3D_RPC_INLINE_CALLS_H_

#include <cstdint>

#include "absl/types/span.h"

namespace nfs3d::rpc {

// Peeks at a call message's header (xid, CALL, rpcvers, prog, vers, proc):
// true for NULL of any program and NFSv3 GETATTR. Malformed messages are
// not inline (the worker path reports them as usual).
bool RunsInline(absl::Span<const uint8_t> call);

// True for NFSv3 COMMIT: it waits for an fsync, so a transport that hands
// calls to workers in batches posts it alone, never in front of others.
bool WaitsForSync(absl::Span<const uint8_t> call);

// True for NFSv3 calls other than READ, WRITE and COMMIT: short metadata
// calls, which a server may run on a small pool of its own (WorkerPools).
bool IsNfsMetadataCall(absl::Span<const uint8_t> call);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_INLINE_CALLS_H_
