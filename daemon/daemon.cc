#include "daemon/daemon.h"

#include <algorithm>

#include "daemon/backend_plugins.h"
#include "daemon/daemon_impl.h"
#include "daemon/daemon_settings.h"

namespace nfs3d::daemon {

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Daemon::~Daemon() { Stop(); }

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Create(const conf::ServerConfig& config,
                                                       conf::ExportTable exports, bool takeover) {
  // The plugins the exports need are loaded (or refused, naming the package
  // to install) before any thread starts: each sets up the process as its
  // backend needs (the CephFS one caps malloc's arenas, and glibc stops
  // reading the cap once it has settled its arena limit).
  if (absl::Status s = LoadPluginsFor(exports, config.cluster_shared_exports); !s.ok()) return s;
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->taking_over = takeover;
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
  if (config.cluster_shared_exports) {
    absl::StatusOr<std::string> text = impl->LoadSharedExportsText();
    if (!text.ok()) return text.status();
    absl::StatusOr<conf::ExportTable> shared =
        conf::ParseExports(*text, impl->ExportsSource(config));
    if (!shared.ok()) return shared.status();
    exports = std::move(*shared);
    impl->exports_text = *text;
    NFS3D_LOG_INFO("exports from %s: %d", impl->ExportsSource(config), exports.exports.size());
  } else if (absl::StatusOr<std::string> text = impl->ReadExportsText(config); text.ok()) {
    impl->exports_text = *text;  // what the exports follower compares with
  }
  if (absl::Status s = impl->AddNewExports(exports); !s.ok()) return s;
  if (absl::Status s = impl->OpenClusterFiles(); !s.ok()) return s;
  for (const std::string& warning : exports.warnings) NFS3D_LOG_WARNING("%s", warning);

  auto table = std::make_shared<const conf::ExportTable>(std::move(exports));
  impl->nfs =
      std::make_unique<nfsd::NfsServer>(impl->router.get(), table, ToTransferSettings(config));
  impl->nfs->managed_gids().Configure(ManagedGidsSettings(config));
  impl->nfs->SetHostnameResolver(
      [resolver = &impl->hostnames](const sockaddr* peer, socklen_t len) {
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
  impl->origin_stats = std::make_unique<OriginStatsWiring>(
      &impl->stats, config, [nfs = impl->nfs.get()] { return nfs->exports(); });
  if (NeedsKerberos(*table)) {
    absl::StatusOr<std::unique_ptr<rpc::gss::GssServer>> gss =
        rpc::gss::GssServer::Create(KerberosOptions(config));
    if (!gss.ok()) return gss.status();
    impl->gss = std::move(*gss);
    dispatcher_options.wrapping = impl->gss.get();
  }
  if (std::string problem = TlsConfigProblem(*table, config); !problem.empty()) {
    return absl::InvalidArgumentError(problem);
  }
  if (!config.tls_certificate.empty()) {
    absl::StatusOr<std::shared_ptr<const rpc::tls::TlsCredentials>> tls =
        rpc::tls::TlsCredentials::Load({config.tls_certificate, config.tls_key, config.tls_ca});
    if (!tls.ok()) return tls.status();
    impl->tls = std::move(*tls);
    impl->certificate_watch = std::make_unique<CertificateWatch>(CertificateWatch::Options{});
    impl->certificate_watch->Set(impl->tls->files());
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
    case conf::PortmapperMode::kOff:
      break;
    case conf::PortmapperMode::kOn:
      own_portmapper = true;
      break;
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
  if (d.before_serving) {
    if (absl::Status s = d.before_serving(); !s.ok()) return s;
  }
  // The lock manager's state (NSM state number, grace period, or the
  // predecessor's locks) is in place before the first call is answered: a
  // lock granted, or an SM_STAT answered, ahead of it would be wrong.
  bool grace = false;
  if (d.nlm && d.nlm_snapshot) {
    d.ShareGraceWithCluster(false);
    d.nlm->StartFrom(*d.nlm_snapshot);
  } else if (d.nlm) {
    // A takeover without the predecessor's locks: a new NSM state after all.
    if (d.taking_over) {
      if (absl::Status s = d.nsm_store->Bump(); !s.ok()) return s;
    }
    grace = !d.nsm_store->previous_hosts().empty() && c.nlm_grace_period > 0;
    d.ShareGraceWithCluster(grace);
    d.nlm->Open(grace);
  }
  d.server->Start();
  if (use_rpcbind) {
    d.RegisterWithRpcbind(mappings, netids);
    ports_.rpcbind = true;
  }
  if (d.nlm && !d.nlm_snapshot) {
    // Reachable and registered now: tell the clients that held locks before
    // this start to reclaim them in the grace period.
    d.nlm->NotifyPreviousHosts();
    NFS3D_LOG_INFO("lock manager: NLM v1/v3/v4 and NSM on port %d, NSM state %d%s", ports_.nfs,
                   d.nsm_store->state(), grace ? ", in grace period" : "");
  }
  NFS3D_LOG_INFO(
      "serving NFSv3 and NFSACL v3 on port %d, MOUNT v1/v3 and RQUOTA v1/v2 on port %d (%s%s%s); "
      "portmapper: %s",
      ports_.nfs, ports_.mount, c.tcp ? "tcp" : "", c.tcp && c.udp ? "+" : "", c.udp ? "udp" : "",
      ports_.own_portmapper ? "nfs3d's own on port 111"
      : ports_.rpcbind      ? "registered with rpcbind"
                            : "none");
  StartFollowingExports();
  if (d.cluster_files && c.tcp) {
    // After a crash or a kill on another machine, the previous instance's
    // clients wait for replies that never come: reset them (tickle_ack.h).
    // After a handover their connections crossed and are served.
    TcpClientsRecord::Options record;
    record.files = d.cluster_files.get();
    record.node_id = c.cluster_node_id;
    record.tickle_previous = !d.taking_over;
    record.admitted = &d.tcp_admitted;
    d.tcp_clients = std::make_unique<TcpClientsRecord>(std::move(record));
  }
  StartHandoverServer();
  return absl::OkStatus();
}

absl::Status Daemon::ReloadExports() { return Reload(impl_->config, /*reload_exports=*/true); }

absl::Status Daemon::Reload(const conf::ServerConfig& config, bool reload_exports) {
  Impl& d = *impl_;
  absl::MutexLock lock(&d.reload_mu);
  absl::StatusOr<conf::ExportTable> table;
  absl::StatusOr<std::string> text;
  if (reload_exports) {
    // The shared exports stay the shared ones: [cluster] needs a restart.
    conf::ServerConfig from = config;
    from.cluster_shared_exports = d.config.cluster_shared_exports;
    text = d.ReadExportsText(from);
    table = text.ok() ? conf::ParseExports(*text, d.ExportsSource(from)) : text.status();
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
  if (config.udp_sendfile != old.udp_sendfile) ignored.push_back("udp sendfile");
  if (config.tcp_splice_writes != old.tcp_splice_writes) ignored.push_back("tcp splice_writes");
  if (config.tcp_record_timeout != old.tcp_record_timeout ||
      config.tcp_unfinished_per_client != old.tcp_unfinished_per_client) {
    ignored.push_back("tcp record_timeout/unfinished_per_client");
  }
  if (config.max_connections != old.max_connections) ignored.push_back("max_connections");
  if (config.max_requests_per_connection != old.max_requests_per_connection ||
      config.max_requests != old.max_requests ||
      config.max_requests_per_client != old.max_requests_per_client) {
    ignored.push_back("max_requests*");
  }
  if (config.portmapper != old.portmapper) ignored.push_back("portmapper");
  if (config.tls_handshake_timeout != old.tls_handshake_timeout) {
    ignored.push_back("[tls] handshake_timeout");
  }
  if (config.top_clients != old.top_clients || config.top_exports != old.top_exports ||
      config.top_users != old.top_users) {
    ignored.push_back("top_clients/top_exports/top_users");
  }
  if (config.state_dir != old.state_dir) ignored.push_back("state_dir");
  if (config.exports_poll != old.exports_poll) ignored.push_back("exports_poll");
  if (config.cluster_node_id != old.cluster_node_id ||
      config.cluster_shared_exports != old.cluster_shared_exports ||
      config.cluster_exports_poll != old.cluster_exports_poll) {
    ignored.push_back("[cluster]");
  }
  if (config.metrics != old.metrics || config.metrics_listen != old.metrics_listen ||
      config.metrics_port != old.metrics_port || config.control_socket != old.control_socket) {
    ignored.push_back("[metrics]");
  }
  for (const std::string& key : ignored) {
    NFS3D_LOG_WARNING("reload: %s changed; it takes effect at the next restart", key);
  }
  const bool sizes_changed = config.tcp_sizes != old.tcp_sizes ||
                             config.udp_sizes != old.udp_sizes ||
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
  applied.slow_call_ms = config.slow_call_ms;
  d.origin_stats->Reload(config);
  d.ReloadTls(config, &applied);
  applied.manage_gids = config.manage_gids;
  applied.manage_gids_ttl = config.manage_gids_ttl;
  applied.manage_gids_cache = config.manage_gids_cache;
  applied.exports_path = config.exports_path;
  d.config = applied;
  size_t count = d.export_count;
  if (reload_exports) {
    count = table->exports.size();
    // Cannot fail now: the new roots were added above.
    (void)d.ApplyExportTable(std::move(*table), d.ExportsSource(d.config), *text);
  }
  ++d.reloads_ok;
  NFS3D_LOG_INFO(
      "reloaded configuration: %d exports%s%s; %s", count,
      reload_exports ? " from " : " (exports unchanged)", reload_exports ? config.exports_path : "",
      sizes_changed ? "new transfer sizes apply to new calls" : "transfer sizes unchanged");
  return absl::OkStatus();
}

void Daemon::CountFailedReload() { ++impl_->reloads_failed; }

void Daemon::Impl::ReloadTls(const conf::ServerConfig& config, conf::ServerConfig* applied) {
  // The files are read again even when their names did not change: a
  // reload is how a renewed certificate is put in force. Established
  // sessions keep what they negotiated.
  if (tls == nullptr || config.tls_certificate.empty()) {
    if ((tls == nullptr) != config.tls_certificate.empty()) {
      NFS3D_LOG_WARNING("reload: [tls] %s; it takes effect at the next restart",
                        tls == nullptr ? "was added" : "was removed");
    }
    return;
  }
  absl::StatusOr<std::shared_ptr<const rpc::tls::TlsCredentials>> loaded =
      rpc::tls::TlsCredentials::Load({config.tls_certificate, config.tls_key, config.tls_ca});
  if (!loaded.ok()) {
    NFS3D_LOG_ERROR("reload: %s; new TLS sessions keep the certificate in force",
                    loaded.status().message());
    return;
  }
  if (config.tls_ca.empty() != applied->tls_ca.empty()) {
    NFS3D_LOG_WARNING("reload: [tls] ca %s: mutual TLS is %s for new sessions",
                      config.tls_ca.empty() ? "removed" : "added",
                      config.tls_ca.empty() ? "off" : "on");
  }
  tls = std::move(*loaded);
  if (server) server->SetTlsCredentials(tls);
  if (certificate_watch) certificate_watch->Set(tls->files());
  applied->tls_certificate = config.tls_certificate;
  applied->tls_key = config.tls_key;
  applied->tls_ca = config.tls_ca;
  NFS3D_LOG_INFO("reload: TLS certificate %s loaded for new sessions", config.tls_certificate);
}

void Daemon::Stop() {
  Impl& d = *impl_;
  if (d.stopped) return;
  d.stopped = true;
  d.follower.reset();
  d.tcp_clients.reset();
  if (d.handover) {
    d.handover.reset();
    unlink(HandoverSocketPath(d.config.state_dir).c_str());
  }
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

}  // namespace nfs3d::daemon
