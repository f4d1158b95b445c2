// The POSIX permission rules as Linux and knfsd apply them, for a backend
// that cannot hand the caller's identity to its store for data I/O (the
// CephFS backend reads and writes through descriptors opened with its own
// identity) and so must check the caller itself. Written from POSIX.1e
// (draft 17, section 23.1.5) and the kernel's rules (generic_permission,
// posix_acl_permission, file_remove_privs, nfsd_permission).
#ifndef NFS3D_VFS_POSIX_PERMISSION_H_
#define NFS3D_VFS_POSIX_PERMISSION_H_

#include <cstdint>

#include "vfs/backend.h"
#include "vfs/posix_acl.h"

namespace nfs3d::vfs {

inline constexpr uint32_t kMayRead = 4;
inline constexpr uint32_t kMayWrite = 2;
inline constexpr uint32_t kMayExec = 1;

// Whether gid is the caller's primary group or one of its supplementary ones.
bool InGroup(const Cred& cred, uint32_t gid);

// The rwx bits (kMay*) the caller holds on an object with attributes `a`
// and access ACL `acl` (empty: the mode bits alone). With an ACL, the
// owner, mask (group class) and other entries are taken from the mode
// bits, which the file system keeps in step with them. Every matching
// group entry adds its bits, as the kernel's per-bit checks would.
// root holds read and write; execute only on directories and on files
// with some execute bit.
uint32_t PermittedBits(const Cred& cred, const Attributes& a, const Acl& acl);

// knfsd's rule for READ and WRITE of a regular file: the owner may always
// (a file created read-only stays writable by whoever created it), others
// as PermittedBits says; READ is also allowed with execute permission
// (clients read a binary to run it).
bool MayReadOrWrite(const Cred& cred, const Attributes& a, const Acl& acl, bool write);

// The ACCESS3 bits (RFC 1813 3.3.4) that rwx bits give on an object of
// type `type`.
uint32_t AccessBitsFor(FileType type, uint32_t rwx);

// The mode a regular file must have after the caller wrote to it or
// changed its size: without CAP_FSETID (anyone but root) the setuid bit
// goes, and the setgid bit when group-execute is set or the caller is not
// in the file's group (Linux's file_remove_privs). Equal to a.mode when
// nothing changes.
uint32_t ModeAfterWrite(const Cred& cred, const Attributes& a);

// The mode a regular file must have after the caller changed its owner or
// group (without changing the mode in the same call): the setuid bit goes,
// also for root, and the setgid bit when group-execute is set or a caller
// other than root is not in the file's group (Linux's chown_common).
uint32_t ModeAfterChown(const Cred& cred, const Attributes& a);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_POSIX_PERMISSION_H_
