// The exports table: which directories are served, to whom, and how. The file
// format is Linux exports(5):
//
//   # comment
//   /srv/data     10.0.0.0/8(rw,no_root_squash) *.example.com(ro) fd00::/8
//   "/srv/my dir" -rw,insecure host1 host2(ro)
//
// A backslash at the end of a line continues it on the next line; '#' starts
// a comment (outside quotes, at the start of a token).
//
// A "-opt,opt" token sets default options for the clients that follow it on
// the same line; a client's own "(opts)" are applied on top. A path with no
// client is exported to everyone ("*"), as exportfs does (with a warning).
//
// Client specifications: "*" (everyone), a host name (matched against the
// reverse-resolved name the caller supplies; no DNS happens here), a wildcard
// name ("*.example.com"; '*' and '?' also match dots), an IPv4/IPv6 address,
// a network "10.0.0.0/8", "fd00::/8" or "10.0.0.0/255.0.0.0", a netgroup
// "@group" (the host part of its members, looked up through NSS with
// innetgr(3)). Wildcards also take "[a-z]" classes.
//
// Which client entry applies (exports(5), "clearly defining exports
// priorities"): the first match in this order of kinds wins, regardless of
// where it appears on the line: single host (name or address), then IP
// networks, then wildcard names, then netgroups, then "*". Among entries of the same kind the
// one written first wins.
#ifndef NFS3D_CONF_EXPORTS_H_
#define NFS3D_CONF_EXPORTS_H_

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace nfs3d::conf {

inline constexpr uint32_t kNobodyId = 65534;

// The credentials a request runs with after squashing.
struct SquashedIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> gids;

  bool operator==(const SquashedIdentity&) const = default;
};

struct ExportOptions {
  enum class SquashMode {
    kRoot,  // root_squash (default): uid/gid 0 become anonuid/anongid
    kNone,  // no_root_squash
    kAll,   // all_squash: every caller becomes anonuid/anongid
  };

  // docs/exports.md lists every option and what nfs3d does with it.
  bool read_only = true;  // exports(5) default is ro
  SquashMode squash = SquashMode::kRoot;
  uint32_t anonuid = kNobodyId;
  uint32_t anongid = kNobodyId;
  bool secure = true;  // require a source port < 1024
  bool sync = true;    // recorded; "async" lets writes be acknowledged early
  // fsid=N (fsid=root is 0). Used as the export id and reported as the
  // file system id when set.
  std::optional<uint32_t> fsid;
  // fsid=<uuid>: 32 hex digits (lower case, separators dropped). The export
  // id and the reported file system id are derived from it.
  std::optional<std::string> fsid_uuid;
  bool wdelay = true;          // recorded; syncs are always gathered
  bool subtree_check = false;  // recorded; handles never depend on the path
  bool nohide = false;         // a child export is visible in its parent's
  bool crossmnt = false;       // file systems mounted below are visible
  bool auth_nlm = true;        // insecure_locks/no_auth_nlm: NLM skips `secure`
  bool acl = true;             // no_acl: NFSACL answers as without ACL support
  bool readdirplus = true;     // nordirplus: READDIRPLUS answers NOTSUPP
  // mountpoint / mp[=PATH]: serve only while PATH ("" = the export path) is
  // a mount point.
  std::optional<std::string> mountpoint;
  // cephfs=PATH: served from this directory of the CephFS file system named
  // in the config's [ceph] section; the export path is then only the name
  // clients mount.
  std::optional<std::string> cephfs;
  // cephfs_user=ID / cephfs_keyring=PATH: the cephx user (without
  // "client.") and its keyring this CephFS export mounts as, instead of the
  // [ceph] section's; "" = the [ceph] section's.
  std::string cephfs_user;
  std::string cephfs_keyring;
  // Security flavors from sec= lists, as written ("sys", "krb5p", ...);
  // empty means the default, sys.
  std::vector<std::string> sec;
  // xprtsec=MODE[:MODE...]: the transports a call may come on, as bits of
  // kXprtsecNone (plain RPC), kXprtsecTls (TLS, no client certificate) and
  // kXprtsecMtls (TLS with a verified client certificate). Default: all
  // three, as knfsd's (NFSEXP_XPRTSEC_ALL when mountd gives no xprtsec=).
  static constexpr uint8_t kXprtsecNone = 1;
  static constexpr uint8_t kXprtsecTls = 2;
  static constexpr uint8_t kXprtsecMtls = 4;
  static constexpr uint8_t kXprtsecAll = kXprtsecNone | kXprtsecTls | kXprtsecMtls;
  uint8_t xprtsec = kXprtsecAll;
  // Options accepted without effect on NFSv3 (refer=, replicas=, pnfs, ...:
  // NFSv4 only; squash_uids=: legacy), as "option (why)", for the log.
  std::vector<std::string> no_effect;

  // Applies root_squash / all_squash to an AUTH_SYS identity. root_squash maps
  // uid 0 to anonuid, gid 0 to anongid, and gid 0 in the supplementary list
  // to anongid (as knfsd does); all_squash maps everyone to anonuid/anongid
  // with no supplementary groups.
  SquashedIdentity Squash(uint32_t uid, uint32_t gid, const std::vector<uint32_t>& gids) const;

  // "secure" admits only privileged source ports (< 1024).
  bool AllowsSourcePort(uint16_t port) const { return !secure || port < 1024; }
  // A call's RPC auth flavor (RFC 5531: 0 AUTH_NONE, 1 AUTH_SYS; RFC 2623
  // pseudo-flavors of common/auth_flavor.h for krb5, krb5i, krb5p) is one the sec=
  // list names; without sec= only sys and none are.
  bool AllowsFlavor(uint32_t flavor) const;
  // A connection with (tls, peer_authenticated) satisfies the xprtsec= list.
  // As knfsd's check_xprtsec_policy: each mode admits exactly its own kind
  // of connection, so an mTLS connection needs `mtls` in the list.
  bool AllowsTransport(bool tls, bool peer_authenticated) const {
    if (!tls) return (xprtsec & kXprtsecNone) != 0;
    return (xprtsec & (peer_authenticated ? kXprtsecMtls : kXprtsecTls)) != 0;
  }

  bool operator==(const ExportOptions&) const = default;
};

// A numeric address; IPv4-mapped IPv6 addresses are stored as IPv4.
struct IpAddress {
  int family = 0;                   // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};  // first 4 used for AF_INET

  // Parses numeric text ("10.1.2.3", "fd00::1", "::ffff:10.1.2.3").
  static std::optional<IpAddress> Parse(std::string_view text);
  // From a peer address; nullopt for non-IP families.
  static std::optional<IpAddress> FromSockaddr(const sockaddr* sa);
  int BitLength() const { return family == AF_INET ? 32 : 128; }
  std::string ToString() const;
};

struct ExportClient {
  // In priority order (see the file comment).
  enum class Kind { kHost, kAddress, kNetwork, kWildcard, kNetgroup, kAnyone };

  std::string spec;  // as written, e.g. "10.0.0.0/8"
  Kind kind = Kind::kAnyone;
  // kHost: lower-case name; kWildcard: lower-case pattern; kNetgroup: the
  // group (without '@')
  std::string name;
  IpAddress address;   // kAddress / kNetwork: the (masked) address
  int prefix_len = 0;  // kNetwork: bits that must match
  ExportOptions options;

  // True if `peer` (and, for name entries, its reverse-resolved name, which
  // may be empty) falls under this entry.
  bool Matches(const IpAddress& peer, std::string_view resolved_hostname) const;
  // Priority class: lower wins. Host and address share the first class.
  int Priority() const;
};

struct Export {
  std::string path;  // absolute, normalised (no trailing or double slashes)
  std::vector<ExportClient> clients;
  // Default id for file handles: fsid= when given, else a hash of the path.
  // The vfs layer persists its own ids; this is only the initial choice.
  uint32_t export_id = 0;
  // The CephFS directory served (cephfs= option), or none: a local directory.
  std::optional<std::string> cephfs_path;
  // The cephx user and keyring it mounts as (cephfs_user=, cephfs_keyring=;
  // "" = the [ceph] section's).
  std::string cephfs_user;
  std::string cephfs_keyring;

  // The client entry that applies to `peer`, or nullptr if none does.
  // `resolved_hostname` (may be empty) is the peer's reverse-resolved name,
  // which the caller should have forward-confirmed (the name resolves back to
  // the peer) so a forged PTR record cannot claim a trusted name. Only kHost
  // and kWildcard entries look at it.
  const ExportClient* Match(const sockaddr* peer, std::string_view resolved_hostname) const;
  const ExportClient* Match(const IpAddress& peer, std::string_view resolved_hostname) const;
  // True if some entry matches by name, so the caller knows whether a reverse
  // lookup is worth doing.
  bool NeedsHostname() const;
};

struct ExportTable {
  std::vector<Export> exports;
  // Non-fatal remarks for the log (e.g. a path exported to everyone by
  // default), each "FILE:LINE: text".
  std::vector<std::string> warnings;

  // Exact path lookup; `path` is normalised first ("/srv/x/" finds "/srv/x").
  const Export* FindByPath(std::string_view path) const;
  const Export* FindById(uint32_t export_id) const;
};

// One line for the startup log: "/srv 10.0.0.0/8(rw,root_squash) *(ro,...)".
std::string DescribeExport(const Export& exp);

// The options of one client as `exportfs -v` prints them, every setting
// spelled out: "sync,wdelay,hide,no_subtree_check,sec=sys,rw,secure,...".
std::string DescribeOptions(const ExportOptions& options);

// Parses an exports file. Errors are InvalidArgument "FILE:LINE: problem".
absl::StatusOr<ExportTable> ParseExports(std::string_view text, std::string_view filename);
// Reads and parses `path`; the file must exist.
absl::StatusOr<ExportTable> LoadExports(const std::string& path);

// For "--export DIR": DIR (made absolute) exported to "*" with rw, insecure
// (so unprivileged user-space clients such as libnfs can mount) and the
// default root_squash.
ExportTable MakeQuickExport(const std::string& dir);

// Lexical normalisation of an absolute path: collapses "//" and drops a
// trailing '/'. Returns nullopt for relative paths and "." / ".." components.
std::optional<std::string> NormalizeExportPath(std::string_view path);

// Default export id for a path (FNV-1a, never 0).
uint32_t HashExportPath(std::string_view normalized_path);

}  // namespace nfs3d::conf

#endif  // NFS3D_CONF_EXPORTS_H_
