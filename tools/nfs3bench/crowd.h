// Many TCP connections from one thread (epoll): nfs3bench's --connections
// runs (GETATTR, NULL, or WRITEs of one block). The calls in flight are spread over N connections
// (1,000 clients with one GETATTR each), and with an interval every connection sends its next call
// that long after the last (10,000 mounts each calling once a second, an idle crowd beside busy
// clients). A connection the server closes (e.g. evicted while idle at its max_connections) is
// opened again when it next has a call to send, and calls it had in flight are sent again with the
// same xid, as the Linux client does: that is counted as a reconnect, not an error.
#ifndef NFS3D_TOOLS_NFS3BENCH_CROWD_H_
#define NFS3D_TOOLS_NFS3BENCH_CROWD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "rpc/call_context.h"
#include "tools/nfs3bench/session.h"
#include "tools/nfs3bench/workloads.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::bench {

struct CrowdOptions {
  std::string host;  // numeric IPv4 or IPv6
  uint16_t port = 2049;
  int connections = 1;
  int outstanding = 1;      // calls in flight in total, spread round-robin
  absl::Duration interval;  // zero: a connection's next call as soon as a reply arrives
  absl::Duration time;      // how long calls are started (after the connections are up)
  uint64_t ops = 0;         // or how many calls in all; 0: no bound
  absl::Duration timeout = absl::Seconds(30);  // a call without reply this long fails
  rpc::Credential cred;
  uint32_t proc = nfs3::kGetattr;  // kGetattr, kWrite or kNull
  nfs3::nfs_fh3 fh;                // GETATTR's object, WRITE's file
  uint32_t write_size = 0;         // WRITE: bytes per call, all at offset 0
  bool file_sync = false;          // WRITE: FILE_SYNC, else UNSTABLE
  std::function<void()> started;   // called once the connections are up
};

struct CrowdResult {
  uint64_t ops = 0;               // calls answered (NFS3_OK for GETATTR)
  uint64_t errors = 0;            // calls failed: timeout, RPC-level or NFS error
  uint64_t reconnects = 0;        // connections the server closed, opened again
  uint64_t connect_failures = 0;  // attempts to open one again that failed (retried)
  double seconds = 0;             // from the first call to the last reply
  double mean_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;  // send -> reply
  // Calls answered per second in consecutive windows of 100 ms and of 1 s
  // (the last, partial window left out): the slowest and the median window,
  // the dip a pause in the server leaves.
  double min_100ms = 0, median_100ms = 0, min_1s = 0, median_1s = 0;
  std::string first_error;
};

// Opens every connection first (untimed; prints "# connected N" on stdout when
// they are up), then runs until the time or the call count is reached or
// *stop is set, and waits for the calls in flight. Fails only when the
// connections cannot be opened.
absl::StatusOr<CrowdResult> RunCrowd(const CrowdOptions& options, const std::atomic<bool>* stop);

// A getattr or null run of BenchContext::Run with o.connections > 0, on
// `object`, over the session's server with its credential; fills *r.
// `started` runs when the connections are up, before the first call.
void RunCrowdWorkload(const Session& session, const nfs3::nfs_fh3& object, const WorkloadOptions& o,
                      const std::atomic<bool>* stop, RunResult* r, std::function<void()> started);

// Raises this process's soft RLIMIT_NOFILE to its hard limit; returns the
// soft limit now in force.
uint64_t RaiseOpenFileLimit();

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_CROWD_H_
