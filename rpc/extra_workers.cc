#include "rpc/extra_workers.h"

#include <exception>
#include <utility>

#include "common/log.h"

namespace nfs3d::rpc {

void ExtraWorkers::Held() {
  std::lock_guard<std::mutex> lock(mu_);
  ++held_;
  if (held_ <= threads_.size() || threads_.size() >= max_) return;
  threads_.emplace_back([pool = pool_] {
    try {
      pool->attach();  // runs the pool's tasks until it stops
    } catch (const std::exception& e) {
      NFS3D_LOG_ERROR("extra worker: %s", e.what());
    }
  });
  NFS3D_LOG_INFO("rpc: %d worker threads are held by calls answered early; added one", held_);
}

void ExtraWorkers::Released() {
  std::lock_guard<std::mutex> lock(mu_);
  if (held_ > 0) --held_;
}

void ExtraWorkers::Join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads = std::move(threads_);
    threads_.clear();
  }
  for (std::thread& t : threads) t.join();
}

size_t ExtraWorkers::added() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.size();
}

}  // namespace nfs3d::rpc
