#include "daemon/daemon_impl.h"

#include "daemon/backend_plugins.h"
#include "daemon/daemon_settings.h"

namespace nfs3d::daemon {

namespace {

constexpr uint16_t kPortmapPort = 111;

}  // namespace

absl::Status Daemon::Impl::AddNewExports(const conf::ExportTable& table) {
  for (const conf::Export& exp : table.exports) {
    if (backend_exports.count(exp.export_id)) continue;
    absl::Status added = exp.cephfs_path
                             ? AddCephExport(exp)
                             : backend->AddExport(exp.export_id, exp.path, BackendSettings(exp));
    if (!added.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("export ", exp.path, ": ", added.message()));
    }
    backend_exports.insert(exp.export_id);
  }
  return absl::OkStatus();
}

absl::Status Daemon::Impl::OpenClusterFiles() {
  if (!ceph || config.cluster_node_id.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<DurableFiles>> files =
      ceph->SharedFiles([calls = ceph_calls.get()](std::function<absl::Status()> call) {
        return calls->Run(std::move(call));
      });
  if (!files.ok()) return files.status();
  cluster_files = std::move(*files);
  return absl::OkStatus();
}

absl::Status Daemon::Impl::ConnectCeph() {
  if (ceph) return absl::OkStatus();
  absl::StatusOr<const vfs::BackendPlugin*> plugin = LoadBackendPlugin("cephfs");
  if (!plugin.ok()) return plugin.status();
  vfs::ClusterBackendOptions options;
  options.state_dir = config.state_dir;
  options.conf_path = config.ceph_conf;
  options.client_id = config.ceph_client_id;
  options.keyring = config.ceph_keyring;
  options.fs_name = config.ceph_fs_name;
  options.timeout_seconds = static_cast<int>(config.ceph_timeout);
  options.session_check_seconds = static_cast<int>(config.ceph_session_check);
  options.cache_bytes = config.ceph_cache_size;
  options.node_id = config.cluster_node_id;
  options.cluster_name = config.cluster_name;
  options.shared_dir = config.cluster_shared_dir;
  options.after_ending_previous_session = [this](DurableFiles& shared) {
    RecordGraceAtTakeover(shared);
  };
  // A handover: the running instance serves on until it hands over.
  options.beside_running_instance = taking_over;
  absl::StatusOr<std::unique_ptr<vfs::ClusterBackend>> created = (*plugin)->create(options);
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
  return absl::OkStatus();
}

absl::Status Daemon::Impl::AddCephExport(const conf::Export& exp) {
  if (absl::Status connected = ConnectCeph(); !connected.ok()) return connected;
  absl::Status added =
      ceph->AddExport(exp.export_id, *exp.cephfs_path, BackendSettings(exp).fsid.value_or(0),
                      vfs::ClusterUser{exp.cephfs_user, exp.cephfs_keyring});
  if (added.ok()) router->AddExport(exp.export_id, ceph_calls.get());
  return added;
}

rpc::RpcServerOptions Daemon::Impl::ServerOptions() {
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
  options.max_inflight_per_client = config.max_requests_per_client;
  options.tcp_sendfile = config.tcp_sendfile;
  options.udp_sendfile = config.udp_sendfile;
  options.receive_count = &receive_count;
  options.tcp_admitted_count = &tcp_admitted;
  options.tcp_splice_writes = config.tcp_splice_writes;
  options.tcp_record_timeout_ms = int64_t{config.tcp_record_timeout} * 1000;
  options.tcp_unfinished_per_client = config.tcp_unfinished_per_client;
  options.tls = tls;
  options.tls_handshake_timeout_ms = int64_t{config.tls_handshake_timeout} * 1000;
  options.udp_pacing.mode = !config.udp_pacing       ? rpc::UdpPacingOptions::Mode::kOff
                            : config.udp_pacing_rate ? rpc::UdpPacingOptions::Mode::kFixed
                                                     : rpc::UdpPacingOptions::Mode::kAuto;
  options.udp_pacing.rate_bps = config.udp_pacing_rate;
  // A CephFS object's GETATTR, LOOKUP, ACCESS (or, over UDP, READ or WRITE)
  // can wait for the cluster up to the [ceph] timeout: on a worker, never on
  // an io thread.
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
  return options;
}

absl::Status Daemon::Impl::ListenAll(uint16_t port, uint16_t* bound) {
  for (const std::string& address : config.listen) {
    for (bool tcp : {true, false}) {
      if (!(tcp ? config.tcp : config.udp)) continue;
      absl::StatusOr<uint16_t> p;
      if (std::optional<OwnedFd> fd =
              inherited.Take(handover::SocketRole::kRpc, tcp, address, port)) {
        p = tcp ? server->AdoptTcp(fd->Release()) : server->AdoptUdp(fd->Release());
        if (p.ok()) {
          NFS3D_LOG_INFO("listening on %s %s port %d (handed over)", tcp ? "tcp" : "udp", address,
                         *p);
        }
      } else {
        p = tcp ? server->ListenTcp(address, port) : server->ListenUdp(address, port);
      }
      if (!p.ok()) return p.status();
      port = *p;
    }
  }
  *bound = port;
  return absl::OkStatus();
}

std::vector<Daemon::Impl::Mapping> Daemon::Impl::Mappings(const BoundPorts& ports) const {
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

std::vector<std::string> Daemon::Impl::Netids() const {
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

absl::Status Daemon::Impl::ServePortmapper(const std::vector<Mapping>& mappings,
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
      portmap_registry.AddLocal(m.prog, m.vers, netid, m.port);  // the superuser's
    }
  }
  return absl::OkStatus();
}

void Daemon::Impl::RegisterWithRpcbind(const std::vector<Mapping>& mappings,
                                       const std::vector<std::string>& netids) {
  for (const Mapping& m : mappings) {
    for (const std::string& netid : netids) {
      absl::Status s = rpc::RegisterWithRpcbind(m.prog, m.vers, netid, m.port);
      if (!s.ok()) NFS3D_LOG_WARNING("rpcbind registration: %s", s.ToString());
    }
  }
  registered_with_rpcbind = true;
}

}  // namespace nfs3d::daemon
