#include "vfs/cephfs/cephfs_snapshots.h"

#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

absl::Status RefuseInSnapshot(uint64_t snap, std::string_view what) {
  if (!InSnapshot(snap)) return absl::OkStatus();
  return ErrnoError(EROFS, absl::StrCat(std::string(what), " in a snapshot"));
}

uint64_t SnapshotFsid(uint64_t export_fsid, uint64_t snap) {
  if (!InSnapshot(snap)) return export_fsid;
  // A fixed odd multiplier spreads consecutive snapshot ids; never the
  // export's own fsid.
  uint64_t fsid = export_fsid ^ ((snap + 1) * 0x9E3779B97F4A7C15ULL);
  return fsid == export_fsid ? ~fsid : fsid;
}

}  // namespace nfs3d::vfs
