#include "nlm/ofd_lock_mirror.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "common/log.h"

namespace nfs3d::nlm {
namespace {

constexpr uint64_t kMaxOffset = static_cast<uint64_t>(std::numeric_limits<off_t>::max());

// [first, last] as a struct flock; false when the range starts beyond what
// off_t holds (nothing local can lock there either).
bool ToFlock(uint64_t first, uint64_t last, short type, struct flock* out) {
  if (first > kMaxOffset) return false;
  std::memset(out, 0, sizeof(*out));
  out->l_type = type;
  out->l_whence = SEEK_SET;
  out->l_start = static_cast<off_t>(first);
  // Ranges reaching past off_t (NLM's "to EOF" among them) lock to EOF.
  out->l_len = last >= kMaxOffset ? 0 : static_cast<off_t>(last - first + 1);
  return true;
}

}  // namespace

OfdLockMirror::OfdLockMirror(Opener opener, size_t max_descriptors)
    : opener_(std::move(opener)), max_descriptors_(max_descriptors) {}

OfdLockMirror::~OfdLockMirror() {
  for (const auto& [key, fd] : fds_) close(fd);
}

int OfdLockMirror::Descriptor(const std::string& file, const LockOwner& owner) {
  const Key key = KeyOf(file, owner);
  auto it = fds_.find(key);
  if (it != fds_.end()) return it->second;
  if (fds_.size() >= max_descriptors_) {
    if (!warned_full_) {
      NFS3D_LOG_WARNING(
          "lock manager: %zu lock owners mirrored onto files; further NLM locks "
          "are not visible to local processes",
          fds_.size());
      warned_full_ = true;
    }
    return -1;
  }
  absl::StatusOr<int> fd = opener_(file);
  if (!fd.ok()) {
    NFS3D_LOG_DEBUG("lock manager: not mirroring a lock: %s", fd.status().ToString());
    return -1;
  }
  fds_.emplace(key, *fd);
  return *fd;
}

bool OfdLockMirror::Set(const std::string& file, const LockOwner& owner, uint64_t first,
                        uint64_t last, std::optional<bool> exclusive) {
  struct flock fl;
  const short type = !exclusive ? F_UNLCK : *exclusive ? F_WRLCK : F_RDLCK;
  if (!ToFlock(first, last, type, &fl)) return true;
  if (!exclusive && fds_.find(KeyOf(file, owner)) == fds_.end()) return true;  // nothing held
  const int fd = Descriptor(file, owner);
  if (fd < 0) return true;
  while (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES) return false;  // someone else holds it
    // EBADF: a write lock on a read-only descriptor (the file is read-only
    // to the server); ENOLCK: out of kernel lock records. Left unmirrored.
    NFS3D_LOG_DEBUG("lock manager: F_OFD_SETLK: %s", std::strerror(errno));
    return true;
  }
  return true;
}

std::optional<Lock> OfdLockMirror::Conflict(const std::string& file, const LockOwner& owner,
                                            uint64_t first, uint64_t last, bool exclusive) {
  struct flock fl;
  if (!ToFlock(first, last, exclusive ? F_WRLCK : F_RDLCK, &fl)) return std::nullopt;
  // The owner's own descriptor (its locks never conflict with themselves),
  // or a passing one for an owner that holds nothing here.
  int fd = -1;
  int passing = -1;
  if (auto it = fds_.find(KeyOf(file, owner)); it != fds_.end()) {
    fd = it->second;
  } else if (absl::StatusOr<int> opened = opener_(file); opened.ok()) {
    fd = passing = *opened;
  }
  if (fd < 0) return std::nullopt;
  const bool found = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  if (passing >= 0) close(passing);
  if (!found) return std::nullopt;
  Lock holder;
  holder.owner.host = "(local)";
  holder.owner.svid = fl.l_pid > 0 ? fl.l_pid : 0;  // a process id; -1 for an OFD lock
  holder.first = static_cast<uint64_t>(fl.l_start);
  holder.last = fl.l_len == 0 ? kToEnd : static_cast<uint64_t>(fl.l_start + fl.l_len - 1);
  holder.exclusive = fl.l_type == F_WRLCK;
  return holder;
}

void OfdLockMirror::Forget(const std::string& file, const LockOwner& owner) {
  auto it = fds_.find(KeyOf(file, owner));
  if (it == fds_.end()) return;
  close(it->second);  // drops whatever the owner still had there
  fds_.erase(it);
}

void OfdLockMirror::ForgetHost(const std::string& host) {
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (std::get<0>(it->first) == host) {
      close(it->second);
      it = fds_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<OfdLockMirror::Held> OfdLockMirror::Descriptors() const {
  std::vector<Held> held;
  for (const auto& [key, fd] : fds_) {
    const auto& [host, svid, oh, file] = key;
    held.push_back({LockOwner{host, svid, oh}, file, fd});
  }
  return held;
}

void OfdLockMirror::Adopt(std::vector<Held> held) {
  for (Held& h : held) {
    auto [it, inserted] = fds_.emplace(KeyOf(h.file, h.owner), h.fd);
    if (!inserted) close(h.fd);
  }
}

}  // namespace nfs3d::nlm
