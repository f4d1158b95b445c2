// The nfs3bench workloads: sequential and random I/O and metadata loops with
// N calls in flight, bounded by a byte/op count or a time limit.
#ifndef NFS3D_TOOLS_NFS3BENCH_WORKLOADS_H_
#define NFS3D_TOOLS_NFS3BENCH_WORKLOADS_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "tools/nfs3bench/pattern.h"
#include "tools/nfs3bench/session.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::bench {

// How WRITEs reach stable storage.
enum class StableMode {
  kUnstable,   // UNSTABLE writes, one COMMIT at the end (like dd conv=fsync)
  kDataSync,   // every write DATA_SYNC
  kFileSync,   // every write FILE_SYNC
  kSyncMount,  // FILE_SYNC, one write at a time (mount -o sync)
};
bool ParseStableMode(const std::string& text, StableMode* out);
const char* StableModeName(StableMode mode);

// Workload names: write, read, randread, randwrite, getattr, lookup, create,
// readdirplus. "meta" expands to the last four.
bool IsWorkloadName(const std::string& name);
std::vector<std::string> ExpandWorkloads(const std::vector<std::string>& names);

// WorkloadOptions::bs for "--bs pref": the server's FSINFO preferred size
// (rtpref for reads, wtpref for writes), which is what the Linux client uses
// when mounted without rsize=/wsize=. Reported as bs 0.
inline constexpr uint32_t kPreferredSize = 0;

struct WorkloadOptions {
  std::string name = "write";
  uint32_t bs = 65536;  // requested transfer size per READ/WRITE call, or kPreferredSize
  int outstanding = 8;  // calls (metadata: operations) in flight
  StableMode stable = StableMode::kUnstable;
  uint64_t size = 0;               // bytes to move (I/O); 0 with a time limit
  uint64_t ops = 0;                // metadata operations; 0 with a time limit
  absl::Duration time;             // time limit; zero: use size/ops
  uint64_t file_size = 64u << 20;  // file for read/random, wrap point of timed writes
  bool verify = true;              // check read data / read back written data
  uint32_t dir_entries = 1000;     // files in the READDIRPLUS/LOOKUP directory
  int server_pid = 0;              // >0: report this local process's CPU time over the timed part
  // >0: getattr/null over this many TCP connections of their own, the calls
  // in flight spread over them (tools/nfs3bench/crowd.h); 0: the session's.
  int connections = 0;
  absl::Duration interval;  // with connections: each sends its next call this long after
};

struct RunResult {
  std::string workload;
  std::string proto;
  uint32_t mtu = 0;   // lab mode only
  uint32_t bs = 0;    // as requested; kPreferredSize for "pref"
  uint32_t xfer = 0;  // bytes per READ/WRITE call after the server's limit
  int outstanding = 0;
  std::string stable;
  uint64_t bytes = 0;
  double seconds = 0;
  uint64_t calls = 0;
  uint64_t ops = 0;
  uint64_t retransmits = 0;
  uint64_t timeouts = 0;
  double msec_per_call = 0;     // mean time from send to reply
  std::string verified = "no";  // "ok", "no" (not checked), "FAILED"
  std::string error;            // empty when the run succeeded
  double wire_mbps = 0;         // lab: nuttcp Mbit/s on the same link and proto
  double server_cpu_sec = -1;   // utime+stime of --server-pid over the timed part; -1: unknown
  double client_cpu_sec = -1;   // nfs3bench's own utime+stime over the timed part
  double machine_cpu_sec = -1;  // busy CPU seconds of all cores over the timed part
  // --connections runs only (0 otherwise).
  int connections = 0;
  uint64_t errors = 0;      // calls failed (the run goes on)
  uint64_t reconnects = 0;  // connections the server closed, opened again
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  // Calls/s of the slowest and the median 100 ms and 1 s window.
  double min_100ms = 0, median_100ms = 0, min_1s = 0, median_1s = 0;

  double MBps() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
  double Mbitps() const { return seconds > 0 ? bytes * 8 / seconds / 1e6 : 0; }
  double CallsPerSec() const { return seconds > 0 ? calls / seconds : 0; }
  double OpsPerSec() const { return seconds > 0 ? ops / seconds : 0; }
};

// State shared by the runs of one session: the work directory, the data file
// and how much of it holds the pattern.
class BenchContext {
 public:
  BenchContext(Session* session, nfs3::nfs_fh3 dir, uint64_t seed, const std::atomic<bool>* stop)
      : session_(session), dir_(dir), pattern_(seed), stop_(stop) {}

  RunResult Run(const WorkloadOptions& options);
  // Removes what the runs created (data file, metadata directory).
  absl::Status Cleanup(bool keep_data_file);

  static constexpr const char* kDataFile = "data";
  static constexpr const char* kMetaDir = "meta";

 private:
  friend class IoRun;
  friend class MetaRun;
  absl::Status EnsureDataFile(uint64_t size);
  // Reads back what a write run left in the data file, untimed, into
  // r->verified (and r->error when the read fails).
  void VerifyWritten(const WorkloadOptions& o, RunResult* r);
  absl::Status EnsureMetaDir(uint32_t entries);
  // The untimed preparation of a run: the data file a read or rewrite needs
  // (its size into *file_size), or the metadata directory.
  absl::Status Prepare(const WorkloadOptions& o, bool io, bool timed, uint64_t* file_size);
  // A run on connections of its own (--connections; crowd.h), into *r.
  void RunOnConnections(const WorkloadOptions& o, RunResult* r);

  Session* session_;
  nfs3::nfs_fh3 dir_;
  Pattern pattern_;
  const std::atomic<bool>* stop_;
  std::optional<nfs3::nfs_fh3> file_;
  uint64_t file_pattern_size_ = 0;  // bytes of the file known to hold the pattern
  std::optional<nfs3::nfs_fh3> meta_dir_;
  uint32_t meta_entries_ = 0;
};

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_WORKLOADS_H_
