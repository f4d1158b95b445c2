// The NFSv3 service object: what every procedure needs besides its arguments
// -- the backend, the current export table (swappable at runtime for a
// reload), the transfer sizes per transport -- and the per-call "authorize"
// step that turns a file handle and an RPC credential into the export and the
// squashed credential the backend call runs with.
#ifndef NFS3D_NFSD_NFS_SERVER_H_
#define NFS3D_NFSD_NFS_SERVER_H_

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "conf/exports.h"
#include "nfsd/managed_gids.h"
#include "nfsd/transfer_sizes.h"
#include "rpc/call_context.h"
#include "vfs/backend.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd {

// What Authorize established for one call.
struct CallAuth {
  uint32_t export_id = 0;
  vfs::Cred cred;           // after squashing: what the backend call runs with
  bool read_only = true;    // the export is ro for this client
  bool readdirplus = true;  // false: `nordirplus`
  bool acl = true;          // false: `no_acl`
  vfs::FileHandle handle;   // the call's (first) handle, in vfs form
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

  // The sizes in force. SetTransferSettings replaces them (SIGHUP): calls
  // that already read them finish with the old ones, new calls see the new.
  const TransferSettings& transfer_settings() const {
    return *sizes_.load(std::memory_order_acquire);
  }
  void SetTransferSettings(const TransferSettings& sizes);
  // Sizes for the transport the call came on (TCP defaults without one).
  conf::TransferSizes SizesFor(const rpc::CallContext& ctx) const;

  // The generic per-call check, in this order:
  //   handle authentic (BADHANDLE) and of a known export (STALE; also when
  //   the export left the table), peer listed for it (ACCES), privileged
  //   source port on `secure` exports (see below), credential squashed
  //   (AUTH_NONE is anonymous), and ctx.procedure->modifies on a ro export
  //   (ROFS). A `lock_request` (NLM) on an `insecure_locks` export skips the
  //   source port check, as knfsd does. A flavor the export's sec= list does
  //   not name is refused like an unprivileged port (AUTH_TOOWEAK), except
  //   for lock requests (lockd speaks AUTH_SYS for krb5 mounts too).
  // A `secure` violation is an RPC AUTH_ERROR (AUTH_TOOWEAK) as in knfsd:
  // Authorize sets ctx.reject_auth, which makes the dispatcher replace the
  // results with that refusal, and returns NFS3ERR_PERM for callers that run
  // the procedure without a dispatcher.
  static constexpr uint32_t kAuthTooWeak = 5;  // RFC 5531 auth_stat
  nfs3::nfsstat3 Authorize(const rpc::CallContext& ctx, const nfs3::nfs_fh3& fh, CallAuth* auth,
                           bool lock_request = false) const;
  // For RENAME/LINK: `fh` must be authentic and in the same export as the
  // already authorized one (else XDEV).
  nfs3::nfsstat3 AuthorizeSecond(const nfs3::nfs_fh3& fh, const CallAuth& first,
                                 vfs::FileHandle* out) const;

  // Pieces of Authorize, public for the MOUNT service.
  // The client entry of `exp` that applies to the caller, or nullptr.
  const conf::ExportClient* MatchClient(const rpc::TransportInfo& transport,
                                        const conf::Export& exp) const;
  static bool PrivilegedPort(const rpc::TransportInfo& transport);
  // The identity a call runs with: squashed per the export's options, with
  // the supplementary groups from the server's name service when
  // manage_gids is on (AUTH_SYS only).
  vfs::Cred SquashCredential(const rpc::Credential& cred, const conf::ExportOptions& options) const;

  // `[nfsd] manage_gids`; configured by the daemon (and again on SIGHUP).
  ManagedGids& managed_gids() const { return managed_gids_; }

 private:
  vfs::Backend* const backend_;
  // One acquire load per call. Replaced versions are kept until the server
  // dies (reloads are rare and each is a few bytes), so no reader ever holds
  // a dangling pointer and no reference counting touches the hot path.
  std::atomic<const TransferSettings*> sizes_;
  std::vector<std::unique_ptr<const TransferSettings>> all_sizes_ ABSL_GUARDED_BY(mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const conf::ExportTable> exports_ ABSL_GUARDED_BY(mu_);
  HostnameResolver resolver_ ABSL_GUARDED_BY(mu_);
  mutable ManagedGids managed_gids_;
};

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NFS_SERVER_H_
