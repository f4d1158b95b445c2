#include "daemon/daemon.h"

#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/early_answers.h"
#include "daemon/hostname_resolver.h"
#include "nfsd/mount_program.h"
#include "nfsd/rquota_program.h"
#include "nfsd/nfs3_program.h"
#include "nfsd/nfs_server.h"
#include "nfsd/nfsacl_program.h"
#include "nlm/cluster_grace.h"
#include "nlm/cluster_lock_mirror.h"
#include "nfsd/nlm_file_resolver.h"
#include "nlm/nlm_program.h"
#include "nlm/ofd_lock_mirror.h"
#include "nlm/nsm_program.h"
#include "nlm/status_store.h"
#include "rpc/dispatcher.h"
#include "rpc/gss/gss_server.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "rpc/portmap_program.h"
#include "rpc/portmap_registry.h"
#include "rpc/rpc_server.h"
#include "rpc/rpcbind_client.h"
#include "stats/metrics_server.h"
#include "stats/prometheus.h"
#include "stats/server_stats.h"
#include "vfs/backend_router.h"
#include "vfs/file_handle_codec.h"
#include "vfs/posix/posix_backend.h"
#if NFS3D_HAVE_CEPHFS
#include "vfs/cephfs/cephfs_backend.h"
#include "vfs/deadline_backend.h"
#endif
#include "xdr/decoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"
#include "xdr/rquota_types.h"

namespace nfs3d::daemon {
namespace {

constexpr uint16_t kPortmapPort = 111;

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

}  // namespace

struct Daemon::Impl {
  conf::ServerConfig config;
  // Reads from client sockets (RpcServerOptions::receive_count): the POSIX
  // backend looks for directory moves once per read, not per call.
  std::atomic<uint64_t> receive_count{0};
  std::unique_ptr<vfs::PosixBackend> backend;  // local directories
#if NFS3D_HAVE_CEPHFS
  // A ceph call past the timeout: the RPC layer answers its call JUKEBOX.
  RunningCallRescuer rescuer;  // outlives ceph_calls
  std::unique_ptr<vfs::CephfsBackend> ceph;  // cephfs= exports, connected at the first
  // Every call to ceph, with the [ceph] timeout (a stopped cluster daemon
  // gives JUKEBOX instead of holding the server's threads).
  std::unique_ptr<vfs::DeadlineBackend> ceph_calls;
  // Set once `ceph` exists (a reload may add the first cephfs= export): until
  // then no call needs the header decode of call_may_block.
  std::atomic<bool> ceph_connected{false};
  // On a [cluster] head: the state the heads share (grace periods, this
  // head's status monitor), in the file system.
  std::unique_ptr<DurableFiles> cluster_files;
#endif
  std::unique_ptr<vfs::BackendRouter> router;  // what the protocol layer calls
  std::set<uint32_t> backend_exports;  // export ids already added to the backend
  CachingHostnameResolver hostnames;  // for exports that name hosts
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
  std::unique_ptr<rpc::Dispatcher> dispatcher;
  std::unique_ptr<FailFastService> late_service;  // outlives server
  std::unique_ptr<rpc::RpcServer> server;
  bool registered_with_rpcbind = false;
  bool stopped = false;
  stats::ServerStats stats;
  std::unique_ptr<stats::MetricsServer> metrics;
  std::atomic<uint64_t> reloads_ok{0};
  std::atomic<uint64_t> reloads_failed{0};
  std::atomic<size_t> export_count{0};
  double start_time = 0;  // seconds since the epoch

  // Adds the roots of exports the backend does not know yet.
  absl::Status AddNewExports(const conf::ExportTable& table) {
    for (const conf::Export& exp : table.exports) {
      if (backend_exports.count(exp.export_id)) continue;
      absl::Status added = exp.cephfs_path
                               ? AddCephExport(exp)
                               : backend->AddExport(exp.export_id, exp.path, BackendSettings(exp));
      if (!added.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("export ", exp.path, ": ", added.message()));
      }
      backend_exports.insert(exp.export_id);
    }
    return absl::OkStatus();
  }

  // On a [cluster] head with a CephFS export: the cluster's shared files.
  absl::Status OpenClusterFiles() {
#if NFS3D_HAVE_CEPHFS
    if (!ceph || config.cluster_node_id.empty()) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<DurableFiles>> files =
        ceph->SharedFiles([calls = ceph_calls.get()](std::function<absl::Status()> call) {
          return calls->Run(std::move(call));
        });
    if (!files.ok()) return files.status();
    cluster_files = std::move(*files);
#endif
    return absl::OkStatus();
  }

  // The status monitor's store: on a [cluster] head in the shared files
  // (nsm.<node_id>, so the head restarted on another machine after a
  // takeover notifies the same clients), else in the state directory.
  absl::StatusOr<std::unique_ptr<nlm::StatusStore>> OpenStatusStore() {
#if NFS3D_HAVE_CEPHFS
    if (cluster_files) {
      absl::StatusOr<std::unique_ptr<DurableFiles>> nsm =
          cluster_files->Sub(absl::StrCat("nsm.", config.cluster_node_id));
      if (!nsm.ok()) return nsm.status();
      return nlm::StatusStore::Open(std::move(*nsm));
    }
#endif
    return nlm::StatusStore::Open(config.state_dir);
  }

  // On a [cluster] head: this head's grace period (if `grace`) is recorded in
  // the shared files, and the lock manager also refuses new locks while any
  // other head's is running (nlm/cluster_grace.h). Unreadable: in grace
  // (refusing a new lock is safe, granting one a reclaim needs is not).
  void ShareGraceWithCluster(bool grace) {
#if NFS3D_HAVE_CEPHFS
    if (!cluster_files) return;
    if (grace) {
      absl::Status recorded =
          nlm::RecordGraceEnd(*cluster_files, config.cluster_node_id,
                              absl::Now() + absl::Seconds(config.nlm_grace_period));
      if (!recorded.ok()) NFS3D_LOG_WARNING("cluster grace period: %s", recorded.ToString());
    }
    nlm->SetOtherGrace([files = cluster_files.get()] {
      absl::StatusOr<absl::Time> end = nlm::LatestGraceEnd(*files);
      if (!end.ok()) {
        NFS3D_LOG_WARNING("cluster grace period unknown: %s", end.status().ToString());
        return true;
      }
      return absl::Now() < *end;
    });
#else
    (void)grace;
#endif
  }


  // The RPC server's threads, limits and transports' options from [nfsd],
  // [tcp] and [ceph].
  rpc::RpcServerOptions ServerOptions() {
    rpc::RpcServerOptions options;
    options.io_threads = config.io_threads;
    options.worker_threads = config.threads;
    const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
    options.metadata_threads =
        config.metadata_threads != 0 ? config.metadata_threads : std::max(4u, 2 * cores);
    options.max_record_size = config.max_record_size;
    options.max_connections = config.max_connections;
    options.max_inflight_per_connection = config.max_requests_per_connection;
    options.max_inflight_total = config.max_requests;
    options.tcp_sendfile = config.tcp_sendfile;
    options.receive_count = &receive_count;
    options.tcp_splice_writes = config.tcp_splice_writes;
    options.udp_pacing.mode = !config.udp_pacing       ? rpc::UdpPacingOptions::Mode::kOff
                              : config.udp_pacing_rate ? rpc::UdpPacingOptions::Mode::kFixed
                                                       : rpc::UdpPacingOptions::Mode::kAuto;
    options.udp_pacing.rate_bps = config.udp_pacing_rate;
#if NFS3D_HAVE_CEPHFS
    // A CephFS object's GETATTR, LOOKUP or ACCESS can wait for the cluster up
    // to the [ceph] timeout: on a worker, never on an io thread.
    options.call_may_block = [this](absl::Span<const uint8_t> call) {
      if (!ceph_connected.load(std::memory_order_acquire)) return false;
      // RPCSEC_GSS arguments may be sealed (krb5i/krb5p): the handle cannot be
      // read before the GssServer opens them, so such calls go to a worker.
      constexpr size_t kCredFlavorAt = 24;  // after xid, type, rpcvers, prog, vers, proc
      if (call.size() >= kCredFlavorAt + 4 &&
          xdr::Decoder(call.subspan(kCredFlavorAt)).U32() == kRpcsecGss) {
        return true;
      }
      std::optional<vfs::FileHandle> fh = nfsd::InlineCallHandle(call);
      return fh && vfs::PeekHandleType(*fh) == vfs::kCephHandleType;
    };
    // Workers run ceph calls themselves (no hand-off); one that overruns the
    // timeout has its call answered JUKEBOX through this.
    late_service = std::make_unique<FailFastService>(dispatcher.get());
    options.late_service = late_service.get();
#endif
    return options;
  }

  // Binds one service port on every listen address and transport; with port
  // 0 the first bind picks the port and the others reuse it.
  absl::Status ListenAll(uint16_t port, uint16_t* bound) {
    for (const std::string& address : config.listen) {
      if (config.tcp) {
        absl::StatusOr<uint16_t> p = server->ListenTcp(address, port);
        if (!p.ok()) return p.status();
        port = *p;
      }
      if (config.udp) {
        absl::StatusOr<uint16_t> p = server->ListenUdp(address, port);
        if (!p.ok()) return p.status();
        port = *p;
      }
    }
    *bound = port;
    return absl::OkStatus();
  }

  // What the portmapper (ours or the system's) must know.
  struct Mapping {
    uint32_t prog, vers;
    uint16_t port;
  };
  std::vector<Mapping> Mappings(const BoundPorts& ports) const {
    std::vector<Mapping> mappings = {{nfs3::kProgram, nfs3::kVersion, ports.nfs},
                                     {nfsacl::kProgram, nfsacl::kVersion, ports.nfs},
                                     {mount3::kProgram, mount3::kVersion1, ports.mount},
                                     {mount3::kProgram, mount3::kVersion3, ports.mount},
                                     {rquota::kProgram, rquota::kVersion1, ports.mount},
                                     {rquota::kProgram, rquota::kVersion2, ports.mount}};
    if (nlm) {  // NLM and NSM share the NFS port
      for (uint32_t vers : {nlm::kVersion1, nlm::kVersion3, nlm::kVersion4}) {
        mappings.push_back({nlm::kProgram, vers, ports.nfs});
      }
      mappings.push_back({nsm::kProgram, nsm::kVersion, ports.nfs});
    }
    return mappings;
  }

  // The netids the services are reachable on ("tcp", "udp6", ...).
  std::vector<std::string> Netids() const {
    bool v4 = false, v6 = false;
    for (const std::string& address : config.listen) {
      (address.find(':') != std::string::npos ? v6 : v4) = true;
    }
    std::vector<std::string> netids;
    for (const char* proto : {"tcp", "udp"}) {
      if (std::string_view(proto) == "tcp" ? !config.tcp : !config.udp) continue;
      if (v4) netids.push_back(proto);
      if (v6) netids.push_back(absl::StrCat(proto, "6"));
    }
    return netids;
  }

  // nfs3d's own portmapper on port 111, knowing nfs3d's services.
  absl::Status ServePortmapper(const std::vector<Mapping>& mappings,
                               const std::vector<std::string>& netids) {
    dispatcher->AddProgram(&portmap_program);
    uint16_t port = 0;
    if (absl::Status s = ListenAll(kPortmapPort, &port); !s.ok()) {
      return absl::UnavailableError(
          absl::StrCat("cannot serve the portmapper on port 111: ", s.message()));
    }
    for (const std::string& netid : netids) {
      for (uint32_t vers : {2, 3, 4}) {
        portmap_registry.AddLocal(rpc::kPortmapProgram, vers, netid, kPortmapPort);
      }
      for (const Mapping& m : mappings) {
        portmap_registry.AddLocal(m.prog, m.vers, netid, m.port, "nfs3d");
      }
    }
    return absl::OkStatus();
  }

  // Registration with the system's rpcbind; failures are logged, not fatal.
  void RegisterWithRpcbind(const std::vector<Mapping>& mappings,
                           const std::vector<std::string>& netids) {
    for (const Mapping& m : mappings) {
      for (const std::string& netid : netids) {
        absl::Status s = rpc::RegisterWithRpcbind(m.prog, m.vers, netid, m.port);
        if (!s.ok()) NFS3D_LOG_WARNING("rpcbind registration: %s", s.ToString());
      }
    }
    registered_with_rpcbind = true;
  }

  // The lock manager (NLM and NSM on the NFS port) for [nlm] enable.
  absl::Status SetUpLockManager() {
    absl::StatusOr<std::unique_ptr<nlm::StatusStore>> store = OpenStatusStore();
    if (!store.ok()) return store.status();
    nsm_store = std::move(*store);
    nlm::NlmOptions nlm_options;
    nlm_options.grace_period = absl::Seconds(config.nlm_grace_period);
    nlm_options.limits.max_total = config.nlm_max_locks;
    nlm_options.limits.max_per_host = config.nlm_max_locks_per_client;
    peer_caller = std::make_unique<nlm::RpcPeerCaller>();
    nlm = std::make_unique<nlm::NlmService>(
        nlm_options, nfsd::MakeNlmFileResolver(nfs.get()), peer_caller.get(),
        nsm_store.get());
    // NLM locks also lock the files themselves (OFD locks): processes on the
    // server see them, and NLM clients see theirs.
    lock_mirror = std::make_unique<nlm::OfdLockMirror>(
        [backend = router.get()](const std::string& file) {
          return backend->OpenForLocking(vfs::FileHandle::FromBytes(
              absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size())));
        });
#if NFS3D_HAVE_CEPHFS
    SetUpClusterLockMirror();
    nlm->SetMirror(split_mirror.get());
#else
    nlm->SetMirror(lock_mirror.get());
#endif
    nsm = std::make_unique<nsm::NsmService>(nlm.get());
    nlm_program = nlm::MakeNlmProgram(nlm.get());
    nsm_program = nsm::MakeNsmProgram(nsm.get());
    dispatcher->AddProgram(&nlm_program);
    dispatcher->AddProgram(&nsm_program);
    return absl::OkStatus();
  }

#if NFS3D_HAVE_CEPHFS
  // Files of cephfs= exports: their NLM locks are CephFS locks (the backend
  // is connected when the first such export is added, also on a reload);
  // split_mirror sends each file's locks to the mirror of its backend.
  void SetUpClusterLockMirror() {
    auto handle_of = [](const std::string& file) {
      return vfs::FileHandle::FromBytes(
          absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
    };
    Impl* d = this;
    cluster_mirror = std::make_unique<nlm::ClusterLockMirror>(
        [d, handle_of](const std::string& file, uint64_t owner, uint64_t first, uint64_t last,
                       short type) -> absl::StatusOr<bool> {
          if (!d->ceph) return true;
          // A lock the cluster grants after the caller was answered (timeout)
          // is released again: NLM told its client it did not get it.
          struct Outcome {
            std::atomic<int> state{0};  // 0 running, 1 answered, 2 caller gone
            absl::StatusOr<bool> granted = false;
          };
          auto out = std::make_shared<Outcome>();
          absl::Status st = d->ceph_calls->Run([d, fh = handle_of(file), owner, first, last, type,
                                                out] {
            out->granted = d->ceph->SetLock(fh, owner, first, last, type);
            int running = 0;
            if (!out->state.compare_exchange_strong(running, 1) && type != F_UNLCK &&
                out->granted.ok() && *out->granted) {
              (void)d->ceph->SetLock(fh, owner, first, last, F_UNLCK);
            }
            return absl::OkStatus();
          });
          int running = 0;
          if (!st.ok() && out->state.compare_exchange_strong(running, 2)) return st;
          return out->granted;
        },
        [d, handle_of](const std::string& file, uint64_t owner, uint64_t first, uint64_t last,
                       bool exclusive) -> absl::StatusOr<std::optional<nlm::ClusterLockMirror::Held>> {
          if (!d->ceph) return std::optional<nlm::ClusterLockMirror::Held>();
          using Held = absl::StatusOr<std::optional<vfs::CephfsBackend::HeldLock>>;
          auto out = std::make_shared<Held>(std::nullopt);
          absl::Status st = d->ceph_calls->Run([d, fh = handle_of(file), owner, first, last,
                                                exclusive, out] {
            *out = d->ceph->TestLock(fh, owner, first, last, exclusive);
            return absl::OkStatus();
          });
          if (!st.ok()) return st;
          const Held& held = *out;
          if (!held.ok()) return held.status();
          if (!*held) return std::optional<nlm::ClusterLockMirror::Held>();
          return std::optional<nlm::ClusterLockMirror::Held>(
              nlm::ClusterLockMirror::Held{(*held)->first, (*held)->last, (*held)->exclusive,
                                           (*held)->pid});
        });
    split_mirror = std::make_unique<nlm::SplitLockMirror>(
        [handle_of](const std::string& file) {
          return vfs::PeekHandleType(handle_of(file)) == vfs::kCephHandleType;
        },
        cluster_mirror.get(), lock_mirror.get());
  }
#endif

  // An export with cephfs=: connects to the [ceph] cluster first if needed.
  absl::Status AddCephExport(const conf::Export& exp) {
#if NFS3D_HAVE_CEPHFS
    if (!ceph) {
      vfs::CephfsOptions options;
      options.state_dir = config.state_dir;
      options.conf_path = config.ceph_conf;
      options.client_id = config.ceph_client_id;
      options.keyring = config.ceph_keyring;
      options.fs_name = config.ceph_fs_name;
      options.timeout_seconds = static_cast<int>(config.ceph_timeout);
      options.node_id = config.cluster_node_id;
      options.cluster_name = config.cluster_name;
      options.shared_dir = config.cluster_shared_dir;
      absl::StatusOr<std::unique_ptr<vfs::CephfsBackend>> created =
          vfs::CephfsBackend::Create(options);
      if (!created.ok()) return created.status();
      ceph = std::move(*created);
      vfs::DeadlineOptions deadline;
      deadline.timeout = absl::Seconds(config.ceph_timeout);
      // Workers call ceph inline; these threads run only what no RPC call
      // waits for directly (Run: locks, grace), as many as the main pool asks.
      deadline.threads = std::max<size_t>(config.threads, 1);
      deadline.sync_unknown = [c = ceph.get()] { c->ChangeWriteVerifier(); };
      deadline.name = ceph->cluster();
      deadline.rescuer = &rescuer;
      ceph_calls = std::make_unique<vfs::DeadlineBackend>(ceph.get(), std::move(deadline));
      router->AddHandleType(vfs::kCephHandleType, ceph_calls.get());
      ceph_connected.store(true, std::memory_order_release);
    }
    absl::Status added =
        ceph->AddExport(exp.export_id, *exp.cephfs_path, BackendSettings(exp).fsid.value_or(0));
    if (added.ok()) router->AddExport(exp.export_id, ceph_calls.get());
    return added;
#else
    (void)exp;
    return absl::UnimplementedError("this nfs3d was built without CephFS support (NFS3D_CEPHFS)");
#endif
  }
};

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Daemon::~Daemon() { Stop(); }

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Create(const conf::ServerConfig& config,
                                                      conf::ExportTable exports) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  if (mkdir(config.state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create state directory ", config.state_dir));
  }
  vfs::PosixBackendOptions backend_options;
  backend_options.state_dir = config.state_dir;
  backend_options.receive_count = &impl->receive_count;
  absl::StatusOr<std::unique_ptr<vfs::PosixBackend>> backend =
      vfs::PosixBackend::Create(backend_options);
  if (!backend.ok()) return backend.status();
  impl->backend = std::move(*backend);
  impl->router = std::make_unique<vfs::BackendRouter>(impl->backend.get());
  if (absl::Status s = impl->AddNewExports(exports); !s.ok()) return s;
  if (absl::Status s = impl->OpenClusterFiles(); !s.ok()) return s;
  for (const std::string& warning : exports.warnings) NFS3D_LOG_WARNING("%s", warning);

  auto table = std::make_shared<const conf::ExportTable>(std::move(exports));
  impl->nfs =
      std::make_unique<nfsd::NfsServer>(impl->router.get(), table, ToTransferSettings(config));
  impl->nfs->managed_gids().Configure(ManagedGidsSettings(config));
  impl->nfs->SetHostnameResolver([resolver = &impl->hostnames](const sockaddr* peer,
                                                               socklen_t len) {
    return resolver->Resolve(peer, len);
  });
  impl->mount = std::make_unique<nfsd::MountService>(impl->nfs.get());
  impl->nfs_program = nfsd::Nfs3Program(impl->nfs.get());
  impl->nfsacl_program = nfsd::NfsAclProgram(impl->nfs.get());
  impl->mount_program = nfsd::MakeMountProgram(impl->mount.get());
  impl->rquota_program = nfsd::MakeRquotaProgram(impl->nfs.get());
  impl->portmap_program = rpc::MakePortmapProgram(&impl->portmap_registry);
  impl->export_count = table->exports.size();
  rpc::DispatcherOptions dispatcher_options;
  dispatcher_options.stats = &impl->stats;
  if (NeedsKerberos(*table)) {
    absl::StatusOr<std::unique_ptr<rpc::gss::GssServer>> gss =
        rpc::gss::GssServer::Create(KerberosOptions(config));
    if (!gss.ok()) return gss.status();
    impl->gss = std::move(*gss);
    dispatcher_options.wrapping = impl->gss.get();
  }
  impl->dispatcher = std::make_unique<rpc::Dispatcher>(dispatcher_options);
  impl->dispatcher->AddProgram(&impl->nfs_program);
  impl->dispatcher->AddProgram(&impl->nfsacl_program);
  impl->dispatcher->AddProgram(&impl->mount_program);
  impl->dispatcher->AddProgram(&impl->rquota_program);
  if (config.nlm) {
    if (absl::Status s = impl->SetUpLockManager(); !s.ok()) return s;
  }
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

absl::Status Daemon::Start() {
  Impl& d = *impl_;
  const conf::ServerConfig& c = d.config;
  d.server = std::make_unique<rpc::RpcServer>(d.ServerOptions(), d.dispatcher.get());
  if (absl::Status s = d.ListenAll(c.port, &ports_.nfs); !s.ok()) return s;
  if (c.mountd_port == c.port && c.port != 0) {
    ports_.mount = ports_.nfs;  // one port serves both programs
  } else if (absl::Status s = d.ListenAll(c.mountd_port, &ports_.mount); !s.ok()) {
    return s;
  }
  const std::vector<Impl::Mapping> mappings = d.Mappings(ports_);
  const std::vector<std::string> netids = d.Netids();

  bool use_rpcbind = false, own_portmapper = false;
  switch (c.portmapper) {
    case conf::PortmapperMode::kOff: break;
    case conf::PortmapperMode::kOn: own_portmapper = true; break;
    case conf::PortmapperMode::kAuto:
      use_rpcbind = rpc::RpcbindAvailable();
      own_portmapper = !use_rpcbind;
      break;
  }
  if (own_portmapper) {
    if (absl::Status s = d.ServePortmapper(mappings, netids); !s.ok()) return s;
    ports_.own_portmapper = true;
  }
  if (absl::Status s = StartMetrics(); !s.ok()) return s;
  d.server->Start();
  if (use_rpcbind) {
    d.RegisterWithRpcbind(mappings, netids);
    ports_.rpcbind = true;
  }
  if (d.nlm) {
    // Reachable and registered now: tell the clients that held locks before
    // this start to reclaim them, and give them the grace period for it.
    bool grace = !d.nsm_store->previous_hosts().empty() && c.nlm_grace_period > 0;
    d.ShareGraceWithCluster(grace);
    d.nlm->Start(grace);
    NFS3D_LOG_INFO("lock manager: NLM v1/v3/v4 and NSM on port %d, NSM state %d%s", ports_.nfs,
                   d.nsm_store->state(), grace ? ", in grace period" : "");
  }
  NFS3D_LOG_INFO(
      "serving NFSv3 and NFSACL v3 on port %d, MOUNT v1/v3 and RQUOTA v1/v2 on port %d (%s%s%s); "
      "portmapper: %s",
                 ports_.nfs, ports_.mount, c.tcp ? "tcp" : "", c.tcp && c.udp ? "+" : "",
                 c.udp ? "udp" : "",
                 ports_.own_portmapper ? "nfs3d's own on port 111"
                 : ports_.rpcbind      ? "registered with rpcbind"
                                       : "none");
  return absl::OkStatus();
}

absl::Status Daemon::ReloadExports() { return Reload(impl_->config, /*reload_exports=*/true); }

absl::Status Daemon::Reload(const conf::ServerConfig& config, bool reload_exports) {
  Impl& d = *impl_;
  absl::StatusOr<conf::ExportTable> table;
  if (reload_exports) {
    table = conf::LoadExports(config.exports_path);
    absl::Status s = table.ok() ? d.AddNewExports(*table) : table.status();
    if (!s.ok()) {
      ++d.reloads_failed;
      return s;
    }
  }
  // Only what can change under running connections is applied.
  const conf::ServerConfig& old = d.config;
  std::vector<std::string> ignored;
  if (config.listen != old.listen) ignored.push_back("listen");
  if (config.port != old.port) ignored.push_back("port");
  if (config.mountd_port != old.mountd_port) ignored.push_back("mountd_port");
  if (config.threads != old.threads) ignored.push_back("threads");
  if (config.metadata_threads != old.metadata_threads) ignored.push_back("metadata_threads");
  if (config.io_threads != old.io_threads) ignored.push_back("io_threads");
  if (config.udp != old.udp || config.tcp != old.tcp) ignored.push_back("udp/tcp");
  if (config.max_record_size != old.max_record_size) ignored.push_back("max_record_size");
  if (config.tcp_sendfile != old.tcp_sendfile) ignored.push_back("tcp sendfile");
  if (config.tcp_splice_writes != old.tcp_splice_writes) ignored.push_back("tcp splice_writes");
  if (config.max_connections != old.max_connections) ignored.push_back("max_connections");
  if (config.max_requests_per_connection != old.max_requests_per_connection ||
      config.max_requests != old.max_requests) {
    ignored.push_back("max_requests*");
  }
  if (config.portmapper != old.portmapper) ignored.push_back("portmapper");
  if (config.state_dir != old.state_dir) ignored.push_back("state_dir");
  if (config.metrics != old.metrics || config.metrics_listen != old.metrics_listen ||
      config.metrics_port != old.metrics_port || config.control_socket != old.control_socket) {
    ignored.push_back("[metrics]");
  }
  for (const std::string& key : ignored) {
    NFS3D_LOG_WARNING("reload: %s changed; it takes effect at the next restart", key);
  }
  const bool sizes_changed =
      config.tcp_sizes != old.tcp_sizes || config.udp_sizes != old.udp_sizes ||
      config.udp_fragments != old.udp_fragments;
  if (sizes_changed) d.nfs->SetTransferSettings(ToTransferSettings(config));
  log::SetLevel(config.log_level);
  // Always anew: a reload is how an admin makes group changes count at once.
  d.nfs->managed_gids().Configure(ManagedGidsSettings(config));
  // Keep the settings that were not applied as they were, so the next
  // reload compares against what is really in force.
  conf::ServerConfig applied = old;
  applied.tcp_sizes = config.tcp_sizes;
  applied.udp_sizes = config.udp_sizes;
  applied.udp_fragments = config.udp_fragments;
  applied.log_level = config.log_level;
  applied.manage_gids = config.manage_gids;
  applied.manage_gids_ttl = config.manage_gids_ttl;
  applied.manage_gids_cache = config.manage_gids_cache;
  applied.exports_path = config.exports_path;
  d.config = applied;
  size_t count = d.export_count;
  if (reload_exports) {
    count = table->exports.size();
    for (const std::string& warning : table->warnings) NFS3D_LOG_WARNING("%s", warning);
    d.nfs->SetExports(std::make_shared<const conf::ExportTable>(std::move(*table)));
    d.export_count = count;
  }
  ++d.reloads_ok;
  NFS3D_LOG_INFO("reloaded configuration: %d exports%s%s; %s", count,
                 reload_exports ? " from " : " (exports unchanged)",
                 reload_exports ? config.exports_path : "",
                 sizes_changed ? "new transfer sizes apply to new calls" : "transfer sizes unchanged");
  return absl::OkStatus();
}

void Daemon::CountFailedReload() { ++impl_->reloads_failed; }

void Daemon::Stop() {
  Impl& d = *impl_;
  if (d.stopped) return;
  d.stopped = true;
  // Clients must not find us while we go: unregister first.
  if (d.registered_with_rpcbind) {
    if (absl::Status s = rpc::UnregisterAll(); !s.ok()) {
      NFS3D_LOG_WARNING("rpcbind unregistration: %s", s.message());
    }
  }
  const auto begin = std::chrono::steady_clock::now();
  // Stops accepting and receiving; calls already running finish.
  if (d.server) d.server->Stop();
  if (d.nlm) d.nlm->Stop();
  // UNSTABLE writes sit in the page cache; put them on disk before exiting.
  if (absl::Status synced = d.backend->SyncExports(); !synced.ok()) {
    NFS3D_LOG_ERROR("shutdown: %s", synced.message());
  }
  if (d.metrics) d.metrics->Stop();
  NFS3D_LOG_INFO("stopped serving and synced %d exports in %.3f s", d.export_count.load(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
}

absl::Status Daemon::StartMetrics() {
  Impl& d = *impl_;
  const conf::ServerConfig& c = d.config;
  d.start_time = std::chrono::duration<double>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  if (!c.metrics && !c.control_socket) return absl::OkStatus();
  d.metrics = std::make_unique<stats::MetricsServer>([this] { return RenderMetrics(); });
  if (c.metrics) {
    uint16_t port = c.metrics_port;
    for (const std::string& address : c.metrics_listen) {
      absl::StatusOr<uint16_t> bound = d.metrics->ListenTcp(address, port);
      if (!bound.ok()) return bound.status();
      port = *bound;
    }
    metrics_port_ = port;
  }
  if (c.control_socket) {
    const std::string path = absl::StrCat(c.state_dir, "/nfs3d.sock");
    if (absl::Status s = d.metrics->ListenUnix(path); !s.ok()) {
      // nfs3stat then needs --server; serving NFS matters more.
      NFS3D_LOG_WARNING("%s", s.message());
    }
  }
  d.metrics->Start();
  if (c.metrics) {
    NFS3D_LOG_INFO("metrics at http://%s:%d/metrics", c.metrics_listen.front(), metrics_port_);
  }
  return absl::OkStatus();
}

std::string Daemon::RenderMetrics() const {
  const Impl& d = *impl_;
  auto counter = [](std::string name, std::string help, double v) {
    return stats::Family{std::move(name), std::move(help), "counter", {{"", v}}};
  };
  auto gauge = [](std::string name, std::string help, double v) {
    return stats::Family{std::move(name), std::move(help), "gauge", {{"", v}}};
  };
  std::vector<stats::Family> extra;
  extra.push_back({"nfs3d_build_info", "nfs3d version; always 1.", "gauge",
                   {{"version=\"" NFS3D_VERSION_STRING "\"", 1}}});
  extra.push_back(gauge("nfs3d_start_time_seconds", "When the server started (Unix time).",
                        d.start_time));
  if (!d.config.cluster_node_id.empty()) {
    extra.push_back({"nfs3d_cluster_info",
                     "This head's cluster and node id ([cluster]); always 1.", "gauge",
                     {{absl::StrCat("cluster=\"", stats::EscapeLabel(d.config.cluster_name),
                                    "\",node_id=\"", stats::EscapeLabel(d.config.cluster_node_id),
                                    "\""),
                       1}}});
  }
  if (d.nlm) {
    extra.push_back(gauge("nfs3d_nlm_in_grace",
                          "1 while new locks are refused so that clients can reclaim theirs.",
                          d.nlm->InGrace() ? 1 : 0));
  }
  const rpc::DuplicateCacheStats drc = d.dispatcher->drc_stats();
  extra.push_back(counter("nfs3d_drc_hits_total",
                          "Retransmissions answered with a cached reply.", drc.hits));
  extra.push_back(counter("nfs3d_drc_in_progress_drops_total",
                          "Retransmissions dropped while the original call ran.",
                          drc.in_progress_drops));
  extra.push_back(counter("nfs3d_drc_insertions_total",
                          "Non-idempotent calls entered in the duplicate request cache.",
                          drc.insertions));
  extra.push_back(counter("nfs3d_drc_evictions_total",
                          "Duplicate request cache entries pushed out by its bounds.",
                          drc.evictions));
  const vfs::SyncStats sync = d.backend->sync_stats();
  extra.push_back(counter("nfs3d_sync_requests_total",
                          "Stable WRITEs and COMMITs that needed their file synced.",
                          sync.requests));
  extra.push_back(counter("nfs3d_fsyncs_total",
                          "fsync calls made for them (write gathering: requests per fsync).",
                          sync.fsyncs));
  extra.push_back(gauge("nfs3d_tcp_connections", "Open TCP connections.",
                        d.server ? d.server->open_connections() : 0));
  extra.push_back(gauge("nfs3d_exports", "Exports in force.", d.export_count.load()));
  extra.push_back({"nfs3d_config_reloads_total", "Configuration reloads (SIGHUP) by result.",
                   "counter",
                   {{"result=\"ok\"", static_cast<double>(d.reloads_ok.load())},
                    {"result=\"failed\"", static_cast<double>(d.reloads_failed.load())}}});
  return stats::RenderPrometheus(d.stats.Take(), extra);
}

}  // namespace nfs3d::daemon
