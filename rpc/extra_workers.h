// Threads lent to a worker pool while some of its own are held by calls
// answered early (rpc/running_call.h): a stuck call must not shrink the pool
// that still has calls to answer (those now fail at once). A thread is added
// when more calls are held than threads were added, up to `max` in all;
// added threads stay in the pool until it stops (a later stall reuses them),
// so the pool never exceeds its size + max.
#ifndef NFS3D_RPC_EXTRA_WORKERS_H_
#define NFS3D_RPC_EXTRA_WORKERS_H_

#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "boost/asio/thread_pool.hpp"

namespace nfs3d::rpc {

class ExtraWorkers {
 public:
  ExtraWorkers(boost::asio::thread_pool* pool, size_t max) : pool_(pool), max_(max) {}
  ~ExtraWorkers() { Join(); }
  ExtraWorkers(const ExtraWorkers&) = delete;
  ExtraWorkers& operator=(const ExtraWorkers&) = delete;

  // A thread of the pool is held by a call answered early / is free again.
  void Held();
  void Released();
  // Joins the added threads; only after the pool was stopped.
  void Join();

  size_t added() const;

 private:
  boost::asio::thread_pool* const pool_;
  const size_t max_;
  mutable std::mutex mu_;
  size_t held_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_EXTRA_WORKERS_H_
