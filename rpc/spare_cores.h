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
#ifndef NFS3D_RPC_SPARE_CORES_H_
#define NFS3D_RPC_SPARE_CORES_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <thread>

#include "absl/synchronization/notification.h"

namespace nfs3d::rpc {

// The first ("cpu ") line of /proc/stat, in clock ticks.
struct CpuTimes {
  uint64_t idle = 0;   // idle + iowait
  uint64_t total = 0;  // every field
};
std::optional<CpuTimes> ParseProcStat(std::string_view text);
// Cores' worth of idle time between two samples of a machine with `cpus` CPUs.
double IdleCores(const CpuTimes& before, const CpuTimes& after, int cpus);

class SpareCores {
 public:
  static constexpr double kStartAt = 1.0;  // idle cores to start spreading
  static constexpr double kStopBelow = 0.5;

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
  static bool Decide(bool was_available, double idle_cores) {
    return was_available ? idle_cores >= kStopBelow : idle_cores >= kStartAt;
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
