#include "vfs/posix/fs_quota.h"

#include <linux/quota.h>
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

}  // namespace

absl::StatusOr<std::optional<Quota>> FileSystemQuota(int fd, QuotaKind kind, uint32_t id) {
  if_dqblk dq{};
  const int type = kind == QuotaKind::kUser ? USRQUOTA : GRPQUOTA;
  if (syscall(SYS_quotactl_fd, fd, QCMD(Q_GETQUOTA, type), id, &dq) != 0) {
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
