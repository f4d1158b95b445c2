#include "tools/nfs3bench/shortfall.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "tools/nfs3bench/report.h"

namespace nfs3d::bench {
namespace {

constexpr double kBusyCore = 0.85;

// Share of one core a process used over the run; -1 when not measured.
double CoreShare(double cpu_sec, double seconds) {
  return cpu_sec >= 0 && seconds > 0 ? cpu_sec / seconds : -1;
}

std::string Percent(double share) {
  return share < 0 ? std::string("?") : absl::StrFormat("%.0f%%", 100 * share);
}

}  // namespace

std::string ExplainShortfall(const RunResult& r, const RunResult* stop_and_wait, int cores,
                             const std::string& drops) {
  if (r.wire_mbps <= 0 || r.xfer == 0 || !r.error.empty()) return "";
  if (r.Mbitps() >= kWireShareExplained * r.wire_mbps) return "";

  double window_mbps = 0;
  if (stop_and_wait != nullptr && stop_and_wait->msec_per_call > 0) {
    window_mbps = r.outstanding * (r.xfer * 8.0 / 1e6) / (stop_and_wait->msec_per_call / 1e3);
    if (window_mbps < kWireShareExplained * r.wire_mbps) {
      return absl::StrFormat("in flight x round trip: %d x %s / %.3f ms = %.0f Mbit/s",
                             r.outstanding, SizeName(r.xfer), stop_and_wait->msec_per_call,
                             window_mbps);
    }
  }
  if (r.retransmits > 0) {
    std::string loss = absl::StrFormat("loss: %d retransmits in %d calls", r.retransmits, r.calls);
    if (!drops.empty()) absl::StrAppend(&loss, "; dropped at: ", drops);
    return loss;
  }
  const double server = CoreShare(r.server_cpu_sec, r.seconds);
  const double client = CoreShare(r.client_cpu_sec, r.seconds);
  const double machine = CoreShare(r.machine_cpu_sec, r.seconds * std::max(cores, 1));
  const std::string who = absl::StrFormat("server %s, client %s of a core, machine %s busy",
                                          Percent(server), Percent(client), Percent(machine));
  if (server >= kBusyCore || client >= kBusyCore || machine >= kBusyCore) {
    return absl::StrCat("CPU: ", who);
  }
  return absl::StrFormat("unexplained: %s, window %s", who,
                         window_mbps > 0 ? absl::StrFormat("%.0f Mbit/s", window_mbps)
                                         : std::string("unknown (no qd 1 run)"));
}

}  // namespace nfs3d::bench
