// The whole nfs3d server assembled from its layers: backend, NFS and MOUNT
// programs, dispatcher, transports, and the portmapper (rpcbind registration
// or nfs3d's own). main() builds one; tests can build one in-process.
#ifndef NFS3D_DAEMON_DAEMON_H_
#define NFS3D_DAEMON_DAEMON_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "conf/exports.h"
#include "conf/server_config.h"
#include "stats/metrics_server.h"

namespace nfs3d::daemon {

// Ports actually bound (differ from the config when it asked for port 0).
struct BoundPorts {
  uint16_t nfs = 0;
  uint16_t mount = 0;
  bool own_portmapper = false;  // serving portmap on 111 ourselves
  bool rpcbind = false;         // registered with a system rpcbind
};

class Daemon {
 public:
  // Validates and prepares everything that can fail before any socket is
  // bound: state directory, backend, export roots. No half-started server.
  // With `takeover`, TakeOver must follow instead of Start: the NSM state
  // number is the running nfs3d's, not a new one.
  static absl::StatusOr<std::unique_ptr<Daemon>> Create(const conf::ServerConfig& config,
                                                        conf::ExportTable exports,
                                                        bool takeover = false);
  ~Daemon();

  // Binds listeners, starts threads, registers with the portmapper.
  absl::Status Start();
  // Instead of Start: takes the listening sockets, the write verifier and
  // the state over from the nfs3d serving the same state directory (nfs3d
  // --takeover, daemon/handover.h), then serves. On an error before it
  // serves, the running one serves on.
  absl::Status TakeOver();
  // Called, on another thread, once this daemon handed everything over to a
  // successor: the process should exit then, without Stop.
  void OnHandedOver(std::function<void()> done);
  // Re-reads the exports file named in the config (SIGHUP). On error the old
  // table stays in force and the error is returned.
  absl::Status ReloadExports();
  // Applies a re-read configuration (SIGHUP): transfer sizes and the log
  // level take effect for new calls; with reload_exports, the exports file
  // it names is re-read too. Settings that need new sockets or threads
  // (ports, listen, threads, ...) are logged as needing a restart. On any
  // error nothing changes. Connections and running calls are not touched.
  absl::Status Reload(const conf::ServerConfig& config, bool reload_exports);
  // Puts the exports of `text` (an exports file's contents, read from
  // `source`) in force, as SIGHUP does for the exports file: new exports are
  // served at once, clients of removed ones get STALE/ACCES. A text that does
  // not parse is refused, logged and counted as a failed reload; the exports
  // in force stay. The same text again changes nothing.
  absl::Status ApplyExports(const std::string& text, const std::string& source);
  // Counts a reload that failed before Reload (e.g. a config syntax error).
  void CountFailedReload();
  // Stops serving: unregisters from rpcbind, stops accepting, lets running
  // calls finish, then syncs every export's file system. Idempotent.
  void Stop();

  const BoundPorts& ports() const { return ports_; }
  // Port of the TCP metrics endpoint (0 when off).
  uint16_t metrics_port() const { return metrics_port_; }
  // The Prometheus text the metrics endpoint serves; without `identities`
  // no per-client or per-user series (addresses, uids, principals): the TCP
  // page unless [metrics] tcp_per_client is on.
  std::string RenderMetrics(bool identities = true) const;
  // GET /connections on the control socket: each open TCP connection's
  // client and RPC-with-TLS state (stats/connections_text.h).
  std::string RenderConnections() const;

 private:
  struct Impl;
  explicit Daemon(std::unique_ptr<Impl> impl);
  absl::Status StartMetrics();
  // The exports calls of the control socket: GET /exports (the text in
  // force), POST /exports/add (an export line) and /exports/remove (a path)
  // on a [cluster] with shared_exports. `who` says who asked: the peer's
  // uid from the kernel (stats::MetricsServer::Control), logged escaped.
  stats::MetricsServer::ControlAnswer AnswerExportsCall(std::string_view method,
                                                        std::string_view target,
                                                        std::string_view who,
                                                        const std::string& body);
  // Edits the shared exports file as it is now ("add" LINE or "remove"
  // PATH), stamps it with `who`, writes it and puts it in force here.
  absl::StatusOr<std::string> EditSharedExports(std::string_view command,
                                                const std::string& argument, std::string_view who);
  // [cluster] shared_exports or [paths] exports_poll: a thread that follows
  // the exports file (daemon/exports_follower.h).
  void StartFollowingExports();
  // The handover socket (a new one, or the predecessor's).
  void StartHandoverServer();
  std::unique_ptr<Impl> impl_;
  BoundPorts ports_;
  uint16_t metrics_port_ = 0;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_DAEMON_H_
