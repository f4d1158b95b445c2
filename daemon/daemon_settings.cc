#include "daemon/daemon_settings.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace nfs3d::daemon {

// Some client of some export may use Kerberos (sec=krb5, krb5i, krb5p).
bool NeedsKerberos(const conf::ExportTable& table) {
  for (const conf::Export& exp : table.exports) {
    for (const conf::ExportClient& client : exp.clients) {
      for (const std::string& f : client.options.sec) {
        if (f.rfind("krb5", 0) == 0) return true;
      }
    }
  }
  return false;
}

std::string TlsConfigProblem(const conf::ExportTable& table, const conf::ServerConfig& config) {
  using Options = conf::ExportOptions;
  for (const conf::Export& exp : table.exports) {
    for (const conf::ExportClient& client : exp.clients) {
      const uint8_t modes = client.options.xprtsec;
      if ((modes & Options::kXprtsecNone) != 0) continue;  // plain RPC serves it
      if (config.tls_certificate.empty()) {
        return absl::StrCat(exp.path, " ", client.spec,
                            ": xprtsec= admits only TLS and [tls] sets no certificate");
      }
      if ((modes & Options::kXprtsecTls) == 0 && config.tls_ca.empty()) {
        return absl::StrCat(exp.path, " ", client.spec,
                            ": xprtsec=mtls needs a [tls] ca to verify client certificates");
      }
    }
  }
  return "";
}

// [kerberos]: the keytab, and the service principal (default nfs/<host>).
rpc::gss::GssServerOptions KerberosOptions(const conf::ServerConfig& config) {
  rpc::gss::GssServerOptions o;
  o.keytab = config.krb5_keytab;
  if (config.krb5_principal == "*") return o;  // any key in the keytab
  o.principal = config.krb5_principal;
  if (o.principal.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    o.principal = absl::StrCat("nfs/", host);
  }
  return o;
}

nfsd::TransferSettings ToTransferSettings(const conf::ServerConfig& config) {
  nfsd::TransferSettings s;
  s.tcp = config.tcp_sizes;
  s.udp = config.udp_sizes;
  s.udp_auto_fragments = config.udp_fragments;
  return s;
}

nfsd::ManagedGids::Settings ManagedGidsSettings(const conf::ServerConfig& config) {
  return {.enabled = config.manage_gids,
          .ttl = absl::Seconds(config.manage_gids_ttl),
          .max_entries = config.manage_gids_cache};
}

// What the backend needs of an export's options: the file system id clients
// see with fsid= (as knfsd: the number itself, or the two halves of the UUID
// xor-ed; else the real one), and crossmnt/nohide (set for any client: the
// backend serves one view of the tree per export).
vfs::PosixBackend::ExportSettings BackendSettings(const conf::Export& exp) {
  vfs::PosixBackend::ExportSettings settings;
  for (const conf::ExportClient& c : exp.clients) {
    if (c.options.fsid) settings.fsid = *c.options.fsid;
    if (const std::optional<std::string>& uuid = c.options.fsid_uuid) {
      settings.fsid = std::stoull(uuid->substr(0, 16), nullptr, 16) ^
                      std::stoull(uuid->substr(16), nullptr, 16);
    }
    settings.crossmnt = settings.crossmnt || c.options.crossmnt;
    settings.nohide = settings.nohide || c.options.nohide;
  }
  return settings;
}

}  // namespace nfs3d::daemon
