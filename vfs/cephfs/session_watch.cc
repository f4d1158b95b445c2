#include "vfs/cephfs/session_watch.h"

#include <cerrno>
#include <string>
#include <utility>

#include "common/log.h"

namespace nfs3d::vfs {

bool CephSessionLost(int rc) { return rc == -ESHUTDOWN || rc == -ENOTCONN; }

SessionWatch::SessionWatch(absl::Duration period, std::function<int()> probe,
                           std::function<absl::Status()> replace)
    : period_(period), probe_(std::move(probe)), replace_(std::move(replace)) {
  thread_ = std::thread([this] { Loop(); });
}

SessionWatch::~SessionWatch() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void SessionWatch::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
      mu_.AwaitWithTimeout(absl::Condition(&stopping), period_);
      if (stopping_) return;
    }
    const int rc = probe_();
    if (!CephSessionLost(rc)) continue;
    absl::Status replaced = replace_();
    if (!replaced.ok()) {
      NFS3D_LOG_WARNING("cephfs session lost; a new one failed (tried again): %s",
                        std::string(replaced.message()).c_str());
    }
  }
}

}  // namespace nfs3d::vfs
