// The inside of Daemon: the parts it assembles and the steps that set them
// up. daemon.cc creates, starts, reloads and stops them; daemon_impl.cc adds
// exports and backends and sets up transports and the portmapper;
// daemon_locks.cc the lock manager; daemon_metrics.cc /metrics and the
// control socket. Only for daemon/.
#ifndef NFS3D_DAEMON_DAEMON_IMPL_H_
#define NFS3D_DAEMON_DAEMON_IMPL_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "common/log.h"
#include "daemon/certificate_watch.h"
#include "daemon/daemon.h"
#include "daemon/early_answers.h"
#include "daemon/exports_follower.h"
#include "daemon/handover.h"
#include "daemon/hostname_resolver.h"
#include "daemon/inherited_sockets.h"
#include "daemon/origin_stats_wiring.h"
#include "daemon/tcp_clients_record.h"
#include "nfsd/mount_program.h"
#include "nfsd/nfs3_program.h"
#include "nfsd/nfs_server.h"
#include "nfsd/nfsacl_program.h"
#include "nfsd/nlm_file_resolver.h"
#include "nfsd/rquota_program.h"
#include "nlm/cluster_grace.h"
#include "nlm/cluster_lock_mirror.h"
#include "nlm/nlm_program.h"
#include "nlm/nsm_program.h"
#include "nlm/ofd_lock_mirror.h"
#include "nlm/status_store.h"
#include "rpc/dispatcher.h"
#include "rpc/gss/gss_server.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "rpc/portmap_program.h"
#include "rpc/portmap_registry.h"
#include "rpc/rpc_server.h"
#include "rpc/rpcbind_client.h"
#include "rpc/tls/tls_credentials.h"
#include "stats/metrics_server.h"
#include "stats/prometheus.h"
#include "stats/server_stats.h"
#include "vfs/backend_router.h"
#include "vfs/cluster_backend.h"
#include "vfs/deadline_backend.h"
#include "vfs/file_handle_codec.h"
#include "vfs/posix/posix_backend.h"
#include "xdr/decoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"
#include "xdr/rquota_types.h"

namespace nfs3d::daemon {

struct Daemon::Impl {
  conf::ServerConfig config;
  // Reads from client sockets (RpcServerOptions::receive_count): the POSIX
  // backend looks for directory moves once per read, not per call.
  std::atomic<uint64_t> receive_count{0};
  // TCP connections admitted (RpcServerOptions::tcp_admitted_count): the
  // record of the clients (tcp_clients) looks at it to list new ones at once.
  std::atomic<uint64_t> tcp_admitted{0};
  std::unique_ptr<vfs::PosixBackend> backend;  // local directories
  // A ceph call past the timeout: the RPC layer answers its call JUKEBOX.
  RunningCallRescuer rescuer;  // outlives ceph_calls
  // cephfs= exports, from the CephFS plugin (daemon/backend_plugins.h),
  // connected at the first.
  std::unique_ptr<vfs::ClusterBackend> ceph;
  // Every call to ceph, with the [ceph] timeout (a stopped cluster daemon
  // gives JUKEBOX instead of holding the server's threads).
  std::unique_ptr<vfs::DeadlineBackend> ceph_calls;
  // Set once `ceph` exists (a reload may add the first cephfs= export): until
  // then no call needs the header decode of call_may_block.
  std::atomic<bool> ceph_connected{false};
  // On a [cluster] head: the state the heads share (grace periods, this
  // head's status monitor), in the file system.
  std::unique_ptr<DurableFiles> cluster_files;
  std::unique_ptr<vfs::BackendRouter> router;  // what the protocol layer calls
  std::set<uint32_t> backend_exports;          // export ids already added to the backend
  CachingHostnameResolver hostnames;           // for exports that name hosts
  std::unique_ptr<nfsd::NfsServer> nfs;
  std::unique_ptr<nfsd::MountService> mount;
  rpc::Program nfs_program;
  rpc::Program nfsacl_program;
  rpc::Program mount_program;
  rpc::Program rquota_program;
  rpc::PortmapRegistry portmap_registry;
  rpc::Program portmap_program;
  // Lock manager (NLM + NSM on the NFS port) when [nlm] enable; see nlm/.
  std::unique_ptr<nlm::StatusStore> nsm_store;
  std::unique_ptr<nlm::RpcPeerCaller> peer_caller;  // outlives nlm
  std::unique_ptr<nlm::OfdLockMirror> lock_mirror;  // outlives nlm
  // CephFS files' NLM locks as CephFS locks; with split_mirror routing them.
  std::unique_ptr<nlm::ClusterLockMirror> cluster_mirror;  // outlives nlm
  std::unique_ptr<nlm::SplitLockMirror> split_mirror;      // outlives nlm
  std::unique_ptr<nlm::NlmService> nlm;
  std::unique_ptr<nsm::NsmService> nsm;
  rpc::Program nlm_program;
  rpc::Program nsm_program;
  // RPCSEC_GSS, when an export lists a Kerberos flavor; outlives dispatcher.
  std::unique_ptr<rpc::gss::GssServer> gss;
  // [tls]: RPC-with-TLS; null without a certificate.
  std::shared_ptr<const rpc::tls::TlsCredentials> tls;
  // Warns before the certificates of `tls` lapse; null without [tls].
  std::unique_ptr<CertificateWatch> certificate_watch;
  std::unique_ptr<rpc::Dispatcher> dispatcher;
  std::unique_ptr<FailFastService> late_service;  // outlives server
  std::unique_ptr<rpc::RpcServer> server;
  bool registered_with_rpcbind = false;
  bool stopped = false;
  stats::ServerStats stats;
  std::unique_ptr<OriginStatsWiring> origin_stats;  // per-client accounting, slow-call log
  std::unique_ptr<stats::MetricsServer> metrics;
  std::atomic<uint64_t> reloads_ok{0};
  std::atomic<uint64_t> reloads_failed{0};
  std::atomic<size_t> export_count{0};
  double start_time = 0;  // seconds since the epoch
  // Serialises changes of the exports and configuration: SIGHUP, the
  // exports follower.
  absl::Mutex reload_mu;
  std::string exports_text;  // the exports file's text in force
  std::unique_ptr<ExportsFollower> follower;
  // A clustered head's TCP clients, for its next instance (after cluster_files).
  std::unique_ptr<TcpClientsRecord> tcp_clients;
  // Handover (daemon/handover.h): sockets a predecessor passed, not yet
  // taken; what Start runs just before serving (receiving the state); the
  // server that takes successors; what to call once handed over.
  InheritedSockets inherited;
  bool taking_over = false;  // Create(takeover): TakeOver, not Start, follows
  // The predecessor's lock manager state, once received.
  std::optional<nlm::NlmSnapshot> nlm_snapshot;
  std::function<absl::Status()> before_serving;
  std::unique_ptr<HandoverServer> handover;
  std::function<void()> handed_over;
  // The predecessor's TCP connections given to the successor: held until
  // this process exits (closing this copy leaves the connection open).
  std::vector<OwnedFd> handed_connections;

  // Adds the roots of exports the backend does not know yet.
  absl::Status AddNewExports(const conf::ExportTable& table);

  // On a [cluster] head with a CephFS export: the cluster's shared files.
  absl::Status OpenClusterFiles();

  // The status monitor's store: on a [cluster] head in the shared files
  // (nsm.<node_id>, so the head restarted on another machine after a
  // takeover notifies the same clients), else in the state directory.
  absl::StatusOr<std::unique_ptr<nlm::StatusStore>> OpenStatusStore();

  // On a [cluster] head: this head's grace period (if `grace`) is recorded in
  // the shared files, and the lock manager also refuses new locks while any
  // other head's is running (nlm/cluster_grace.h). Unreadable: in grace
  // (refusing a new lock is safe, granting one a reclaim needs is not).
  void ShareGraceWithCluster(bool grace);
  // As soon as the CephFS session of this head's previous instance is
  // ended (which releases its locks): when that instance had lock clients,
  // records the cluster's grace period in `shared`.
  void RecordGraceAtTakeover(DurableFiles& shared);

  // The RPC server's threads, limits and transports' options from [nfsd],
  // [tcp] and [ceph].
  rpc::RpcServerOptions ServerOptions();
  // On a reload: [tls] files read again, for new handshakes (daemon.cc).
  void ReloadTls(const conf::ServerConfig& config, conf::ServerConfig* applied);

  // Binds one service port on every listen address and transport; with port
  // 0 the first bind picks the port and the others reuse it.
  absl::Status ListenAll(uint16_t port, uint16_t* bound);

  // The predecessor's steps of a handover (PredecessorHooks).
  handover::Sockets PauseForHandover(std::vector<int>* fds);
  handover::State FinishForHandover(std::vector<int>* fds);
  // The successor's: puts the predecessor's state in force.
  void ImportState(HandoverClient::FinalState state);
  // The lock manager's part of each.
  // The lock manager's part of State: nlm and nlm_waiters.
  void ExportLocks(std::vector<int>* fds, handover::State* state);
  void ImportLocks(handover::State* state, std::vector<OwnedFd>* fds);
  // The Kerberos part: established RPCSEC_GSS contexts.
  void ExportGssContexts(handover::State* state);
  void ImportGssContexts(const std::vector<handover::GssContextEntry>& entries);
  // The TCP connections' part.
  std::vector<handover::TcpConnectionEntry> ExportConnections(std::vector<int>* fds);
  void ImportConnections(const std::vector<handover::TcpConnectionEntry>& entries,
                         std::vector<OwnedFd>* fds);
  // CephFS's part (daemon_handover_cephfs.cc). The predecessor flushes and
  // ends its sessions: the write verifier the successor keeps, 0 if it must
  // not. The successor adopts it and takes the locks' CephFS locks; or,
  // without the predecessor's state, ends the predecessor's sessions.
  uint64_t HandOverCeph(const handover::NlmState& locks);
  void TakeOverCeph(uint64_t write_verifier);
  void CephWithoutPredecessorState();

  // What the portmapper (ours or the system's) must know.
  struct Mapping {
    uint32_t prog, vers;
    uint16_t port;
  };
  std::vector<Mapping> Mappings(const BoundPorts& ports) const;

  // The netids the services are reachable on ("tcp", "udp6", ...).
  std::vector<std::string> Netids() const;

  // nfs3d's own portmapper on port 111, knowing nfs3d's services.
  absl::Status ServePortmapper(const std::vector<Mapping>& mappings,
                               const std::vector<std::string>& netids);

  // Registration with the system's rpcbind; failures are logged, not fatal.
  void RegisterWithRpcbind(const std::vector<Mapping>& mappings,
                           const std::vector<std::string>& netids);

  // The lock manager (NLM and NSM on the NFS port) for [nlm] enable.
  absl::Status SetUpLockManager();

  // Files of cephfs= exports: their NLM locks are CephFS locks (the backend
  // is connected when the first such export is added, also on a reload);
  // split_mirror sends each file's locks to the mirror of its backend.
  void SetUpClusterLockMirror();

  // Connects to the [ceph] cluster, once.
  absl::Status ConnectCeph();

  // Where the exports come from, for messages: the local file, or the
  // cluster's shared file.
  std::string ExportsSource(const conf::ServerConfig& c) const;
  // The text of that file now.
  absl::StatusOr<std::string> ReadExportsText(const conf::ServerConfig& c);
  // At the start of a head with [cluster] shared_exports: connects to the
  // cluster and reads the shared file, which the local file seeds when it
  // does not exist yet.
  absl::StatusOr<std::string> LoadSharedExportsText();
  // Puts a parsed table in force: new roots added to their backends, the
  // table swapped, the change logged. `text` is what it was parsed from.
  absl::Status ApplyExportTable(conf::ExportTable table, const std::string& source,
                                const std::string& text);

  // An export with cephfs=: connects to the [ceph] cluster first if needed.
  absl::Status AddCephExport(const conf::Export& exp);
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_DAEMON_IMPL_H_
