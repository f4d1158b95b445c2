// The lock manager: NLM and NSM, the locks mirrored to the files, and the
// grace period shared by the heads of a cluster.
#include "daemon/daemon_impl.h"

namespace nfs3d::daemon {

absl::StatusOr<std::unique_ptr<nlm::StatusStore>> Daemon::Impl::OpenStatusStore() {
  if (cluster_files) {
    absl::StatusOr<std::unique_ptr<DurableFiles>> nsm =
        cluster_files->Sub(absl::StrCat("nsm.", config.cluster_node_id));
    if (!nsm.ok()) return nsm.status();
    return nlm::StatusStore::Open(std::move(*nsm), /*bump=*/!taking_over);
  }
  return nlm::StatusStore::Open(config.state_dir, /*bump=*/!taking_over);
}

void Daemon::Impl::RecordGraceAtTakeover(DurableFiles& shared) {
  if (!config.nlm || config.nlm_grace_period == 0) return;
  absl::StatusOr<std::unique_ptr<DurableFiles>> nsm =
      shared.Sub(absl::StrCat("nsm.", config.cluster_node_id));
  absl::StatusOr<bool> held =
      nsm.ok() ? nlm::StatusStore::HasRecordedHosts(**nsm) : absl::StatusOr<bool>(nsm.status());
  if (!held.ok()) {
    NFS3D_LOG_WARNING("cluster grace period: %s", held.status().ToString());
    return;
  }
  if (!*held) return;
  // Start() records it again from the start of the grace period proper.
  absl::Status recorded =
      nlm::RecordGraceEnd(shared, config.cluster_node_id, absl::Seconds(config.nlm_grace_period));
  if (!recorded.ok()) NFS3D_LOG_WARNING("cluster grace period: %s", recorded.ToString());
  NFS3D_LOG_INFO("cluster grace period recorded as the previous instance's session ended");
}

void Daemon::Impl::ShareGraceWithCluster(bool grace) {
  if (!cluster_files) return;
  if (grace) {
    absl::Status recorded = nlm::RecordGraceEnd(*cluster_files, config.cluster_node_id,
                                                absl::Seconds(config.nlm_grace_period));
    if (!recorded.ok()) NFS3D_LOG_WARNING("cluster grace period: %s", recorded.ToString());
  }
  nlm->SetOtherGrace([files = cluster_files.get()] {
    absl::StatusOr<absl::Time> end = nlm::LatestGraceEnd(*files);
    if (!end.ok()) {
      NFS3D_LOG_WARNING("cluster grace period unknown: %s", end.status().ToString());
      return true;
    }
    return absl::Now() < *end;
  });
}

absl::Status Daemon::Impl::SetUpLockManager() {
  absl::StatusOr<std::unique_ptr<nlm::StatusStore>> store = OpenStatusStore();
  if (!store.ok()) return store.status();
  nsm_store = std::move(*store);
  nlm::NlmOptions nlm_options;
  nlm_options.grace_period = absl::Seconds(config.nlm_grace_period);
  nlm_options.limits.max_total = config.nlm_max_locks;
  nlm_options.limits.max_per_host = config.nlm_max_locks_per_client;
  peer_caller = std::make_unique<nlm::RpcPeerCaller>();
  nlm = std::make_unique<nlm::NlmService>(nlm_options, nfsd::MakeNlmFileResolver(nfs.get()),
                                          peer_caller.get(), nsm_store.get());
  // NLM locks also lock the files themselves (OFD locks): processes on the
  // server see them, and NLM clients see theirs.
  lock_mirror =
      std::make_unique<nlm::OfdLockMirror>([backend = router.get()](const std::string& file) {
        return backend->OpenForLocking(vfs::FileHandle::FromBytes(
            absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size())));
      });
  SetUpClusterLockMirror();
  nlm->SetMirror(split_mirror.get());
  nsm = std::make_unique<nsm::NsmService>(nlm.get());
  nlm_program = nlm::MakeNlmProgram(nlm.get());
  nsm_program = nsm::MakeNsmProgram(nsm.get());
  dispatcher->AddProgram(&nlm_program);
  dispatcher->AddProgram(&nsm_program);
  return absl::OkStatus();
}

void Daemon::Impl::SetUpClusterLockMirror() {
  auto handle_of = [](const std::string& file) {
    return vfs::FileHandle::FromBytes(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
  };
  Impl* d = this;
  cluster_mirror = std::make_unique<nlm::ClusterLockMirror>(
      [d, handle_of](const std::string& file, uint64_t owner, uint64_t first, uint64_t last,
                     short type) -> absl::StatusOr<bool> {
        if (!d->ceph) return true;
        // A lock the cluster grants after the caller was answered (timeout)
        // is released again: NLM told its client it did not get it.
        struct Outcome {
          std::atomic<int> state{0};  // 0 running, 1 answered, 2 caller gone
          absl::StatusOr<bool> granted = false;
        };
        auto out = std::make_shared<Outcome>();
        absl::Status st =
            d->ceph_calls->Run([d, fh = handle_of(file), owner, first, last, type, out] {
              out->granted = d->ceph->SetLock(fh, owner, first, last, type);
              int running = 0;
              if (!out->state.compare_exchange_strong(running, 1) && type != F_UNLCK &&
                  out->granted.ok() && *out->granted) {
                (void)d->ceph->SetLock(fh, owner, first, last, F_UNLCK);
              }
              return absl::OkStatus();
            });
        int running = 0;
        if (!st.ok() && out->state.compare_exchange_strong(running, 2)) return st;
        return out->granted;
      },
      [d, handle_of](
          const std::string& file, uint64_t owner, uint64_t first, uint64_t last,
          bool exclusive) -> absl::StatusOr<std::optional<nlm::ClusterLockMirror::Held>> {
        if (!d->ceph) return std::optional<nlm::ClusterLockMirror::Held>();
        using Held = absl::StatusOr<std::optional<vfs::ClusterBackend::HeldLock>>;
        auto out = std::make_shared<Held>(std::nullopt);
        absl::Status st =
            d->ceph_calls->Run([d, fh = handle_of(file), owner, first, last, exclusive, out] {
              *out = d->ceph->TestLock(fh, owner, first, last, exclusive);
              return absl::OkStatus();
            });
        if (!st.ok()) return st;
        const Held& held = *out;
        if (!held.ok()) return held.status();
        if (!*held) return std::optional<nlm::ClusterLockMirror::Held>();
        return std::optional<nlm::ClusterLockMirror::Held>(nlm::ClusterLockMirror::Held{
            (*held)->first, (*held)->last, (*held)->exclusive, (*held)->pid});
      });
  split_mirror = std::make_unique<nlm::SplitLockMirror>(
      [handle_of](const std::string& file) {
        return vfs::PeekHandleType(handle_of(file)) == vfs::kCephHandleType;
      },
      cluster_mirror.get(), lock_mirror.get());
}

}  // namespace nfs3d::daemon
