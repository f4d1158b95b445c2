#include "vfs/cephfs/cephfs_exclusive_create.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"

#include "common/log.h"
#include "vfs/cephfs/cephfs_impl.h"

namespace nfs3d::vfs {
namespace {

// FNV-1a: a hash that stays the same across processes and versions (the
// name may be up to 255 bytes, too long to carry whole in the temporary one).
uint64_t StableHash(std::string_view s) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// A reference to `name` in `parent` if it is a regular file carrying
// `verifier` (an earlier try of this call made it); -EEXIST otherwise.
int FindOwnFile(ceph_mount_info* cm, Inode* parent, const char* name, const Verifier& verifier,
                UserPerm* perm, Inode** in) {
  struct ceph_statx stx;
  int rc = ceph_ll_lookup(cm, parent, name, in, &stx, kWantAttrs, AT_SYMLINK_NOFOLLOW, perm);
  if (rc < 0) return rc == -ENOENT ? -EEXIST : rc;  // gone again: another's doing
  uint8_t stored[8];
  const int len =
      ceph_ll_getxattr(cm, *in, kVerifierXattr, stored, sizeof(stored), ceph_mount_perms(cm));
  if (S_ISREG(stx.stx_mode) && len == 8 && std::memcmp(stored, verifier.data(), 8) == 0) return 0;
  ceph_ll_put(cm, *in);
  return -EEXIST;
}

// The temporary file: made now, or left by an earlier try: ours by its name
// and its owner. (The verifier crosses the wire in clear: a file another user
// put under the name beforehand, to be handed the caller's data, is not.)
int MakeTempFile(ceph_mount_info* cm, Inode* parent, const char* temp, uid_t uid, UserPerm* perm,
                 Inode** in) {
  Fh* fh = nullptr;
  struct ceph_statx stx;
  int rc = ceph_ll_create(cm, parent, temp, 0600, O_CREAT | O_EXCL | O_RDWR, in, &fh, &stx,
                          kWantAttrs, 0, perm);
  if (rc == 0) {
    if (fh != nullptr) ceph_ll_close(cm, fh);
    return 0;
  }
  if (rc != -EEXIST) return rc;
  rc = ceph_ll_lookup(cm, parent, temp, in, &stx, kWantAttrs, AT_SYMLINK_NOFOLLOW, perm);
  if (rc < 0) return rc;
  if (S_ISREG(stx.stx_mode) && stx.stx_uid == uid) return 0;
  ceph_ll_put(cm, *in);
  return -EEXIST;
}

}  // namespace

std::string ExclusiveCreateTempName(std::string_view name, const Verifier& verifier) {
  uint64_t v = 0;
  for (uint8_t b : verifier) v = (v << 8) | b;
  return absl::StrFormat(".nfs3d-excl.%016x.%016x", v, StableHash(name));
}

int CreateExclusive(ceph_mount_info* cm, Inode* parent, const char* name, const Verifier& verifier,
                    uid_t uid, UserPerm* perm, Inode** in) {
  const std::string temp = ExclusiveCreateTempName(name, verifier);
  Inode* made = nullptr;
  int rc = MakeTempFile(cm, parent, temp.c_str(), uid, perm, &made);
  if (rc < 0) return rc == -EEXIST ? FindOwnFile(cm, parent, name, verifier, perm, in) : rc;
  rc = ceph_ll_setxattr(cm, made, kVerifierXattr, verifier.data(), verifier.size(), 0,
                        ceph_mount_perms(cm));
  if (rc == 0) rc = ceph_ll_link(cm, made, parent, name, perm);
  // Linked or not, the temporary name goes (a cut before this is repaired by
  // the retransmission, which takes the same temporary name).
  if (const int gone = ceph_ll_unlink(cm, parent, temp.c_str(), perm); gone < 0) {
    NFS3D_LOG_WARNING("exclusive create: temporary name %s left: %s", temp, std::strerror(-gone));
  }
  if (rc == 0) {
    *in = made;
    return 0;
  }
  ceph_ll_put(cm, made);
  // The name exists: ours if an earlier try linked it, another's if not.
  return rc == -EEXIST ? FindOwnFile(cm, parent, name, verifier, perm, in) : rc;
}

}  // namespace nfs3d::vfs
