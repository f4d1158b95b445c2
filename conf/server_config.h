// nfs3d's server configuration: the settings of conf/nfs3d.conf (see that file
// for what each key means) with the defaults built in, so an absent file or
// key means the default. Unknown sections or keys are errors: a typo must not
// silently fall back to a default.
#ifndef NFS3D_CONF_SERVER_CONFIG_H_
#define NFS3D_CONF_SERVER_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "common/log.h"
#include "rpc/tcp_sendfile.h"

namespace nfs3d::conf {

// How to reach the portmapper (RFC 1833).
enum class PortmapperMode {
  kAuto,  // register with rpcbind if it answers, else serve our own on 111
  kOn,    // always serve our own portmapper
  kOff,   // never register nor serve
};

// READ/WRITE transfer sizes advertised by FSINFO and enforced by READ/WRITE,
// for one transport: as configured here, and as nfsd clamps them per call
// (nfsd/transfer_sizes.h).
struct TransferSizes {
  uint32_t rsize_max = 0;
  uint32_t rsize_pref = 0;
  uint32_t wsize_max = 0;
  uint32_t wsize_pref = 0;
  // UDP only: "rsize_pref = auto" / "wsize_pref = auto" size the preferred
  // READ / WRITE size from the MTU of the interface a call arrived on (the
  // UDP default). rsize_pref / wsize_pref then hold the fallback for an
  // unknown MTU.
  bool rsize_pref_auto = false;
  bool wsize_pref_auto = false;

  bool operator==(const TransferSizes&) const = default;
};

struct ServerConfig {
  // [nfsd]
  std::vector<std::string> listen = {"0.0.0.0", "::"};  // numeric addresses
  uint16_t port = 2049;                                 // NFS; 0 = ephemeral (tests)
  uint16_t mountd_port = 20048;                         // MOUNT; 0 = ephemeral
  uint32_t threads = 16;                                // worker threads running procedures
  // Threads of the NFSv3 metadata pool; 0 = auto (2 per core, at least 4).
  uint32_t metadata_threads = 0;
  uint32_t io_threads = 0;  // network io_contexts; 0 = number of cores
  bool udp = true;
  bool tcp = true;
  uint32_t max_record_size = 1114112;  // cap on one TCP record, in bytes
  PortmapperMode portmapper = PortmapperMode::kAuto;
  // TCP connections held at once; at the limit a newcomer takes the place
  // of the longest idle one.
  uint32_t max_connections = 16384;
  // Calls one TCP connection may have in progress (reading pauses beyond).
  uint32_t max_requests_per_connection = 64;
  // Calls queued for or running on the workers, all clients together; UDP
  // calls beyond it are dropped (clients retransmit), TCP reading pauses.
  uint32_t max_requests = 1024;
  // Of those, the most the calls of one client address (an IPv6 /64) may
  // hold, so one host cannot take every slot; 0: three quarters of
  // max_requests.
  uint32_t max_requests_per_client = 0;
  // The supplementary groups of AUTH_SYS callers from the server's name
  // service instead of the credential's (at most 16), as rpc.mountd
  // --manage-gids; cached per uid for manage_gids_ttl seconds, at most
  // manage_gids_cache uids.
  bool manage_gids = false;
  uint32_t manage_gids_ttl = 1800;
  uint32_t manage_gids_cache = 65536;

  // [tcp] and [udp]
  TransferSizes tcp_sizes{1048576, 1048576, 1048576, 1048576, false};
  TransferSizes udp_sizes{32768, 32768, 32768, 32768, true, true};
  // IP fragments an auto-sized UDP READ reply or WRITE call may span.
  uint32_t udp_fragments = 6;
  // UDP replies that span several frames leave one at a time, whole, at a
  // rate per client: udp_pacing_rate bits/s, or learned from the client's
  // retransmissions when 0 ("pacing = auto"). Off: workers send at once.
  bool udp_pacing = true;
  uint64_t udp_pacing_rate = 0;
  // READ data over TCP spliced from the page cache (no user-space copy) instead of
  // pread + sendmsg. See nfs3d.conf for the figures.
  rpc::TcpSendfile tcp_sendfile = rpc::TcpSendfile::kOn;
  // The same for UDP READ replies: header, file pages and pad put together in
  // the kernel as one datagram (rpc/udp_spliced_reply.h).
  bool udp_sendfile = true;
  // WRITEs over TCP with at least this many data bytes have their data spliced
  // from the socket into the file through a pipe (no copy in user space); 0:
  // never. See nfs3d.conf for the figures behind the default.
  uint32_t tcp_splice_writes = 64 << 10;
  // A TCP connection inside a record of which no byte arrived for this many
  // seconds is closed (a record that stopped arriving); 0: never.
  uint32_t tcp_record_timeout = 30;
  // Bytes of TCP records begun and not finished that the connections from
  // one client address (an IPv6 /64) may hold together; a connection that
  // would take more is closed. At least max_record_size.
  uint32_t tcp_unfinished_per_client = 64u << 20;

  // [paths]
  std::string state_dir = "/var/lib/nfs3d";
  std::string exports_path = "/etc/nfs3d/exports";
  // Seconds between looks at the exports file; a changed file is put in
  // force as on SIGHUP. 0: only SIGHUP re-reads it (knfsd's exportfs -r).
  uint32_t exports_poll = 0;
  // Where optional backends' plugins are (backend-cephfs.so); "": where
  // they were installed (or, for the nfs3d of a build tree, that tree's).
  std::string plugin_dir;

  // [log]
  log::Level log_level = log::Level::kInfo;
  bool syslog = false;
  // A call slower than this is logged (rate-limited) with its client, user,
  // export, procedure and file handle; 0: never.
  uint32_t slow_call_ms = 0;

  // [metrics]: Prometheus text format over HTTP, and the unix socket
  // <state_dir>/nfs3d.sock that `nfs3stat` reads by default.
  bool metrics = false;                                     // serve over TCP
  std::vector<std::string> metrics_listen = {"127.0.0.1"};  // numeric addresses
  uint16_t metrics_port = 9049;
  bool control_socket = true;
  // The per-client and per-user series (client addresses, uids, Kerberos
  // principals) on the TCP page too; off: only on the control socket (root).
  bool metrics_tcp_per_client = false;
  // Per-origin accounting: exact counters for this many of the busiest
  // clients, exports and users (per worker thread and in each snapshot);
  // the rest are summed as "other". top_clients = 0 turns it off.
  uint32_t top_clients = 128;
  uint32_t top_exports = 64;
  uint32_t top_users = 64;

  // [nlm]: the lock manager (NLM + NSM), served on the NFS port.
  bool nlm = true;
  uint32_t nlm_grace_period = 90;  // seconds clients have to reclaim locks after a restart
  uint32_t nlm_max_locks = 65536;  // lock records, all clients
  uint32_t nlm_max_locks_per_client = 4096;

  // [ceph]: the cluster that exports with the cephfs= option are served
  // from (vfs/cephfs/). Empty conf = libcephfs's default search.
  std::string ceph_conf;
  std::string ceph_client_id = "admin";  // cephx name without "client."
  std::string ceph_keyring;              // "" = as ceph.conf says
  std::string ceph_fs_name;              // "" = the cluster's default file system
  uint32_t ceph_timeout = 30;            // seconds before an unanswered call fails
  // Seconds between checks of the CephFS sessions; one the cluster ended
  // (evicted) is replaced by a new one. 0: never checked.
  uint32_t ceph_session_check = 5;
  // Bytes of file data libcephfs caches per mount (its object cache,
  // client_oc_size; half of it may be dirty). 0: as ceph.conf says.
  uint32_t ceph_cache_size = 96 << 20;

  // [tls]: RPC-with-TLS (RFC 9289) for exports whose xprtsec= names tls or
  // mtls. PEM files; no certificate: probes are answered as by a server
  // without TLS. A CA makes clients' certificates verified (mtls). (The
  // number first: it fills the padding after ceph_cache_size.)
  uint32_t tls_handshake_timeout = 10;  // seconds from the probe to a finished handshake
  std::string tls_certificate;
  std::string tls_key;
  std::string tls_ca;

  // [cluster]: several heads serving one CephFS file system. A node id makes
  // this head one of them: CephFS handles are signed with the key in the file
  // system's cluster_shared_dir, so any head of the cluster accepts them.
  std::string cluster_node_id;  // "" = a head of its own
  std::string cluster_name = "nfs3d";
  std::string cluster_shared_dir = "/.nfs3d";  // a CephFS path
  // The exports of every head in one file, <shared_dir>/exports in CephFS,
  // followed every cluster_exports_poll seconds; the local exports file
  // then only seeds it when it does not exist yet.
  bool cluster_shared_exports = false;
  uint32_t cluster_exports_poll = 2;

  // [kerberos]: RPCSEC_GSS for exports whose sec= lists krb5, krb5i or krb5p.
  std::string krb5_keytab;     // "" = $KRB5_KTNAME, else /etc/krb5.keytab
  std::string krb5_principal;  // "" = nfs/<this host's name>; "*" = any key in the keytab

  bool operator==(const ServerConfig&) const = default;
};

// Limits enforced by the parser.
inline constexpr uint32_t kMaxTcpTransferSize = 1u << 20;  // 1 MiB
// A UDP reply must fit one datagram (65507 bytes of IPv4 payload) together
// with its RPC and NFS headers.
inline constexpr uint32_t kMaxUdpTransferSize = 63u * 1024;

ServerConfig DefaultServerConfig();

// Reads and parses `path`; the file must exist.
absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path);

// Parses config text. Errors are InvalidArgument "FILENAME:LINE: problem".
absl::StatusOr<ServerConfig> ParseServerConfig(std::string_view text, std::string_view filename);

// One line for the startup log.
std::string Describe(const ServerConfig& config);

std::string_view PortmapperModeName(PortmapperMode mode);

}  // namespace nfs3d::conf

#endif  // NFS3D_CONF_SERVER_CONFIG_H_
