// The CephFS side of a handover (nfs3d --takeover): the running instance
// flushes and ends its sessions once no call runs, so the successor's
// sessions (mounted beside them with the head's other session ids) see
// everything it wrote and may take the locks it held.
#include "absl/strings/str_cat.h"

#include "common/log.h"
#include "vfs/cephfs/cephfs_backend.h"
#include "vfs/cephfs/cephfs_impl.h"

namespace nfs3d::vfs {

absl::Status CephfsBackend::HandOverSessions() {
  watch_.reset();  // an ended session is not a lost one
  absl::Status first;
  for (const std::shared_ptr<Impl>& mount : AllMounts()) {
    absl::Status s = mount->SyncAndUnmount();
    if (!s.ok()) {
      NFS3D_LOG_WARNING("handover: %s", s.ToString());
      if (first.ok()) first = s;
    }
  }
  if (first.ok()) NFS3D_LOG_INFO("%s: sessions flushed and ended for the successor", cluster_);
  return first;
}

}  // namespace nfs3d::vfs
