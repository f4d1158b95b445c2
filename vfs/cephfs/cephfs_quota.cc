#include "vfs/cephfs/cephfs_quota.h"

#include <cephfs/libcephfs.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

constexpr uint64_t kFsRootIno = 1;
constexpr int kMaxDepth = 4096;  // a bound, should ".." ever loop

// A numeric virtual xattr; 0 when the directory does not have it.
absl::StatusOr<uint64_t> NumberXattr(ceph_mount_info* cm, Inode* in, const char* name) {
  char value[64] = {};
  int rc = ceph_ll_getxattr(cm, in, name, value, sizeof(value) - 1, ceph_mount_perms(cm));
  if (rc == -ENODATA) return 0;
  if (rc < 0) return ErrnoError(-rc, std::string("reading ") + name);
  value[rc] = '\0';
  return std::strtoull(value, nullptr, 10);
}

// Fills the limits of `quota` still missing from directory in.
absl::Status ReadLimits(ceph_mount_info* cm, Inode* in, CephQuota* quota) {
  if (quota->max_bytes == 0) {
    absl::StatusOr<uint64_t> max = NumberXattr(cm, in, "ceph.quota.max_bytes");
    if (!max.ok()) return max.status();
    if (*max != 0) {
      absl::StatusOr<uint64_t> used = NumberXattr(cm, in, "ceph.dir.rbytes");
      if (!used.ok()) return used.status();
      quota->max_bytes = *max;
      quota->used_bytes = *used;
    }
  }
  if (quota->max_files == 0) {
    absl::StatusOr<uint64_t> max = NumberXattr(cm, in, "ceph.quota.max_files");
    if (!max.ok()) return max.status();
    if (*max != 0) {
      absl::StatusOr<uint64_t> used = NumberXattr(cm, in, "ceph.dir.rentries");
      if (!used.ok()) return used.status();
      quota->max_files = *max;
      quota->used_files = *used;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CephQuota> FindCephQuota(ceph_mount_info* cm, Inode* dir, uint64_t stop_ino) {
  CephQuota quota;
  const UserPerm* perms = ceph_mount_perms(cm);
  Inode* cur = nullptr;
  struct ceph_statx stx;
  int rc = ceph_ll_lookup(cm, dir, ".", &cur, &stx, CEPH_STATX_INO, 0, perms);
  if (rc < 0) return ErrnoError(-rc, "quota lookup");
  absl::Status st;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    st = ReadLimits(cm, cur, &quota);
    if (!st.ok()) break;
    const bool done = quota.max_bytes != 0 && quota.max_files != 0;
    if (done || stx.stx_ino == stop_ino || stx.stx_ino == kFsRootIno) break;
    Inode* parent = nullptr;
    rc = ceph_ll_lookup(cm, cur, "..", &parent, &stx, CEPH_STATX_INO, 0, perms);
    if (rc < 0) {
      st = ErrnoError(-rc, "quota lookup of ..");
      break;
    }
    ceph_ll_put(cm, cur);
    cur = parent;
  }
  ceph_ll_put(cm, cur);
  if (!st.ok()) return st;
  return quota;
}

absl::StatusOr<CephQuota> DirectoryCephQuota(ceph_mount_info* cm, Inode* dir) {
  CephQuota quota;
  struct Field {
    const char* name;
    uint64_t* out;
  };
  for (const Field& f : {Field{"ceph.quota.max_bytes", &quota.max_bytes},
                         Field{"ceph.dir.rbytes", &quota.used_bytes},
                         Field{"ceph.quota.max_files", &quota.max_files},
                         Field{"ceph.dir.rentries", &quota.used_files}}) {
    absl::StatusOr<uint64_t> value = NumberXattr(cm, dir, f.name);
    if (!value.ok()) return value.status();
    *f.out = *value;
  }
  return quota;
}

FsStat ApplyCephQuota(const FsStat& cluster, const CephQuota& quota) {
  FsStat out = cluster;
  if (quota.max_bytes != 0) {
    out.total_bytes = quota.max_bytes;
    out.free_bytes = quota.max_bytes - std::min(quota.used_bytes, quota.max_bytes);
    out.avail_bytes = out.free_bytes;
    if (cluster.total_bytes != 0) {
      out.free_bytes = std::min(out.free_bytes, cluster.free_bytes);
      out.avail_bytes = std::min(out.avail_bytes, cluster.avail_bytes);
    }
  }
  if (quota.max_files != 0) {
    out.total_files = quota.max_files;
    out.free_files = quota.max_files - std::min(quota.used_files, quota.max_files);
    out.avail_files = out.free_files;
  }
  return out;
}

}  // namespace nfs3d::vfs
