// Per-origin accounting and the slow-call log, configured from [metrics]
// and [log]: the daemon makes one at startup, tells it about reloads and
// asks it for its part of the /metrics page.
#ifndef NFS3D_DAEMON_ORIGIN_STATS_WIRING_H_
#define NFS3D_DAEMON_ORIGIN_STATS_WIRING_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "conf/exports.h"
#include "conf/server_config.h"
#include "stats/prometheus_origins.h"
#include "stats/server_stats.h"
#include "stats/slow_call_log.h"

namespace nfs3d::daemon {

class OriginStatsWiring {
 public:
  using ExportsFn = std::function<std::shared_ptr<const conf::ExportTable>()>;

  // Sets `stats`' origin limits and slow-call log; both must outlive it
  // being used by calls. `exports` names export ids (any thread).
  OriginStatsWiring(stats::ServerStats* stats, const conf::ServerConfig& config, ExportsFn exports);
  ~OriginStatsWiring();

  void Reload(const conf::ServerConfig& config);
  // The nfs3d_client_*, nfs3d_export_*, nfs3d_user_* families; without
  // `identities`, only nfs3d_export_* (no addresses, uids or principals).
  void AppendMetrics(std::string* out, bool identities = true) const;

 private:
  stats::ServerStats* const stats_;
  const stats::ExportNamer namer_;
  stats::SlowCallLog slow_log_;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_ORIGIN_STATS_WIRING_H_
