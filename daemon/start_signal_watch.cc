#include "daemon/start_signal_watch.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <utility>

#include "common/log.h"

namespace nfs3d::daemon {

StartSignalWatch::StartSignalWatch(const sigset_t& stop, std::function<void()> before_exit)
    : stop_(stop), before_exit_(std::move(before_exit)) {
  thread_ = std::thread([this] { Watch(); });
}

StartSignalWatch::~StartSignalWatch() {
  done_.store(true);
  thread_.join();
}

void StartSignalWatch::Watch() {
  // Polled, so that the end of the start needs no signal of its own.
  const timespec tick = {0, 100'000'000};
  while (!done_.load()) {
    const int sig = sigtimedwait(&stop_, nullptr, &tick);
    if (sig <= 0) continue;
    if (done_.load()) {
      kill(getpid(), sig);  // the start ended meanwhile: the main thread's to answer
      return;
    }
    NFS3D_LOG_WARNING("signal %d (%s) during the start: exiting before serving", sig,
                      sig == SIGTERM ? "SIGTERM" : "SIGINT");
    before_exit_();
    std::fflush(stderr);
    std::_Exit(1);
  }
}

}  // namespace nfs3d::daemon
