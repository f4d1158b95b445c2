#include "common/rate_limited_log.h"

#include "absl/strings/str_cat.h"

#include "common/log.h"

namespace nfs3d::log {

std::optional<std::string> RateLimitedLog::Admit(std::string_view message) {
  const absl::Time now = now_();
  absl::MutexLock lock(&mu_);
  if (now - last_logged_ < interval_) {
    ++held_back_;
    return std::nullopt;
  }
  std::string line(message);
  if (held_back_ > 0) {
    absl::StrAppend(&line, " (and ", held_back_, " such since the last one logged)");
  }
  last_logged_ = now;
  held_back_ = 0;
  return line;
}

void RateLimitedLog::Warning(std::string_view message) {
  if (Level::kWarning < GetLevel()) return;
  if (std::optional<std::string> line = Admit(message)) Write(Level::kWarning, *line);
}

}  // namespace nfs3d::log
