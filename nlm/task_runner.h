// A few threads that run the lock manager's outgoing calls (GRANTED
// callbacks, *_RES replies, SM_NOTIFY), so RPC worker threads never wait on a
// client. Bounded queue: when full, Post() refuses and the caller treats the
// call as failed.
#ifndef NFS3D_NLM_TASK_RUNNER_H_
#define NFS3D_NLM_TASK_RUNNER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace nfs3d::nlm {

class TaskRunner {
 public:
  explicit TaskRunner(size_t threads = 2, size_t max_queued = 4096);
  ~TaskRunner();  // Stop()
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  bool Post(std::function<void()> task);
  // Lets running tasks finish, drops queued ones, joins. Idempotent.
  void Stop();
  // Waits until nothing is queued or running (tests).
  void Drain();

 private:
  void Loop();

  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_TASK_RUNNER_H_
