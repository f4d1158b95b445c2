// Counts moves of directories, so cached directories of sub-directory
// exports are re-checked only after something may have moved them.
//
// A directory handle of a sub-directory export must go stale once the
// directory (or an ancestor) is moved out of the export. Checking that on
// every use costs two readlink(2)s of /proc/self/fd paths and a path
// compare per call, about two thirds of a GETATTR. Instead, each cached
// directory remembers the generation it was last checked at, and the
// generation moves on when this server renames a directory (NoteMove), or
// when fanotify has reported a directory moved by any process on a watched
// file system (a filesystem-wide FAN_MOVED_FROM | FAN_ONDIR mark) or that its
// queue overflowed. fanotify queues the event before rename(2) returns, and
// Generation() drains the queue whenever it is not empty (one FIONREAD ioctl
// per call when it is), so a directory moved out before a call arrives is
// refused in that call, as with a check on every use.
// With a receive counter (one the transports advance after every read from a
// client socket) the FIONREAD is made only once per read, not per call: a
// call sent after a rename returned arrives in a read after it, and that read
// moves the counter, so the next Generation() looks again. Pipelined calls of
// one read share one ioctl (13 % of a sub-directory GETATTR's cycles, perf).
// Where fanotify is unavailable (no CAP_SYS_ADMIN, or a file system that
// cannot report file ids) Watch fails and callers check on every use.
#ifndef NFS3D_VFS_DIRECTORY_MOVE_WATCH_H_
#define NFS3D_VFS_DIRECTORY_MOVE_WATCH_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace nfs3d::vfs {

class DirectoryMoveWatch {
 public:
  // receive_count: see above; null: look at the queue on every call. It
  // must outlive this object.
  explicit DirectoryMoveWatch(const std::atomic<uint64_t>* receive_count = nullptr)
      : receive_count_(receive_count) {}
  ~DirectoryMoveWatch();
  DirectoryMoveWatch(const DirectoryMoveWatch&) = delete;
  DirectoryMoveWatch& operator=(const DirectoryMoveWatch&) = delete;

  // Watches the whole file system holding `path` for directory moves by
  // any process.
  absl::Status Watch(const std::string& path);

  // The current generation, after taking in what fanotify has queued; never
  // 0, so 0 can stand for "not checked yet". nullopt when the queue cannot
  // be read: the caller must check.
  std::optional<uint64_t> Generation();
  // A directory was moved by this process.
  void NoteMove() { generation_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  void Drain();

  const std::atomic<uint64_t>* const receive_count_;
  // 1 + the receive count read before the last look at an empty queue; 0:
  // none yet.
  std::atomic<uint64_t> looked_at_{0};
  std::atomic<int> fanotify_fd_{-1};
  std::atomic<uint64_t> generation_{1};
  absl::Mutex init_mu_;   // serialises the first Watch
  absl::Mutex drain_mu_;  // one reader of the queue at a time
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_DIRECTORY_MOVE_WATCH_H_
