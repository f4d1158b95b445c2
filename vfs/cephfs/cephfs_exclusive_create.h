// CREATE EXCLUSIVE on CephFS without a window in which the file has its name
// but not yet its verifier. libcephfs cannot create a file with an extended
// attribute in one request, so a create under the final name followed by a
// setxattr left, when the head was cut between the two MDS requests, a file
// that the client's retransmission could not tell from another client's:
// NFS3ERR_EXIST for a create that succeeded (bench/powercut.sh --cephfs,
// docs/durability.md). Here the file is made under a temporary name derived
// from the verifier and the name, given the verifier, then linked to its name
// and the temporary name removed: whatever request a cut interrupts, the
// retransmission finds either its temporary file (its own by the name) or
// the final name carrying its verifier.
#ifndef NFS3D_VFS_CEPHFS_CEPHFS_EXCLUSIVE_CREATE_H_
#define NFS3D_VFS_CEPHFS_CEPHFS_EXCLUSIVE_CREATE_H_

#include <cephfs/libcephfs.h>
#include <sys/types.h>

#include <string>
#include <string_view>

#include "vfs/backend.h"

namespace nfs3d::vfs {

// The temporary name of an exclusive create of `name` with `verifier`: the
// same in every nfs3d instance, so a retransmission finds what a cut left.
std::string ExclusiveCreateTempName(std::string_view name, const Verifier& verifier);

// Makes regular file `name` (mode 0600) in `parent` with `verifier` stored
// in it, as `perm` (whose uid is `uid`), or finds the file an earlier try of
// the same call made. On success *in holds a reference to the file.
// -EEXIST: the name is another's.
int CreateExclusive(ceph_mount_info* cm, Inode* parent, const char* name, const Verifier& verifier,
                    uid_t uid, UserPerm* perm, Inode** in);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_CEPHFS_EXCLUSIVE_CREATE_H_
