// THE NFSv3 procedure table (RFC 1813): one row per procedure, with the policy
// generic code applies. Duplicate request cache: a row is non-idempotent (its
// reply is cached) when re-running it after it succeeded gives a different or
// harmful answer: SETATTR, WRITE, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR,
// RENAME, LINK -- knfsd's cached set. WRITE is included: a replayed WRITE can
// overwrite newer data sent after it. COMMIT is not: repeating a flush is
// harmless. `modifies` rows are refused with NFS3ERR_ROFS on read-only exports
// (by NfsServer::Authorize, through ctx.procedure).
#ifndef NFS3D_NFSD_NFS3_PROGRAM_H_
#define NFS3D_NFSD_NFS3_PROGRAM_H_

#include <optional>

#include "absl/types/span.h"

#include "nfsd/nfs_server.h"
#include "rpc/program.h"

namespace nfs3d::nfsd {

// The rows, indexed by procedure number (0..21).
absl::Span<const rpc::Procedure> Nfs3Procedures();

// NFS program 100003, version 3, served by `server` (which must outlive every
// call made through the result).
rpc::Program Nfs3Program(NfsServer* server);

// The file handle of a whole RPC call message, if it is an NFSv3 call that
// the transports may run inline (GETATTR, LOOKUP, ACCESS; READ and WRITE over
// UDP: rpc/inline_calls.h), for their choice of thread: see
// RpcServerOptions::call_may_block.
std::optional<vfs::FileHandle> InlineCallHandle(absl::Span<const uint8_t> call);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NFS3_PROGRAM_H_
