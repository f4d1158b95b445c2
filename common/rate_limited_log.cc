#include "common/rate_limited_log.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "common/log.h"

namespace nfs3d::log {

std::optional<uint64_t> RateLimitedLog::Take() {
  const absl::Time now = now_();
  absl::MutexLock lock(&mu_);
  if (now - last_logged_ < interval_) {
    ++held_back_;
    return std::nullopt;
  }
  last_logged_ = now;
  return std::exchange(held_back_, 0);
}

std::string RateLimitedLog::WithHeldBack(std::string line, uint64_t held_back) {
  if (held_back > 0)
    absl::StrAppend(&line, " (and ", held_back, " such since the last one logged)");
  return line;
}

std::optional<std::string> RateLimitedLog::Admit(std::string_view message) {
  std::optional<uint64_t> held = Take();
  if (!held) return std::nullopt;
  return WithHeldBack(std::string(message), *held);
}

void RateLimitedLog::Warning(std::string_view message) {
  if (Level::kWarning < GetLevel()) return;
  if (std::optional<std::string> line = Admit(message)) Write(Level::kWarning, *line);
}

}  // namespace nfs3d::log
