#include "vfs/cephfs/stall_report.h"

#include <utility>

#include "common/log.h"

namespace nfs3d::vfs {

StallReport::StallReport(std::string cluster, std::string what, absl::Duration first,
                         absl::Duration every)
    : cluster_(std::move(cluster)),
      what_(std::move(what)),
      first_(first),
      every_(every),
      start_(absl::Now()) {
  thread_ = std::thread([this] { Loop(); });
}

StallReport::~StallReport() {
  bool warned;
  {
    absl::MutexLock lock(&mu_);
    done_ = true;
    warned = warned_;
  }
  thread_.join();
  if (warned) {
    NFS3D_LOG_INFO("%s: the MDS answered after %.0f s (%s)", cluster_.c_str(),
                   absl::ToDoubleSeconds(absl::Now() - start_), what_.c_str());
  }
}

void StallReport::Loop() {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done_; };
  absl::Duration wait = first_;
  while (!mu_.AwaitWithTimeout(absl::Condition(&done), wait)) {
    warned_ = true;
    NFS3D_LOG_WARNING(
        "%s: still waiting after %.0f s for the MDS: %s. Nothing is served from this cluster "
        "until it answers: is an MDS up:active, and can it write its journal (`ceph health "
        "detail`: MDS_SLOW_METADATA_IO, or slow ops on an OSD, say it cannot)?",
        cluster_.c_str(), absl::ToDoubleSeconds(absl::Now() - start_), what_.c_str());
    wait = every_;
  }
}

}  // namespace nfs3d::vfs
