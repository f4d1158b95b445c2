// LockMirror onto a cluster file system's own byte-range locks (CephFS:
// ceph_ll_setlk through vfs/cephfs), so the cluster's other clients (kernel
// cephfs mounts, other gateways) see NLM locks and theirs refuse NLM clients'
// conflicting ones. The file system is reached through two callbacks, so
// the lock manager does not depend on it. Each NLM lock owner becomes one
// 64-bit lock owner of the cluster client (a hash of host, svid and oh).
//
// SplitLockMirror sends each file to one of two mirrors (e.g. CephFS handles
// here, local files to OfdLockMirror).
//
// Not thread-safe: the lock manager calls mirrors under its mutex.
#ifndef NFS3D_NLM_CLUSTER_LOCK_MIRROR_H_
#define NFS3D_NLM_CLUSTER_LOCK_MIRROR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"

#include "nlm/lock_mirror.h"

namespace nfs3d::nlm {

class ClusterLockMirror : public LockMirror {
 public:
  struct Held {
    uint64_t first = 0;
    uint64_t last = 0;
    bool exclusive = false;
    int64_t pid = 0;
  };
  // type: F_RDLCK, F_WRLCK, F_UNLCK; false = a conflicting lock is held.
  using SetFn = std::function<absl::StatusOr<bool>(const std::string& file, uint64_t owner,
                                                   uint64_t first, uint64_t last, short type)>;
  using TestFn = std::function<absl::StatusOr<std::optional<Held>>(
      const std::string& file, uint64_t owner, uint64_t first, uint64_t last, bool exclusive)>;

  ClusterLockMirror(SetFn set, TestFn test) : set_(std::move(set)), test_(std::move(test)) {}

  bool Set(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
           std::optional<bool> exclusive) override;
  std::optional<Lock> Conflict(const std::string& file, const LockOwner& owner, uint64_t first,
                               uint64_t last, bool exclusive) override;
  void Forget(const std::string& file, const LockOwner& owner) override;
  void ForgetHost(const std::string& host) override;

  static uint64_t OwnerId(const LockOwner& owner);

 private:
  using Key = std::tuple<std::string, int32_t, std::string, std::string>;  // host, svid, oh, file
  SetFn set_;
  TestFn test_;
  std::set<Key> held_;  // (owner, file) pairs that may hold cluster locks
};

class SplitLockMirror : public LockMirror {
 public:
  // Files for which `first_if` is true go to `first`, the others to `second`.
  SplitLockMirror(std::function<bool(const std::string& file)> first_if, LockMirror* first,
                  LockMirror* second)
      : first_if_(std::move(first_if)), first_(first), second_(second) {}

  bool Set(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
           std::optional<bool> exclusive) override {
    return For(file)->Set(file, owner, first, last, exclusive);
  }
  std::optional<Lock> Conflict(const std::string& file, const LockOwner& owner, uint64_t first,
                               uint64_t last, bool exclusive) override {
    return For(file)->Conflict(file, owner, first, last, exclusive);
  }
  void Forget(const std::string& file, const LockOwner& owner) override {
    For(file)->Forget(file, owner);
  }
  void ForgetHost(const std::string& host) override {
    first_->ForgetHost(host);
    second_->ForgetHost(host);
  }

 private:
  LockMirror* For(const std::string& file) { return first_if_(file) ? first_ : second_; }
  std::function<bool(const std::string&)> first_if_;
  LockMirror* first_;
  LockMirror* second_;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_CLUSTER_LOCK_MIRROR_H_
