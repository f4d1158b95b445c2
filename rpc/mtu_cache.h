// MTU of network interfaces by index, for sizing UDP transfers to the link a
// call arrived on. Lookups are answered from memory. An rtnetlink listener
// applies link changes as the kernel announces them (RTM_NEWLINK carries the
// new MTU), so the first call after `ip link set DEV mtu N` already sees N;
// the kernel sends the announcement before the MTU change returns. Where no
// rtnetlink socket can be opened, entries are looked up again after 30 s.
#ifndef NFS3D_RPC_MTU_CACHE_H_
#define NFS3D_RPC_MTU_CACHE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "absl/base/thread_annotations.h"

namespace nfs3d::rpc {

class MtuCache {
 public:
  // Starts the listener thread (when rtnetlink is available).
  MtuCache();
  ~MtuCache();
  MtuCache(const MtuCache&) = delete;
  MtuCache& operator=(const MtuCache&) = delete;

  // MTU of interface `ifindex`; 0 when unknown.
  uint32_t Get(int ifindex);
  // Whether link changes are followed as they happen (else: a 30 s expiry).
  bool follows_link_changes() const { return following_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    uint32_t mtu;
    std::chrono::steady_clock::time_point fetched;
  };
  uint32_t Lookup(int ifindex) const;  // SIOCGIFMTU; 0 on failure
  void Listen();
  // Applies one batch of rtnetlink messages; false on a fatal socket error.
  bool ReadLinkMessages();

  int ioctl_fd_ = -1;
  int netlink_fd_ = -1;
  int stop_fd_ = -1;                    // eventfd: written once to stop the listener
  std::atomic<bool> following_{false};  // the listener runs and has lost nothing
  std::thread listener_;
  std::mutex mu_;
  std::unordered_map<int, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // Counts the listener's changes, so a lookup that raced with one does not
  // store the value from before it.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_MTU_CACHE_H_
