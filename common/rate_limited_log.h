// A warning that any client can cause again and again (a refused call, a
// call retransmitted all through an outage) is logged at most once per
// interval, with the count of those held back since, so that no host can
// flood the log and an outage leaves a line a minute, not one per call.
#ifndef NFS3D_COMMON_RATE_LIMITED_LOG_H_
#define NFS3D_COMMON_RATE_LIMITED_LOG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "common/log.h"

namespace nfs3d::log {

class RateLimitedLog {
 public:
  explicit RateLimitedLog(
      absl::Duration interval, std::function<absl::Time()> now = [] { return absl::Now(); })
      : interval_(interval), now_(std::move(now)) {}

  // Logs `message` at warning level, or only counts it if the last one was
  // logged less than the interval ago.
  void Warning(std::string_view message);

  // As Warning, but formats the message only if it is logged: a flood of
  // held-back lines costs a clock read and a count each.
  template <typename... Args>
  void Warningf(const absl::FormatSpec<Args...>& format, const Args&... args) {
    if (Level::kWarning < GetLevel()) return;
    if (std::optional<uint64_t> held = Take()) {
      Write(Level::kWarning, WithHeldBack(absl::StrFormat(format, args...), *held));
    }
  }

  // The line Warning logs: `message` and the count held back, or nothing.
  std::optional<std::string> Admit(std::string_view message);

 private:
  // The count held back since the last line if this one is logged, or
  // nothing (and it is counted).
  std::optional<uint64_t> Take();
  static std::string WithHeldBack(std::string line, uint64_t held_back);

  const absl::Duration interval_;
  const std::function<absl::Time()> now_;
  absl::Mutex mu_;
  absl::Time last_logged_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t held_back_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nfs3d::log

#endif  // NFS3D_COMMON_RATE_LIMITED_LOG_H_
