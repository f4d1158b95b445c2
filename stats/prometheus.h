// Renders statistics in the Prometheus text exposition format (version
// 0.0.4): one HELP and TYPE line per family, then its samples.
//
// Families from the hot-path registry (stats::Snapshot):
//   nfs3d_rpc_calls_total{program,version,proc,proto}      counter
//   nfs3d_rpc_errors_total{program,version,proc,proto}     counter
//   nfs3d_rpc_duration_seconds{program,version,proc}       histogram
//   nfs3d_rpc_messages_total{proto}                        counter
//   nfs3d_rpc_flavor_calls_total{proto,flavor}             counter
//   nfs3d_rpc_rejected_total{proto,reason}                 counter
//   nfs3d_rpc_retransmits_total{proto,outcome}             counter
//   nfs3d_read_bytes_total, nfs3d_write_bytes_total        counter
//   nfs3d_read_size_bytes, nfs3d_write_size_bytes          histogram
// Anything else (DRC, write gathering, connections, reloads) is passed in
// by the caller as Family values.
#ifndef NFS3D_STATS_PROMETHEUS_H_
#define NFS3D_STATS_PROMETHEUS_H_

#include <string>
#include <utility>
#include <vector>

#include "stats/server_stats.h"

namespace nfs3d::stats {

struct Family {
  std::string name;
  std::string help;
  std::string type;  // "counter" or "gauge"
  // label text without braces (e.g. `proto="tcp"`, may be empty) and value.
  std::vector<std::pair<std::string, double>> samples;
};

std::string RenderPrometheus(const Snapshot& snapshot, const std::vector<Family>& extra);

// Escapes a label value (backslash, double quote, newline).
std::string EscapeLabel(const std::string& value);

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_PROMETHEUS_H_
