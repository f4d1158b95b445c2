#include "nfsd/nfs_server.h"

#include <netinet/in.h>

#include <utility>

#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "rpc/program.h"

namespace nfs3d::nfsd {

NfsServer::NfsServer(vfs::Backend* backend, std::shared_ptr<const conf::ExportTable> exports,
                     TransferSettings sizes)
    : backend_(backend), exports_(std::move(exports)) {
  if (!exports_) exports_ = std::make_shared<const conf::ExportTable>();
  all_sizes_.push_back(std::make_unique<const TransferSettings>(sizes));
  sizes_.store(all_sizes_.back().get(), std::memory_order_release);
}

void NfsServer::SetTransferSettings(const TransferSettings& sizes) {
  absl::MutexLock lock(&mu_);
  all_sizes_.push_back(std::make_unique<const TransferSettings>(sizes));
  sizes_.store(all_sizes_.back().get(), std::memory_order_release);
}

void NfsServer::SetExports(std::shared_ptr<const conf::ExportTable> exports) {
  if (!exports) exports = std::make_shared<const conf::ExportTable>();
  absl::MutexLock lock(&mu_);
  // The old table dies with `exports`, after the lock is released; calls
  // still using it hold their own reference.
  exports_.swap(exports);
}

std::shared_ptr<const conf::ExportTable> NfsServer::exports() const {
  absl::MutexLock lock(&mu_);
  return exports_;
}

void NfsServer::SetHostnameResolver(HostnameResolver resolver) {
  absl::MutexLock lock(&mu_);
  resolver_ = std::move(resolver);
}

conf::TransferSizes NfsServer::SizesFor(const rpc::CallContext& ctx) const {
  static const rpc::TransportInfo kDefault{};
  return nfsd::SizesFor(transfer_settings(), ctx.transport ? *ctx.transport : kDefault);
}

const conf::ExportClient* NfsServer::MatchClient(const rpc::TransportInfo& transport,
                                                 const conf::Export& exp) const {
  const auto* peer = reinterpret_cast<const sockaddr*>(&transport.peer);
  std::string hostname;
  if (exp.NeedsHostname()) {
    HostnameResolver resolver;
    {
      absl::MutexLock lock(&mu_);
      resolver = resolver_;
    }
    if (resolver) hostname = resolver(peer, transport.peer_len);
  }
  return exp.Match(peer, hostname);
}

bool NfsServer::PrivilegedPort(const rpc::TransportInfo& transport) {
  uint16_t port_be = 0;
  if (transport.peer.ss_family == AF_INET) {
    port_be = reinterpret_cast<const sockaddr_in*>(&transport.peer)->sin_port;
  } else if (transport.peer.ss_family == AF_INET6) {
    port_be = reinterpret_cast<const sockaddr_in6*>(&transport.peer)->sin6_port;
  } else {
    return false;
  }
  return ntohs(port_be) < 1024;
}

vfs::Cred NfsServer::SquashCredential(const rpc::Credential& cred,
                                      const conf::ExportOptions& options) const {
  vfs::Cred out;
  if ((cred.flavor != kAuthSys && !IsKerberos(cred.flavor)) || cred.anonymous) {
    // AUTH_NONE, and a Kerberos principal with no local user, are the
    // anonymous user.
    out.uid = options.anonuid;
    out.gid = options.anongid;
    return out;
  }
  conf::SquashedIdentity id =
      cred.flavor == kAuthSys && managed_gids_.enabled()
          ? options.Squash(cred.uid, cred.gid, *managed_gids_.GroupsOf(cred.uid))
          : options.Squash(cred.uid, cred.gid, cred.gids);
  out.uid = id.uid;
  out.gid = id.gid;
  out.groups = std::move(id.gids);
  return out;
}

nfs3::nfsstat3 NfsServer::Authorize(const rpc::CallContext& ctx, const nfs3::nfs_fh3& fh,
                                    CallAuth* auth, bool lock_request) const {
  if (ctx.transport == nullptr) return nfs3::NFS3ERR_SERVERFAULT;
  if (fh.len == 0 || fh.len > nfs3::kFhSize) return nfs3::NFS3ERR_BADHANDLE;
  auth->handle = ToVfsHandle(fh);
  absl::StatusOr<uint32_t> export_id = backend_->ExportOf(auth->handle);
  if (!export_id.ok()) return StatusToNfsStat(export_id.status());

  // Hold our own reference: a reload may swap the table while we look.
  std::shared_ptr<const conf::ExportTable> table = exports();
  const conf::Export* exp = table->FindById(*export_id);
  if (exp == nullptr) return nfs3::NFS3ERR_STALE;  // unexported since the handle was issued
  ctx.export_id = *export_id;
  ctx.export_known = true;
  const conf::ExportClient* client = MatchClient(*ctx.transport, *exp);
  if (client == nullptr) return nfs3::NFS3ERR_ACCES;
  const conf::ExportOptions& options = client->options;
  const bool port_checked = !(lock_request && !options.auth_nlm);
  if (options.secure && port_checked && !PrivilegedPort(*ctx.transport)) {
    // knfsd's answer: an RPC-level AUTH_ERROR / AUTH_TOOWEAK. The dispatcher
    // discards the results the procedure encodes (with this status) and sends
    // the refusal instead.
    ctx.reject_auth = kAuthTooWeak;
    return nfs3::NFS3ERR_PERM;
  }

  // sec= names other flavors. NLM calls are exempt: the Linux client's
  // lockd always speaks AUTH_SYS, also for sec=krb5* mounts (knfsd lets
  // lockd bypass the GSS check the same way); a lock opens no data.
  if (!options.AllowsFlavor(ctx.cred.flavor) && !lock_request) {
    ctx.reject_auth = kAuthTooWeak;
    return nfs3::NFS3ERR_PERM;
  }
  // xprtsec=: the transport must be one the export admits. knfsd answers an
  // NFSv3 call that fails check_xprtsec_policy with NFS3ERR_ACCES (fs/nfsd/
  // export.c: "rq_vers < 4 ? nfserr_acces : nfserr_wrongsec"). MNT is not
  // checked (mountd does not either: the Linux client sends MOUNT in clear
  // text, and a plaintext client's first NFS call is refused here), nor NLM:
  // the Linux client's lockd has no TLS, and a lock moves no file data.
  const rpc::TransportSecurity security = ctx.transport->security;
  if (!lock_request && !options.AllowsTransport(security != rpc::TransportSecurity::kNone,
                                                security == rpc::TransportSecurity::kMtls)) {
    return nfs3::NFS3ERR_ACCES;
  }
  auth->export_id = *export_id;
  auth->read_only = options.read_only;
  auth->readdirplus = options.readdirplus;
  auth->acl = options.acl;
  auth->cred = SquashCredential(ctx.cred, options);
  if (options.read_only && ctx.procedure != nullptr && ctx.procedure->modifies) {
    return nfs3::NFS3ERR_ROFS;
  }
  return nfs3::NFS3_OK;
}

nfs3::nfsstat3 NfsServer::AuthorizeSecond(const nfs3::nfs_fh3& fh, const CallAuth& first,
                                          vfs::FileHandle* out) const {
  if (fh.len == 0 || fh.len > nfs3::kFhSize) return nfs3::NFS3ERR_BADHANDLE;
  *out = ToVfsHandle(fh);
  absl::StatusOr<uint32_t> export_id = backend_->ExportOf(*out);
  if (!export_id.ok()) return StatusToNfsStat(export_id.status());
  return *export_id == first.export_id ? nfs3::NFS3_OK : nfs3::NFS3ERR_XDEV;
}

}  // namespace nfs3d::nfsd
