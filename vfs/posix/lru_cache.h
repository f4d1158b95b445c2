#pragma once

#include <algorithm>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace nfs3d::vfs {

// A bounded least-recently-used map from handle bytes to shared values.
// Evicted values are released outside the lock; holders keep them alive.
template <typename V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  std::shared_ptr<V> Get(absl::string_view key) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Inserts value unless key is present; returns the cached value.
  std::shared_ptr<V> Insert(const std::string& key, std::shared_ptr<V> value) {
    std::shared_ptr<V> evicted;
    std::shared_ptr<V> result;
    {
      absl::MutexLock lock(&mu_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
      order_.emplace_front(key, std::move(value));
      index_[key] = order_.begin();
      result = order_.front().second;
      if (order_.size() > capacity_) {
        evicted = std::move(order_.back().second);
        index_.erase(order_.back().first);
        order_.pop_back();
      }
    }
    return result;
  }

  void Erase(absl::string_view key) {
    std::shared_ptr<V> evicted;
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return;
    evicted = std::move(it->second->second);
    order_.erase(it->second);
    index_.erase(it);
  }

 private:
  const size_t capacity_;
  absl::Mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<V>>> order_ ABSL_GUARDED_BY(mu_);
  // Looked up by string_view: no key string built per call.
  absl::flat_hash_map<std::string,
                      typename std::list<std::pair<std::string, std::shared_ptr<V>>>::iterator>
      index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nfs3d::vfs
