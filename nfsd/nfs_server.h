// The NFSv3 service object: what every procedure needs besides its arguments
// -- the backend, the current export table (swappable at runtime for a
// reload), the transfer sizes per transport -- and the per-call "authorize"
// step that turns a file handle and an RPC credential into the export and the
// squashed credential the backend call runs with.
#ifndef NFS3D_NFSD_NFS_SERVER_H_
#define NFS3D_NFSD_NFS_SERVER_H_

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "conf/exports.h"
#include "nfsd/transfer_sizes.h"
#include "rpc/call_context.h"
#include "vfs/backend.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd {

// What Authorize established for one call.
struct CallAuth {
  uint32_t export_id = 0;
  vfs::Cred cred;          // after squashing: what the backend call runs with
  bool read_only = true;   // the export is ro for this client
  vfs::FileHandle handle;  // the call's (first) handle, in vfs form
};

class NfsServer {
 public:
  // Reverse-resolves a peer for exports that name hosts ("" if unknown). Only
  // called when an export has a host-name entry; the default resolves nothing,
  // so such entries never match until the daemon installs a (caching) one.
  using HostnameResolver = std::function<std::string(const sockaddr* peer, socklen_t len)>;

  // `backend` must outlive the server.
  NfsServer(vfs::Backend* backend, std::shared_ptr<const conf::ExportTable> exports,
            TransferSettings sizes = {});

  vfs::Backend& backend() const { return *backend_; }

  // Replaces the export table; calls already running keep the old one.
  void SetExports(std::shared_ptr<const conf::ExportTable> exports);
  std::shared_ptr<const conf::ExportTable> exports() const;
  void SetHostnameResolver(HostnameResolver resolver);

  const TransferSettings& transfer_settings() const { return sizes_; }
  // Sizes for the transport the call came on (TCP defaults without one).
  TransportSizes SizesFor(const rpc::CallContext& ctx) const;

  // The generic per-call check, in this order:
  //   handle authentic (BADHANDLE) and of a known export (STALE; also when
  //   the export left the table), peer listed for it (ACCES), privileged
  //   source port on `secure` exports (PERM, see below), credential squashed
  //   (AUTH_NONE is anonymous), and ctx.procedure->modifies on a ro export
  //   (ROFS).
  // A `secure` violation should be an RPC AUTH_ERROR (AUTH_TOOWEAK) as in
  // knfsd, but a procedure cannot emit RPC-level errors through its row, so
  // nfs3d answers NFS3ERR_PERM.
  nfs3::nfsstat3 Authorize(const rpc::CallContext& ctx, const nfs3::nfs_fh3& fh,
                           CallAuth* auth) const;
  // For RENAME/LINK: `fh` must be authentic and in the same export as the
  // already authorized one (else XDEV).
  nfs3::nfsstat3 AuthorizeSecond(const nfs3::nfs_fh3& fh, const CallAuth& first,
                                 vfs::FileHandle* out) const;

  // Pieces of Authorize, public for the MOUNT service.
  // The client entry of `exp` that applies to the caller, or nullptr.
  const conf::ExportClient* MatchClient(const rpc::TransportInfo& transport,
                                        const conf::Export& exp) const;
  static bool PrivilegedPort(const rpc::TransportInfo& transport);
  static vfs::Cred SquashCredential(const rpc::Credential& cred,
                                    const conf::ExportOptions& options);

 private:
  vfs::Backend* const backend_;
  const TransferSettings sizes_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const conf::ExportTable> exports_ ABSL_GUARDED_BY(mu_);
  HostnameResolver resolver_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NFS_SERVER_H_
