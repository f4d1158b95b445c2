// CephfsBackend's lifecycle: connecting and mounting (with the session of
// a previous instance ended first), replacing a session the cluster ended,
// exports, and the [cluster] state the heads share.
#include "vfs/cephfs/cephfs_backend.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

#include "common/log.h"
#include "vfs/cephfs/cephfs_impl.h"
#include "vfs/cephfs/malloc_settings.h"
#include "vfs/cephfs/shared_handle_key.h"
#include "vfs/siphash.h"

namespace nfs3d::vfs {

namespace {

// A libcephfs handle configured from options and connected to the monitors
// (ceph_init); errors name the step that failed.
absl::StatusOr<ceph_mount_info*> Connect(const CephfsOptions& options, const std::string& cluster) {
  auto fail = [&](int rc, std::string_view step) {
    return absl::UnavailableError(absl::StrCat(cluster, ": ", std::string(step), " failed: ",
                                               std::string(std::strerror(rc < 0 ? -rc : rc))));
  };
  ceph_mount_info* cm = nullptr;
  int rc = ceph_create(&cm, options.client_id.empty() ? nullptr : options.client_id.c_str());
  if (rc < 0) return fail(rc, "ceph_create");
  auto bail = [&](int rc, std::string_view step) {
    ceph_release(cm);
    return fail(rc, step);
  };
  rc = ceph_conf_read_file(cm, options.conf_path.empty() ? nullptr : options.conf_path.c_str());
  if (rc < 0) return bail(rc, "reading ceph.conf");
  if (!options.keyring.empty()) {
    rc = ceph_conf_set(cm, "keyring", options.keyring.c_str());
    if (rc < 0) return bail(rc, "setting keyring");
  }
  const std::string timeout = std::to_string(options.timeout_seconds);
  for (const char* opt : {"client_mount_timeout", "rados_mon_op_timeout", "rados_osd_op_timeout"}) {
    rc = ceph_conf_set(cm, opt, timeout.c_str());
    if (rc < 0) return bail(rc, absl::StrCat("setting ", opt));
  }
  // POSIX ACLs, as on a POSIX export: libcephfs then checks and inherits them.
  rc = ceph_conf_set(cm, "client_acl_type", "posix_acl");
  if (rc < 0) return bail(rc, "setting client_acl_type");
  // Modes come from the NFS client, which applied its umask already.
  ceph_umask(cm, 0);
  rc = ceph_init(cm);
  if (rc < 0) return bail(rc, "connecting to the monitors (ceph_init)");
  if (!options.fs_name.empty()) {
    rc = ceph_select_filesystem(cm, options.fs_name.c_str());
    if (rc < 0) {
      ceph_shutdown(cm);
      return fail(rc, "selecting the file system");
    }
  }
  return cm;
}

// This head's CephFS session id: the same after a restart (host name, state
// directory and its secret), another for every other head, also for heads
// that share the handle key.
std::string SessionUuid(const HandleSecret& secret, const std::string& state_dir) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  SipKey key;
  std::memcpy(key.data(), secret.data(), key.size());
  const std::string label = absl::StrCat("nfs3d cephfs session ", state_dir);
  const uint64_t id =
      SipHash24(key, {reinterpret_cast<const uint8_t*>(label.data()), label.size()});
  return absl::StrCat("nfs3d-", host, "-", absl::Hex(id, absl::kZeroPad16));
}

// A new mount with session id uuid, after ending the session an earlier
// instance with that id left behind.
absl::StatusOr<ceph_mount_info*> OpenSession(const CephfsOptions& options,
                                             const std::string& cluster, const std::string& uuid) {
  // End the session an earlier instance of this head left behind: after a
  // crash the MDS would keep its capabilities until the session times out,
  // and calls on the files it had open would wait that long.
  absl::StatusOr<ceph_mount_info*> reclaimer = Connect(options, cluster);
  if (!reclaimer.ok()) return reclaimer.status();
  int rc = ceph_start_reclaim(*reclaimer, uuid.c_str(), CEPH_RECLAIM_RESET);
  if (rc == 0) {
    ceph_finish_reclaim(*reclaimer);
    NFS3D_LOG_INFO("%s: ended the session of the previous instance (%s)", cluster.c_str(),
                   uuid.c_str());
  } else if (rc != -ENOENT) {
    NFS3D_LOG_WARNING("%s: could not end the previous instance's session: %s", cluster.c_str(),
                      std::strerror(-rc));
  }
  ceph_shutdown(*reclaimer);

  absl::StatusOr<ceph_mount_info*> cm = Connect(options, cluster);
  if (!cm.ok()) return cm.status();
  ceph_set_uuid(*cm, uuid.c_str());
  rc = ceph_mount(*cm, "/");
  if (rc < 0) {
    ceph_shutdown(*cm);
    return absl::UnavailableError(absl::StrCat(
        cluster,
        ": mounting the file system (ceph_mount) failed: ", std::string(std::strerror(-rc))));
  }
  return *cm;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CephfsBackend>> CephfsBackend::Create(const CephfsOptions& options) {
  const std::string cluster = absl::StrCat(
      "ceph cluster ", options.conf_path.empty() ? "(default ceph.conf)" : options.conf_path,
      " as client.", options.client_id.empty() ? "admin" : options.client_id, ", file system ",
      options.fs_name.empty() ? "(default)" : options.fs_name);
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(options.state_dir);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<HandleSecret> secret = (*dir)->LoadOrCreateSecret();
  if (!secret.ok()) return secret.status();
  KeepWriteBuffersInMallocArenas();
  const bool clustered = !options.node_id.empty();
  const std::string uuid = clustered
                               ? absl::StrCat("nfs3d-", options.cluster_name, "-", options.node_id)
                               : SessionUuid(*secret, options.state_dir);

  absl::StatusOr<ceph_mount_info*> cm = OpenSession(options, cluster, uuid);
  if (!cm.ok()) return cm.status();
  if (clustered) {
    secret = LoadOrCreateSharedHandleKey(*cm, options.shared_dir, options.node_id, cluster);
    if (!secret.ok()) {
      ceph_unmount(*cm);
      ceph_shutdown(*cm);
      return secret.status();
    }
    NFS3D_LOG_INFO("%s: node %s of cluster %s, handle key from %s/handle.key", cluster.c_str(),
                   options.node_id.c_str(), options.cluster_name.c_str(),
                   options.shared_dir.c_str());
  }
  std::unique_ptr<CephfsBackend> backend(new CephfsBackend());
  {
    absl::MutexLock lock(&backend->impl_mu_);
    backend->impl_ = std::make_shared<Impl>(*cm, *secret, cluster);
  }
  backend->cluster_ = cluster;
  backend->options_ = options;
  backend->uuid_ = uuid;
  backend->secret_ = *secret;
  if (clustered) {
    backend->node_id_ = options.node_id;
    backend->shared_dir_ = options.shared_dir;
  }
  if (options.session_check_seconds > 0) {
    CephfsBackend* b = backend.get();
    backend->watch_ = std::make_unique<SessionWatch>(
        absl::Seconds(options.session_check_seconds),
        [b] { return b->CurrentImpl()->ProbeSession(); }, [b] { return b->ReplaceSession(); });
  }
  return backend;
}

absl::Status CephfsBackend::ReplaceSession() {
  const std::shared_ptr<Impl> old = CurrentImpl();
  absl::StatusOr<ceph_mount_info*> cm = OpenSession(options_, cluster_, uuid_);
  if (!cm.ok()) return cm.status();
  auto fresh = std::make_shared<Impl>(*cm, secret_, cluster_);
  for (const auto& [id, path, fsid] : old->ExportList()) {
    absl::Status added = fresh->AddExport(id, path, fsid);
    if (!added.ok()) return added;
  }
  old->MarkDead();
  {
    absl::MutexLock lock(&impl_mu_);
    retired_.push_back(old);  // calls may still hold it, files may use its mount
    impl_ = std::move(fresh);
  }
  NFS3D_LOG_WARNING("%s: the cluster ended this head's session (evicted); serving from a new one",
                    cluster_.c_str());
  return absl::OkStatus();
}

uint64_t CephfsBackend::session_id() const { return ceph_get_instance_id(CurrentImpl()->cm()); }

CephfsBackend::~CephfsBackend() { watch_.reset(); }

std::shared_ptr<CephfsBackend::Impl> CephfsBackend::CurrentImpl() const {
  absl::MutexLock lock(&impl_mu_);
  return impl_;
}

absl::Status CephfsBackend::AddExport(uint32_t export_id, const std::string& path, uint64_t fsid) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  return impl->AddExport(export_id, path, fsid);
}

absl::StatusOr<FileHandle> CephfsBackend::RootHandle(uint32_t export_id) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  absl::StatusOr<Impl::Node> root = impl->Root(export_id);
  if (!root.ok()) return root.status();
  return root->handle;
}

absl::StatusOr<uint32_t> CephfsBackend::ExportOf(const FileHandle& fh) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  auto decoded = impl->Decode(fh);
  if (!decoded.ok()) return decoded.status();
  return std::get<0>(*decoded)->id;
}

const std::string& CephfsBackend::cluster() const { return cluster_; }

absl::StatusOr<std::unique_ptr<DurableFiles>> CephfsBackend::SharedFiles(CephCallRunner run) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  if (node_id_.empty()) return absl::FailedPreconditionError("not a [cluster] head");
  // Retired mounts live as long as this backend, so a mount handed out stays valid.
  return OpenCephFiles([this] { return CurrentImpl()->cm(); }, shared_dir_, impl->cluster(),
                       std::move(run));
}

}  // namespace nfs3d::vfs
