// Whether the machine has a core to spare, from /proc/stat, sampled every
// 50 ms by a thread of its own.
//
// Spreading one connection's inline calls over the worker pools (see
// InlineBudget) pays a thread wake-up per batch: on a machine whose cores are
// all busy (the clients, other connections, other work) that buys no
// throughput and costs 2.5x the CPU per GETATTR (11.6 vs 4.6 µs measured on
// 2 cores). So calls are spread only while at least one core's worth of CPU
// time is idle; spreading stops below half a core (hysteresis, so spreading
// that uses the idle core does not switch itself off at once).
// Idle time is judged over the last 200 ms (/proc/stat counts 10 ms ticks,
// too coarse for one 50 ms sample on few CPUs), and only while this server
// keeps a core busy, as a saturated connection thread does: a core idle
// before the load arrived says nothing about the load. Every 2 s spreading
// also stops for one window to see whether the machine still has a core idle
// without it. On 2 CPUs it does not (the saturated connection thread, the
// client and the network stack leave about 0.7): judged on the idle machine
// and kept by the hysteresis, spreading stayed on there and cost up to a
// quarter of a one-connection GETATTR stream (pipelined client: 162-263k
// calls/s against 237-281k with spreading off; forced on, 136k).
#ifndef NFS3D_RPC_SPARE_CORES_H_
#define NFS3D_RPC_SPARE_CORES_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <thread>

#include "absl/synchronization/notification.h"

namespace nfs3d::rpc {

// In clock ticks: the first ("cpu ") line of /proc/stat, and this process's
// share from /proc/self/stat.
struct CpuTimes {
  uint64_t idle = 0;    // idle + iowait
  uint64_t total = 0;   // every field
  uint64_t server = 0;  // utime + stime of this process
};
std::optional<CpuTimes> ParseProcStat(std::string_view text);
// utime + stime from the text of /proc/PID/stat.
std::optional<uint64_t> ParseProcessTicks(std::string_view text);
// Cores' worth of idle time, and of this process's time, between two samples
// of a machine with `cpus` CPUs.
double IdleCores(const CpuTimes& before, const CpuTimes& after, int cpus);
double ServerCores(const CpuTimes& before, const CpuTimes& after, int cpus);

class SpareCores {
 public:
  static constexpr double kStartAt = 1.0;  // idle cores to start spreading
  static constexpr double kStopBelow = 0.5;
  static constexpr double kBusyAt = 0.8;  // server cores, to start spreading
  static constexpr int kWindow = 4;       // samples of 50 ms judged together
  static constexpr int kProbeEvery = 40;  // samples spreading between probes

  // fixed: always (true) or never (false) available, without sampling.
  explicit SpareCores(std::optional<bool> fixed = std::nullopt)
      : fixed_(fixed), available_(fixed.value_or(false)) {}
  ~SpareCores() { Stop(); }
  SpareCores(const SpareCores&) = delete;
  SpareCores& operator=(const SpareCores&) = delete;

  void Start();
  void Stop();
  bool available() const { return available_.load(std::memory_order_relaxed); }
  // The decision for one sample (exposed for tests).
  struct State {
    bool available = false;
    int settling = 0;           // samples before the window holds only this state
    int samples_spreading = 0;  // since spreading (re)started
  };
  // Both in cores, over the last kWindow samples.
  static State Decide(State state, double idle_cores, double server_cores) {
    if (state.settling > 0) {
      --state.settling;
      return state;
    }
    if (!state.available) {
      return idle_cores >= kStartAt && server_cores >= kBusyAt ? State{true, kWindow, 0} : state;
    }
    if (idle_cores < kStopBelow || ++state.samples_spreading >= kProbeEvery) {
      return State{false, kWindow, 0};
    }
    return state;
  }

 private:
  void Run();

  const std::optional<bool> fixed_;
  std::atomic<bool> available_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_SPARE_CORES_H_
