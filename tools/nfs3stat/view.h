// What nfs3stat shows, gathered from a /metrics page: per-procedure counts
// of the NFS and MOUNT programs, RPC totals, I/O bytes, write gathering, DRC
// and connections. Two views subtract into the activity of an interval.
#ifndef NFS3D_TOOLS_NFS3STAT_VIEW_H_
#define NFS3D_TOOLS_NFS3STAT_VIEW_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stats/prom_text.h"

namespace nfs3d::nfs3stat {

struct ProcView {
  std::string name;
  uint32_t number = 0;
  double calls = 0;  // both transports
  double tcp = 0;
  double udp = 0;
  double errors = 0;
  double seconds = 0;                              // latency sum
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
};

struct StatView {
  // "nfs v3", "mount v3", ... -> procedures in number order
  std::map<std::string, std::vector<ProcView>> programs;
  double messages = 0;
  std::map<std::string, double> rejected;  // reason -> count
  double retransmits = 0;
  double read_bytes = 0, write_bytes = 0;
  double sync_requests = 0, fsyncs = 0;
  double drc_hits = 0, drc_in_progress = 0, drc_evictions = 0;
  double tcp_connections = 0;
  double reloads_ok = 0, reloads_failed = 0;
  double start_time = 0;
  std::string cluster, node_id;      // [cluster]; empty: a head of its own
  std::optional<bool> nlm_in_grace;  // unset: no lock manager
};

StatView BuildView(const std::vector<stats::Sample>& samples);
// after - before, for counters; gauges keep their `after` value.
StatView Subtract(const StatView& after, const StatView& before);
// Upper bound of the bucket holding quantile q (0..1) of a procedure's
// latencies, in seconds; 0 without calls.
double Quantile(const ProcView& proc, double q);
const ProcView* FindProc(const StatView& view, const std::string& program, const std::string& name);

}  // namespace nfs3d::nfs3stat

#endif  // NFS3D_TOOLS_NFS3STAT_VIEW_H_
