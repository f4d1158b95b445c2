// LockMirror on the exported files themselves: each NLM lock owner gets an
// open file description of its own per file, and its locks are set there as
// open-file-description (OFD) locks with fcntl(F_OFD_SETLK). The kernel
// gives OFD locks the same per-owner semantics as the lock table (a new
// lock replaces the owner's range, ranges merge and split) and makes them
// conflict with every other fcntl lock on the file: the POSIX and OFD locks
// of local processes, other file servers (Samba) among them. flock() locks
// are a separate kind on Linux and see none of this. Closing the
// descriptor drops all of the owner's locks on the file.
//
// Not thread-safe: the lock manager calls it under its mutex.
#ifndef NFS3D_NLM_OFD_LOCK_MIRROR_H_
#define NFS3D_NLM_OFD_LOCK_MIRROR_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"

#include "nlm/lock_mirror.h"

namespace nfs3d::nlm {

class OfdLockMirror : public LockMirror {
 public:
  // Opens a new descriptor for the file a lock-table key names (read-write
  // where possible); the mirror owns what it returns.
  using Opener = std::function<absl::StatusOr<int>(const std::string& file)>;

  // At most max_descriptors (owner, file) pairs are mirrored at once; locks
  // beyond that stay in the lock table only. (The backend sizes
  // RLIMIT_NOFILE for its caches plus 1024 other descriptors; this takes
  // a quarter of those.)
  OfdLockMirror(Opener opener, size_t max_descriptors = 256);
  ~OfdLockMirror() override;
  OfdLockMirror(const OfdLockMirror&) = delete;
  OfdLockMirror& operator=(const OfdLockMirror&) = delete;

  bool Set(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
           std::optional<bool> exclusive) override;
  std::optional<Lock> Conflict(const std::string& file, const LockOwner& owner, uint64_t first,
                               uint64_t last, bool exclusive) override;
  void Forget(const std::string& file, const LockOwner& owner) override;
  void ForgetHost(const std::string& host) override;

  size_t descriptors() const { return fds_.size(); }

  // The descriptors holding the locks, for a successor process: passed with
  // SCM_RIGHTS they hold the same open file descriptions, so the locks are
  // never released. The mirror keeps owning its own.
  struct Held {
    LockOwner owner;
    std::string file;
    int fd = -1;
  };
  std::vector<Held> Descriptors() const;
  // Takes over a predecessor's descriptors (owned from now on).
  void Adopt(std::vector<Held> held);

 private:
  using Key = std::tuple<std::string, int32_t, std::string, std::string>;  // host, svid, oh, file
  static Key KeyOf(const std::string& file, const LockOwner& owner) {
    return {owner.host, owner.svid, owner.oh, file};
  }
  // The owner's descriptor for file, opened if needed; -1 if none can be had.
  int Descriptor(const std::string& file, const LockOwner& owner);

  Opener opener_;
  size_t max_descriptors_;
  std::map<Key, int> fds_;
  bool warned_full_ = false;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_OFD_LOCK_MIRROR_H_
