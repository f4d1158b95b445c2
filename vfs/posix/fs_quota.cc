#include "vfs/posix/fs_quota.h"

#include <linux/quota.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "vfs/vfs_error.h"

#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd 443  // the same number on every architecture
#endif

namespace nfs3d::vfs {
namespace {

constexpr uint64_t kQuotaBlock = 1024;  // QIF_DQBLKSIZE: the unit of the block limits

uint64_t GraceLeft(uint64_t deadline, uint64_t now) { return deadline > now ? deadline - now : 0; }

// Q_GETQUOTA of an id other than the thread's euid (user quotas) or one of
// its groups (group quotas) needs CAP_SYS_ADMIN, which nfs3d does not keep
// (daemon/privileges.h); the kernel lets an id read its own. So the thread
// asks as that id: its euid (egid) becomes the id for the call and comes
// back after. Raw syscalls, so only this thread changes (glibc's setresuid
// would change every thread). The euid leaving 0 clears the thread's
// effective capabilities and its return restores them from the permitted
// set; the fsuid/fsgid, which follow the euid/egid, are put back too.
// Not root (tests): nothing changes.
class AsQuotaOwner {
 public:
  AsQuotaOwner(int type, uint32_t id) : user_(type == USRQUOTA) {
    if (geteuid() != 0) return;
    euid_ = geteuid();
    egid_ = getegid();
    fsuid_ = setfsuid(static_cast<uid_t>(-1));
    fsgid_ = setfsgid(static_cast<gid_t>(-1));
    switched_ =
        (user_ ? syscall(SYS_setresuid, -1, id, -1) : syscall(SYS_setresgid, -1, id, -1)) == 0;
  }
  ~AsQuotaOwner() {
    if (!switched_) return;
    if (user_) {
      syscall(SYS_setresuid, -1, euid_, -1);
    } else {
      syscall(SYS_setresgid, -1, egid_, -1);
    }
    setfsgid(fsgid_);
    setfsuid(fsuid_);
  }
  AsQuotaOwner(const AsQuotaOwner&) = delete;
  AsQuotaOwner& operator=(const AsQuotaOwner&) = delete;

 private:
  const bool user_;
  bool switched_ = false;
  uid_t euid_ = 0;
  gid_t egid_ = 0;
  int fsuid_ = 0;
  int fsgid_ = 0;
};

}  // namespace

absl::StatusOr<std::optional<Quota>> FileSystemQuota(int fd, QuotaKind kind, uint32_t id) {
  if_dqblk dq{};
  const int type = kind == QuotaKind::kUser ? USRQUOTA : GRPQUOTA;
  long done;
  int err;
  {
    AsQuotaOwner owner(type, id);
    done = syscall(SYS_quotactl_fd, fd, QCMD(Q_GETQUOTA, type), id, &dq);
    err = errno;
  }
  errno = err;
  if (done != 0) {
    // ESRCH: quotas of this kind are not on; ENOSYS/EOPNOTSUPP/ENOTTY: the
    // kernel or the file system has none.
    if (errno == ESRCH || errno == ENOSYS || errno == EOPNOTSUPP || errno == ENOTTY ||
        errno == EINVAL) {
      return std::nullopt;
    }
    return ErrnoError(errno, "quotactl");
  }
  const uint64_t now = static_cast<uint64_t>(time(nullptr));
  Quota q;
  q.bytes_hard = dq.dqb_bhardlimit * kQuotaBlock;
  q.bytes_soft = dq.dqb_bsoftlimit * kQuotaBlock;
  q.bytes_used = dq.dqb_curspace;
  q.files_hard = dq.dqb_ihardlimit;
  q.files_soft = dq.dqb_isoftlimit;
  q.files_used = dq.dqb_curinodes;
  // The kernel sets a grace deadline only while usage is over the soft limit.
  q.bytes_grace_left = GraceLeft(dq.dqb_btime, now);
  q.files_grace_left = GraceLeft(dq.dqb_itime, now);
  return q;
}

}  // namespace nfs3d::vfs
