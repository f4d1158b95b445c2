// Renders the per-origin accounting (stats/origin_table.h) in the Prometheus
// text format. For each kind -- client (address), export (path), user (uid
// or principal) -- the tracked origins get their own label value and the
// rest are summed under "other", so the number of series stays bounded:
//   nfs3d_<kind>_calls_total{<kind>}            counter
//   nfs3d_<kind>_errors_total{<kind>}           counter
//   nfs3d_<kind>_read_bytes_total{<kind>}       counter
//   nfs3d_<kind>_write_bytes_total{<kind>}      counter
//   nfs3d_<kind>_retransmits_total{<kind>}      counter (DRC replays and drops)
//   nfs3d_<kind>_duration_seconds{<kind>}       histogram
//   nfs3d_origin_evictions_total{kind}          counter
//   nfs3d_origin_tracked_bytes{kind}            gauge (memory of the tables)
// Calls that named no export (NULL, MOUNT, NLM) count under export="-";
// calls refused before authentication under user="-".
#ifndef NFS3D_STATS_PROMETHEUS_ORIGINS_H_
#define NFS3D_STATS_PROMETHEUS_ORIGINS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "stats/server_stats.h"

namespace nfs3d::stats {

// Export id -> its path ("" when unknown: the label becomes "export#ID").
using ExportNamer = std::function<std::string(uint32_t)>;

// The label value of a row of each kind.
std::string ClientLabel(const OriginRow& row);
std::string ExportLabel(const OriginRow& row, const ExportNamer& namer);
std::string UserLabel(const OriginRow& row);

// Appends the families above to `out`; without `identities` the client and
// user families are left out (their evictions and memory stay).
void RenderOrigins(const OriginsSnapshot& snapshot, const ExportNamer& namer, std::string* out,
                   bool identities = true);

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_PROMETHEUS_ORIGINS_H_
