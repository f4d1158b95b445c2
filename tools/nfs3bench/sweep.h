// Runs workloads over a grid (proto × block size × outstanding) against one
// target and writes CSV and a gnuplot plot of the results.
#ifndef NFS3D_TOOLS_NFS3BENCH_SWEEP_H_
#define NFS3D_TOOLS_NFS3BENCH_SWEEP_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "tools/nfs3bench/session.h"
#include "tools/nfs3bench/workloads.h"

namespace nfs3d::bench {

struct SweepConfig {
  std::vector<rpc::Transport> protos;
  std::vector<uint64_t> block_sizes;
  std::vector<int> outstanding;
  std::vector<std::string> workloads;  // expanded names
  WorkloadOptions base;                // size/time/stable/verify...
  SessionOptions session;              // transport is set per proto
  std::string dir_name;                // work directory under the export
  bool keep = false;
  uint64_t seed = 1;
  bool json = true;  // also print a JSON line per run
  uint32_t mtu = 0;  // lab: recorded in every row
  // lab: nuttcp Mbit/s on the link for a proto ("tcp"/"udp"); 0 if unknown.
  std::function<double(const std::string& proto)> wire_mbps;
  // lab: called just before and after every run (drop counters); may be null.
  std::function<void()> before_run;
  std::function<void(const RunResult&)> after_run;
};

// Runs the grid; prints each run as it finishes. Returns false if a session
// could not be opened or any run failed (the rows so far are in *rows).
bool RunSweep(const Target& target, const SweepConfig& config, const std::atomic<bool>* stop,
              std::vector<RunResult>* rows);

// Writes rows as CSV (with header).
bool WriteCsv(const std::string& path, const std::vector<RunResult>& rows);
// Plots MB/s against the bytes per call, one line per proto/MTU/workload/outstanding,
// with gnuplot (PNG or SVG by the file's extension). Returns an error text
// or "" on success.
std::string Plot(const std::string& path, const std::string& title,
                 const std::vector<RunResult>& rows);

// Runs a child command with a time limit, stdout+stderr into *output when
// given. Returns the exit status, or -1 when it could not run / timed out.
int RunCommand(const std::vector<std::string>& argv, absl::Duration limit,
               std::string* output = nullptr);

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_SWEEP_H_
