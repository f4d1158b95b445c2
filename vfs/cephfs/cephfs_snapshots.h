// CephFS snapshots through an export. A directory's snapshots appear in its
// hidden ".snap" directory (libcephfs's snapdir), each one a read-only copy
// of the tree at .snap/<name>. A snapshot's inodes keep the live inode
// numbers and are told apart by a snapshot id: handles carry both, and
// libcephfs finds a (inode, snapshot id) pair again from the MDS after a
// restart, so the handles work on any head at any time while the snapshot
// exists. Nothing in a snapshot can be changed (EROFS, NFS3ERR_ROFS), and
// snapshots are not made or removed through NFS.
#ifndef NFS3D_VFS_CEPHFS_CEPHFS_SNAPSHOTS_H_
#define NFS3D_VFS_CEPHFS_CEPHFS_SNAPSHOTS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace nfs3d::vfs {

inline constexpr uint64_t kCephNoSnap = ~uint64_t{0} - 1;  // CEPH_NOSNAP: the live tree
inline constexpr uint64_t kCephSnapDir = ~uint64_t{0};     // CEPH_SNAPDIR: a ".snap"

inline bool InSnapshot(uint64_t snap) { return snap != kCephNoSnap; }

// EROFS for a change to an object in a snapshot (or a .snap directory).
absl::Status RefuseInSnapshot(uint64_t snap, std::string_view what);

// The fsid of the objects of one snapshot (or of a .snap directory): a file
// system of its own for the client, as the kernel's CephFS client gives each
// snapshot a device of its own, since a snapshot's objects keep the live
// inode numbers (a .snap directory even its directory's). The Linux client
// then mounts each on its own and tools see no hard links or loops. The same
// on every head.
uint64_t SnapshotFsid(uint64_t export_fsid, uint64_t snap);

// The ACCESS3 bits an object in a snapshot grants at most: no change.
inline constexpr uint32_t kSnapshotAccessMask = 0x01 | 0x02 | 0x20;  // READ, LOOKUP, EXECUTE

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_CEPHFS_SNAPSHOTS_H_
