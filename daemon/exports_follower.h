// Follows an exports file: every period it reads the file and, when the text
// differs from the last text it saw, hands the new text to a callback that
// puts it in force (or refuses it, logged and counted, keeping the exports
// in force). The shared exports file of a cluster is followed this way, so a
// change made on any head is in force on every head within one period; a
// local exports file is followed when [paths] exports_poll is set.
#ifndef NFS3D_DAEMON_EXPORTS_FOLLOWER_H_
#define NFS3D_DAEMON_EXPORTS_FOLLOWER_H_

#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nfs3d::daemon {

class ExportsFollower {
 public:
  using Read = std::function<absl::StatusOr<std::string>()>;
  using Apply = std::function<void(const std::string& text)>;

  // `seen`: the text in force now (read at start), not applied again.
  ExportsFollower(std::string where, absl::Duration period, Read read, Apply apply,
                  std::string seen);
  ~ExportsFollower();  // stops and joins the thread
  ExportsFollower(const ExportsFollower&) = delete;
  ExportsFollower& operator=(const ExportsFollower&) = delete;

  // A text put in force by someone else (SIGHUP): not applied again.
  void Saw(const std::string& text);

 private:
  void Loop();

  const std::string where_;
  const absl::Duration period_;
  const Read read_;
  const Apply apply_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::string seen_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_EXPORTS_FOLLOWER_H_
