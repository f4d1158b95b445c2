// The statistics counters in the handover's State frame: a predecessor's
// counters go on counting in its successor (nfs3stat and the metrics page
// show no drop to 0 at a takeover).
#ifndef NFS3D_DAEMON_HANDOVER_STATS_H_
#define NFS3D_DAEMON_HANDOVER_STATS_H_

#include "daemon/handover_format.h"
#include "stats/server_stats.h"

namespace nfs3d::daemon {

handover::StatsState StatsToHandover(const stats::Snapshot& snapshot);
// Arrays longer than this build's are cut, shorter ones padded with 0.
stats::Snapshot StatsFromHandover(const handover::StatsState& state);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_HANDOVER_STATS_H_
