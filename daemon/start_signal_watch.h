// While nfs3d starts, SIGTERM and SIGINT end it at once. A start may wait as
// long as its file system is away (a CephFS mount waits for its MDS to end
// the previous instance's session), and with the stop signals blocked for
// the main thread's sigwait, `systemctl stop` would wait with it. Nothing has
// been served yet that a clean stop must finish, and what a start leaves
// half done is what a kill -9 leaves, which the server survives by design.
#ifndef NFS3D_DAEMON_START_SIGNAL_WATCH_H_
#define NFS3D_DAEMON_START_SIGNAL_WATCH_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace nfs3d::daemon {

class StartSignalWatch {
 public:
  // `stop`: the signals that end the start, blocked in every thread.
  // `before_exit`: runs on the watch's thread before it exits the process.
  StartSignalWatch(const sigset_t& stop, std::function<void()> before_exit);
  // Ends the watch. A signal it took meanwhile is raised again, so the
  // main thread's sigwait finds it.
  ~StartSignalWatch();
  StartSignalWatch(const StartSignalWatch&) = delete;
  StartSignalWatch& operator=(const StartSignalWatch&) = delete;

 private:
  void Watch();

  const sigset_t stop_;
  const std::function<void()> before_exit_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_START_SIGNAL_WATCH_H_
