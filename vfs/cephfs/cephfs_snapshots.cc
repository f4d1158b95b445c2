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

}  // namespace nfs3d::vfs
