// Where the lock manager mirrors its locks outside itself, so processes on
// the server and NLM clients see each other's locks. The lock table stays
// authoritative between NLM clients; the mirror adds locks nfs3d does not
// hold (a local process's fcntl lock) as conflicts.
#ifndef NFS3D_NLM_LOCK_MIRROR_H_
#define NFS3D_NLM_LOCK_MIRROR_H_

#include <cstdint>
#include <optional>
#include <string>

#include "nlm/lock_table.h"

namespace nfs3d::nlm {

class LockMirror {
 public:
  virtual ~LockMirror() = default;

  // Sets owner's state over [first, last] of file like LockTable does
  // (exclusive, shared, or nullopt: unlocked). False when a lock held
  // outside NLM conflicts; then nothing changed. A file the mirror cannot
  // use (e.g. not a regular file) is not mirrored: true.
  virtual bool Set(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
                   std::optional<bool> exclusive) = 0;
  // A lock held outside NLM that conflicts with owner taking [first, last].
  virtual std::optional<Lock> Conflict(const std::string& file, const LockOwner& owner,
                                       uint64_t first, uint64_t last, bool exclusive) = 0;
  // owner holds nothing on file any more.
  virtual void Forget(const std::string& file, const LockOwner& owner) = 0;
  // Every owner of host holds nothing any more.
  virtual void ForgetHost(const std::string& host) = 0;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_LOCK_MIRROR_H_
