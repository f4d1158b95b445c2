// What the daemon hands its parts, made from the configuration: a function
// per part, used at start and again on a reload.
#ifndef NFS3D_DAEMON_DAEMON_SETTINGS_H_
#define NFS3D_DAEMON_DAEMON_SETTINGS_H_

#include "conf/exports.h"
#include "conf/server_config.h"
#include "nfsd/managed_gids.h"
#include "nfsd/nfs_server.h"
#include "rpc/gss/gss_server.h"
#include "vfs/posix/posix_backend.h"

namespace nfs3d::daemon {

// Some client of some export may use Kerberos (sec=krb5, krb5i, krb5p).
bool NeedsKerberos(const conf::ExportTable& table);
// What keeps the exports' xprtsec= lists from being served with [tls]: an
// export that admits only TLS while no certificate is set, or only mutual
// TLS while no CA is; "" when nothing does.
std::string TlsConfigProblem(const conf::ExportTable& table, const conf::ServerConfig& config);

// [kerberos]: the keytab, and the service principal (default nfs/<host>).
rpc::gss::GssServerOptions KerberosOptions(const conf::ServerConfig& config);

nfsd::TransferSettings ToTransferSettings(const conf::ServerConfig& config);

nfsd::ManagedGids::Settings ManagedGidsSettings(const conf::ServerConfig& config);

// What the backend needs of an export's options: the file system id clients
// see with fsid= (as knfsd: the number itself, or the two halves of the UUID
// xor-ed; else the real one), and crossmnt/nohide (set for any client: the
// backend serves one view of the tree per export).
vfs::PosixBackend::ExportSettings BackendSettings(const conf::Export& exp);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_DAEMON_SETTINGS_H_
