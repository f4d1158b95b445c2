// /metrics and the control socket: what the daemon renders for them.
#include <netinet/in.h>

#include <map>
#include <tuple>

#include "daemon/daemon_impl.h"
#include "stats/connections_text.h"

namespace nfs3d::daemon {
namespace {

// nfs3d_tls_connections: TLS connections by mode, version, cipher and where
// the records go. Every label comes from a short fixed set (GnuTLS's names
// of what the priorities allow), never from the client: the series stay few.
stats::Family TlsConnectionsFamily(const std::vector<rpc::TcpConnectionView>& connections) {
  std::map<std::tuple<std::string, std::string, std::string, bool>, double> counts;
  for (const rpc::TcpConnectionView& c : connections) {
    const rpc::ConnectionSecurity& s = c.security;
    if (s.mode == rpc::TransportSecurity::kNone) continue;
    counts[{rpc::SecurityName(s.mode), s.version, s.cipher, s.kernel_records}] += 1;
  }
  stats::Family family{"nfs3d_tls_connections",
                       "Open RPC-with-TLS connections by security (tls, mtls), TLS version, "
                       "cipher and records (kernel: kTLS, user: the user-space relay).",
                       "gauge",
                       {}};
  for (const auto& [key, n] : counts) {
    const auto& [security, version, cipher, kernel] = key;
    family.samples.emplace_back(
        absl::StrCat("security=\"", security, "\",version=\"", stats::EscapeLabel(version),
                     "\",cipher=\"", stats::EscapeLabel(cipher), "\",records=\"",
                     kernel ? "kernel" : "user", "\""),
        n);
  }
  return family;
}

uint16_t PortOf(const sockaddr_storage& peer) {
  switch (peer.ss_family) {
    case AF_INET6:
      return ntohs(reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port);
    case AF_INET:
      return ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
    default:
      return 0;
  }
}

}  // namespace

absl::Status Daemon::StartMetrics() {
  Impl& d = *impl_;
  const conf::ServerConfig& c = d.config;
  d.start_time =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (!c.metrics && !c.control_socket) return absl::OkStatus();
  d.metrics = std::make_unique<stats::MetricsServer>(
      [this, tcp_per_client = c.metrics_tcp_per_client](stats::MetricsServer::Audience audience) {
        // Anyone who reaches the TCP port reads that page: client addresses,
        // uids and principals are for root (the control socket) unless
        // configured. Like the rest of [metrics], a restart changes it.
        return RenderMetrics(audience == stats::MetricsServer::Audience::kControlSocket ||
                             tcp_per_client);
      });
  d.metrics->SetControl([this](std::string_view method, std::string_view target,
                               std::string_view who, const std::string& body) {
    if (method == "GET" && target == "/connections") {
      return stats::MetricsServer::ControlAnswer{200, RenderConnections()};
    }
    return AnswerExportsCall(method, target, who, body);
  });
  if (c.metrics) {
    uint16_t port = c.metrics_port;
    for (const std::string& address : c.metrics_listen) {
      std::optional<OwnedFd> fd =
          d.inherited.Take(handover::SocketRole::kMetrics, true, address, port);
      absl::StatusOr<uint16_t> bound =
          fd ? d.metrics->AdoptTcp(fd->Release()) : d.metrics->ListenTcp(address, port);
      if (!bound.ok()) return bound.status();
      port = *bound;
    }
    metrics_port_ = port;
  }
  if (c.control_socket) {
    const std::string path = stats::ControlSocketPath(c.state_dir);
    std::optional<OwnedFd> fd = d.inherited.Take(handover::SocketRole::kControl);
    if (absl::Status s =
            fd ? d.metrics->AdoptUnix(fd->Release(), path) : d.metrics->ListenUnix(path);
        !s.ok()) {
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

std::string Daemon::RenderMetrics(bool identities) const {
  const Impl& d = *impl_;
  auto counter = [](std::string name, std::string help, double v) {
    return stats::Family{std::move(name), std::move(help), "counter", {{"", v}}};
  };
  auto gauge = [](std::string name, std::string help, double v) {
    return stats::Family{std::move(name), std::move(help), "gauge", {{"", v}}};
  };
  std::vector<stats::Family> extra;
  extra.push_back({"nfs3d_build_info",
                   "nfs3d version; always 1.",
                   "gauge",
                   {{"version=\"" NFS3D_VERSION_STRING "\"", 1}}});
  extra.push_back(
      gauge("nfs3d_start_time_seconds", "When the server started (Unix time).", d.start_time));
  if (!d.config.cluster_node_id.empty()) {
    extra.push_back(
        {"nfs3d_cluster_info",
         "This head's cluster and node id ([cluster]); always 1.",
         "gauge",
         {{absl::StrCat("cluster=\"", stats::EscapeLabel(d.config.cluster_name), "\",node_id=\"",
                        stats::EscapeLabel(d.config.cluster_node_id), "\""),
           1}}});
  }
  if (d.nlm) {
    extra.push_back(gauge("nfs3d_nlm_in_grace",
                          "1 while new locks are refused so that clients can reclaim theirs.",
                          d.nlm->InGrace() ? 1 : 0));
  }
  if (d.ceph_calls) {
    extra.push_back(gauge("nfs3d_cephfs_stalled",
                          "1 while a CephFS call overran [ceph] timeout: new calls get JUKEBOX.",
                          d.ceph_calls->stalled() ? 1 : 0));
  }
  const rpc::DuplicateCacheStats drc = d.dispatcher->drc_stats();
  const vfs::SyncStats sync = d.backend->sync_stats();
  struct Counter {
    const char* name;
    const char* help;
    uint64_t value;
  };
  for (const Counter& c : {
           Counter{"nfs3d_drc_hits_total", "Retransmissions answered with a cached reply.",
                   drc.hits},
           Counter{"nfs3d_drc_in_progress_drops_total",
                   "Retransmissions dropped while the original call ran.", drc.in_progress_drops},
           Counter{"nfs3d_drc_insertions_total",
                   "Non-idempotent calls entered in the duplicate request cache.", drc.insertions},
           Counter{"nfs3d_drc_evictions_total",
                   "Duplicate request cache entries pushed out by its bounds.", drc.evictions},
           Counter{"nfs3d_sync_requests_total",
                   "Stable WRITEs and COMMITs that needed their file synced.", sync.requests},
           Counter{"nfs3d_fsyncs_total",
                   "fsync calls made for them (write gathering: requests per fsync).", sync.fsyncs},
           Counter{"nfs3d_metadata_commits_total",
                   "Namespace and attribute changes made durable before the reply.",
                   sync.metadata_commits},
           Counter{"nfs3d_metadata_syncs_total",
                   "fsync/syncfs calls made for them (none on tmpfs and ramfs).",
                   sync.metadata_syncs},
       }) {
    extra.push_back(counter(c.name, c.help, c.value));
  }
  extra.push_back(gauge("nfs3d_tcp_connections", "Open TCP connections.",
                        d.server ? d.server->open_connections() : 0));
  if (d.certificate_watch && d.server) {  // [tls] is on
    extra.push_back(TlsConnectionsFamily(d.server->tcp_connections()));
  }
  extra.push_back(gauge("nfs3d_exports", "Exports in force.", d.export_count.load()));
  extra.push_back({"nfs3d_config_reloads_total",
                   "Configuration reloads (SIGHUP) by result.",
                   "counter",
                   {{"result=\"ok\"", static_cast<double>(d.reloads_ok.load())},
                    {"result=\"failed\"", static_cast<double>(d.reloads_failed.load())}}});
  if (d.certificate_watch) d.certificate_watch->AppendMetrics(&extra);
  std::string page = stats::RenderPrometheus(d.stats.Take(), extra);
  if (d.origin_stats) d.origin_stats->AppendMetrics(&page, identities);
  return page;
}

std::string Daemon::RenderConnections() const {
  const Impl& d = *impl_;
  if (!d.server) return "";
  std::vector<stats::ConnectionRow> rows;
  for (const rpc::TcpConnectionView& c : d.server->tcp_connections()) {
    const rpc::ConnectionSecurity& s = c.security;
    const bool tls = s.mode != rpc::TransportSecurity::kNone;
    rows.push_back({stats::ClientName(stats::ClientKey(c.peer)), PortOf(c.peer),
                    rpc::SecurityName(s.mode), s.version, s.cipher,
                    tls ? (s.kernel_records ? "kernel" : "user") : "", s.subject});
  }
  return stats::FormatConnections(rows);
}

}  // namespace nfs3d::daemon
