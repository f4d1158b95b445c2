#include "daemon/exports_follower.h"

#include <utility>

#include "common/log.h"

namespace nfs3d::daemon {

ExportsFollower::ExportsFollower(std::string where, absl::Duration period, Read read, Apply apply,
                                 std::string seen)
    : where_(std::move(where)),
      period_(period),
      read_(std::move(read)),
      apply_(std::move(apply)),
      seen_(std::move(seen)) {
  thread_ = std::thread([this] { Loop(); });
}

ExportsFollower::~ExportsFollower() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void ExportsFollower::Saw(const std::string& text) {
  absl::MutexLock lock(&mu_);
  seen_ = text;
}

void ExportsFollower::Loop() {
  std::string last_error;  // logged once until it changes
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), period_)) return;
    }
    absl::StatusOr<std::string> text = read_();
    if (!text.ok()) {
      if (std::string error(text.status().message()); error != last_error) {
        NFS3D_LOG_WARNING("exports %s unreadable, keeping the exports in force: %s", where_, error);
        last_error = error;
      }
      continue;
    }
    last_error.clear();
    {
      absl::MutexLock lock(&mu_);
      if (*text == seen_) continue;
      seen_ = *text;
    }
    apply_(*text);
  }
}

}  // namespace nfs3d::daemon
