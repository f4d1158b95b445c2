// glibc malloc settings for a process that writes through libcephfs.
//
// libcephfs copies every write into a buffer it allocates for that write
// and frees once the OSD has it: a 1 MiB NFS WRITE is a 1 MiB malloc. With
// glibc's defaults such a block is mmap'ed and unmapped each time (or
// trimmed back to the kernel soon after), so the copy into it page-faults
// on every 4 KiB: in a profile of 1 MiB WRITEs to CephFS, a fifth of
// nfs3d's samples were those faults. Keeping blocks up to a few MiB in
// malloc's arenas, and the arenas from being trimmed, makes them reusable.
#ifndef NFS3D_VFS_CEPHFS_MALLOC_SETTINGS_H_
#define NFS3D_VFS_CEPHFS_MALLOC_SETTINGS_H_

namespace nfs3d::vfs {

// Sets the mmap and trim thresholds above (process-wide, once), unless the
// administrator set glibc's malloc tunables (GLIBC_TUNABLES) already.
void KeepWriteBuffersInMallocArenas();

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_MALLOC_SETTINGS_H_
