#include "nlm/task_runner.h"

#include <utility>

namespace nfs3d::nlm {

TaskRunner::TaskRunner(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

TaskRunner::~TaskRunner() { Stop(); }

bool TaskRunner::Post(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= max_queued_) return false;
  queue_.push_back(std::move(task));
  return true;
}

void TaskRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void TaskRunner::Drain() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](TaskRunner* r)
           ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu_) { return r->queue_.empty() && r->running_ == 0; },
      this));
}

void TaskRunner::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](TaskRunner* r)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu_) { return r->stopping_ || !r->queue_.empty(); },
          this));
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

}  // namespace nfs3d::nlm
