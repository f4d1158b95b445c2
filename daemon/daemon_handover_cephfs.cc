// The CephFS part of a handover (docs/handover.md). The successor mounted
// beside the running instance with the head's other session ids; once no
// call runs, the running instance flushes and ends its sessions (their
// capabilities and CephFS locks go), then sends its state; the successor
// keeps the write verifier only when that flush succeeded, and takes the
// NLM locks' CephFS locks on its own sessions before it serves. On a
// [cluster] a short grace period keeps the other heads from granting a
// conflicting lock between the two.
#include "daemon/daemon_impl.h"
#include "nlm/cluster_grace.h"
#include "vfs/file_handle_codec.h"

namespace nfs3d::daemon {
namespace {

// How long the other heads of a [cluster] hold back new locks while the
// CephFS locks change sessions; the successor ends it as soon as it holds them.
constexpr absl::Duration kLockMoveGrace = absl::Seconds(15);

bool IsCephFile(const std::string& file) {
  return vfs::PeekHandleType(vfs::FileHandle::FromBytes(absl::MakeConstSpan(
             reinterpret_cast<const uint8_t*>(file.data()), file.size()))) == vfs::kCephHandleType;
}

}  // namespace

uint64_t Daemon::Impl::HandOverCeph(const handover::NlmState& locks) {
  if (!ceph) return 0;
  const bool ceph_locks =
      std::any_of(locks.locks.begin(), locks.locks.end(), [](const handover::NlmLockEntry& l) {
        return IsCephFile(std::string(l.file.begin(), l.file.end()));
      });
  if (cluster_files && ceph_locks) {
    const absl::Duration grace = std::max(kLockMoveGrace, absl::Milliseconds(locks.grace_left_ms));
    absl::Status recorded = nlm::RecordGraceEnd(*cluster_files, config.cluster_node_id, grace);
    if (!recorded.ok())
      NFS3D_LOG_WARNING("handover: cluster grace period: %s", recorded.ToString());
  }
  absl::Status released = ceph_calls->Run([this] { return ceph->HandOverSessions(); });
  if (!released.ok()) {
    NFS3D_LOG_WARNING(
        "handover: CephFS sessions not flushed (%s): the successor changes the "
        "write verifier",
        released.ToString());
    return 0;
  }
  return ceph->WriteVerifierValue();
}

void Daemon::Impl::TakeOverCeph(uint64_t write_verifier) {
  if (!ceph) return;
  if (write_verifier != 0) {
    ceph->AdoptWriteVerifier(write_verifier);
  } else {
    ceph->ChangeWriteVerifier();
  }
  if (absl::Status s = ceph->RecordSessionInUse(); !s.ok()) {
    NFS3D_LOG_WARNING("handover: %s", s.ToString());
  }
  if (!nlm_snapshot) return;
  int taken = 0, lost = 0;
  for (const auto& [file, lock] : nlm_snapshot->locks) {
    if (!IsCephFile(file)) continue;
    if (cluster_mirror->Set(file, lock.owner, lock.first, lock.last, lock.exclusive)) {
      ++taken;
    } else {
      ++lost;
      NFS3D_LOG_ERROR("handover: %s's CephFS lock on a file was taken by another client",
                      lock.owner.host);
    }
  }
  if (taken + lost > 0) {
    NFS3D_LOG_INFO("handover: %d CephFS locks taken on this process's sessions", taken);
  }
  if (cluster_files && taken + lost > 0) {
    absl::Status recorded = nlm::RecordGraceEnd(*cluster_files, config.cluster_node_id,
                                                absl::Milliseconds(nlm_snapshot->grace_left_ms));
    if (!recorded.ok())
      NFS3D_LOG_WARNING("handover: cluster grace period: %s", recorded.ToString());
  }
}

void Daemon::Impl::CephWithoutPredecessorState() {
  if (!ceph) return;
  // What the predecessor had not flushed is lost with it: clients resend.
  ceph->ChangeWriteVerifier();
  ceph->EndPredecessorSessions();
  if (absl::Status s = ceph->RecordSessionInUse(); !s.ok()) {
    NFS3D_LOG_WARNING("handover: %s", s.ToString());
  }
}

}  // namespace nfs3d::daemon
