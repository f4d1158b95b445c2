// CephfsBackend's lifecycle: connecting and mounting (with the session of
// a previous instance ended first), replacing a session the cluster ended,
// exports, and the [cluster] state the heads share.
#include "vfs/cephfs/cephfs_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

#include "common/log.h"
#include "vfs/backend_helpers.h"
#include "vfs/cephfs/cephfs_impl.h"
#include "vfs/cephfs/malloc_settings.h"
#include "vfs/cephfs/object_cache_settings.h"
#include "vfs/cephfs/shared_handle_key.h"
#include "vfs/cephfs/stall_report.h"
#include "vfs/siphash.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

namespace {

// In the state directory: which set of session ids the serving instance
// uses ("a" or "b").
constexpr char kSessionFile[] = "cephfs-session";

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
  for (const auto& [name, value] : ObjectCacheSettings(options.cache_bytes)) {
    rc = ceph_conf_set(cm, name.c_str(), value.c_str());
    if (rc < 0) return bail(rc, absl::StrCat("setting ", name));
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

// Logs while a call waiting for the MDS (`what`) has not returned: first
// after the [ceph] timeout, then every minute (or timeout, if longer).
StallReport ReportStall(const CephfsOptions& options, const std::string& cluster,
                        std::string what) {
  const absl::Duration timeout = absl::Seconds(options.timeout_seconds);
  return StallReport(cluster, std::move(what), timeout, std::max(timeout, absl::Minutes(1)));
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

// Ends the session with id uuid that an earlier instance of this head left
// behind: after a crash the MDS would keep its capabilities until the
// session times out, and calls on the files it had open would wait that long.
absl::Status EndSession(const CephfsOptions& options, const std::string& cluster,
                        const std::string& uuid) {
  absl::StatusOr<ceph_mount_info*> reclaimer = Connect(options, cluster);
  if (!reclaimer.ok()) return reclaimer.status();
  int rc;
  {
    StallReport stall = ReportStall(options, cluster,
                                    absl::StrCat("ending the previous instance's session ", uuid));
    rc = ceph_start_reclaim(*reclaimer, uuid.c_str(), CEPH_RECLAIM_RESET);
    if (rc == 0) ceph_finish_reclaim(*reclaimer);
  }
  if (rc == 0) {
    NFS3D_LOG_INFO("%s: ended the session of the previous instance (%s)", cluster.c_str(),
                   uuid.c_str());
  } else if (rc != -ENOENT) {
    NFS3D_LOG_WARNING("%s: could not end the previous instance's session: %s", cluster.c_str(),
                      std::strerror(-rc));
  }
  ceph_shutdown(*reclaimer);
  return absl::OkStatus();
}

// A new mount of directory root with session id uuid, after ending the
// sessions `end_first`.
absl::StatusOr<ceph_mount_info*> OpenSession(const CephfsOptions& options,
                                             const std::string& cluster, const std::string& uuid,
                                             const std::string& root,
                                             const std::vector<std::string>& end_first) {
  for (const std::string& id : end_first) {
    if (absl::Status s = EndSession(options, cluster, id); !s.ok()) return s;
  }
  absl::StatusOr<ceph_mount_info*> cm = Connect(options, cluster);
  if (!cm.ok()) return cm.status();
  ceph_set_uuid(*cm, uuid.c_str());
  int rc;
  {
    StallReport stall = ReportStall(
        options, cluster, absl::StrCat("opening session ", uuid, " (mounting ", root, ")"));
    rc = ceph_mount(*cm, root.c_str());
  }
  if (rc < 0) {
    ceph_shutdown(*cm);
    std::string hint;
    if (rc == -EACCES || rc == -EPERM) {
      hint = absl::StrCat(" (do the cephx user's caps allow path=", root, "?)");
    } else if (rc == -ENOENT) {
      hint = absl::StrCat(" (no directory ", root, ")");
    }
    return absl::UnavailableError(
        absl::StrCat(cluster, ": mounting ", root,
                     " (ceph_mount) failed: ", std::string(std::strerror(-rc)), hint));
  }
  return *cm;
}

// options with the cephx user of a mount (its empty fields: the options').
CephfsOptions WithUser(CephfsOptions options, const CephUser& user) {
  if (!user.client_id.empty()) options.client_id = user.client_id;
  if (!user.keyring.empty()) options.keyring = user.keyring;
  return options;
}

// Names the cluster, user and file system, for messages.
std::string ClusterName(const CephfsOptions& options) {
  return absl::StrCat("ceph cluster ",
                      options.conf_path.empty() ? "(default ceph.conf)" : options.conf_path,
                      " as client.", options.client_id.empty() ? "admin" : options.client_id,
                      ", file system ", options.fs_name.empty() ? "(default)" : options.fs_name);
}

// The part of a session id that names a mount: "" for the backend's own
// (the root as the [ceph] user), "-export-<id>" for an export's own mount.
std::string ExportMountPart(uint32_t export_id) { return absl::StrCat("-export-", export_id); }
absl::StatusOr<std::string> MountPart(CephfsBackend::Impl& mount) {
  const CephfsBackend::Impl::MountSpec& spec = mount.spec();
  if (spec.root == "/" && spec.user.client_id.empty()) return std::string();
  const std::vector<std::tuple<uint32_t, std::string, uint64_t>> exports = mount.ExportList();
  if (exports.empty()) return absl::InternalError("a mount without exports");
  return ExportMountPart(std::get<0>(exports.front()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CephfsBackend>> CephfsBackend::Create(const CephfsOptions& options) {
  const std::string cluster = ClusterName(options);
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(options.state_dir);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<HandleSecret> secret = (*dir)->LoadOrCreateSecret();
  if (!secret.ok()) return secret.status();
  KeepWriteBuffersInMallocArenas();
  const bool clustered = !options.node_id.empty();
  std::unique_ptr<CephfsBackend> backend(new CephfsBackend());
  backend->uuid_ = clustered ? absl::StrCat("nfs3d-", options.cluster_name, "-", options.node_id)
                             : SessionUuid(*secret, options.state_dir);
  backend->beside_running_ = options.beside_running_instance;
  backend->second_set_ = false;
  if (options.beside_running_instance) {
    absl::StatusOr<std::optional<std::string>> in_use = (*dir)->ReadFile(kSessionFile);
    backend->second_set_ = !in_use.ok() || !in_use->has_value() || **in_use != "b\n";
  }

  absl::StatusOr<ceph_mount_info*> cm =
      OpenSession(options, cluster, backend->SessionId(""), "/", backend->SessionIdsToEnd(""));
  if (!cm.ok()) return cm.status();
  if (clustered && options.after_ending_previous_session && !options.beside_running_instance) {
    // First thing on the new session (the previous one's capabilities are
    // gone, so nothing waits for them): the window in which another head
    // could grant a lock the previous instance's clients must reclaim is
    // the span of this call, not the rest of the start.
    ceph_mount_info* mount = *cm;
    absl::StatusOr<std::unique_ptr<DurableFiles>> files =
        OpenCephFiles([mount] { return mount; }, options.shared_dir, cluster,
                      [](const std::function<absl::Status()>& call) { return call(); });
    if (files.ok()) options.after_ending_previous_session(**files);
    if (!files.ok()) NFS3D_LOG_WARNING("%s", files.status().ToString());
  }
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
  backend->verifier_.store(RandomU64());
  backend->codec_ = std::make_unique<HandleCodec>(*secret);
  {
    absl::MutexLock lock(&backend->impl_mu_);
    backend->impl_ =
        std::make_shared<Impl>(*cm, *secret, cluster, Impl::MountSpec{}, &backend->verifier_);
  }
  backend->cluster_ = cluster;
  backend->options_ = options;
  backend->secret_ = *secret;
  if (clustered) {
    backend->node_id_ = options.node_id;
    backend->shared_dir_ = options.shared_dir;
  }
  if (!options.beside_running_instance) {
    if (absl::Status s = backend->RecordSessionInUse(); !s.ok()) return s;
  }
  if (options.session_check_seconds > 0) {
    CephfsBackend* b = backend.get();
    backend->watch_ = std::make_unique<SessionWatch>(
        absl::Seconds(options.session_check_seconds), [b] { return b->ProbeSessions(); },
        [b] { return b->ReplaceSession(); });
  }
  return backend;
}

// A new mount like old, with its exports. Its session id: the backend's
// for the backend's own mount, one per export for the others.
absl::StatusOr<std::shared_ptr<CephfsBackend::Impl>> CephfsBackend::Reopen(Impl& old) {
  const Impl::MountSpec& spec = old.spec();
  const std::vector<std::tuple<uint32_t, std::string, uint64_t>> exports = old.ExportList();
  absl::StatusOr<std::string> mount = MountPart(old);
  if (!mount.ok()) return mount.status();
  const CephfsOptions options = WithUser(options_, spec.user);
  // The cluster ended this session: end it on the MDS too before a new one.
  const std::string uuid = SessionId(*mount);
  absl::StatusOr<ceph_mount_info*> cm =
      OpenSession(options, old.cluster(), uuid, spec.root, {uuid});
  if (!cm.ok()) return cm.status();
  auto fresh = std::make_shared<Impl>(*cm, secret_, old.cluster(), spec, &verifier_);
  for (const auto& [id, path, fsid] : exports) {
    absl::Status added = fresh->AddExport(id, path, fsid);
    if (!added.ok()) return added;
  }
  return fresh;
}

absl::Status CephfsBackend::ReplaceSession() {
  for (const std::shared_ptr<Impl>& old : AllMounts()) {
    if (!CephSessionLost(old->ProbeSession())) continue;
    absl::StatusOr<std::shared_ptr<Impl>> fresh = Reopen(*old);
    if (!fresh.ok()) return fresh.status();
    old->MarkDead();
    {
      absl::MutexLock lock(&impl_mu_);
      retired_.push_back(old);  // calls may still hold it, files may use its mount
      if (impl_ == old) impl_ = *fresh;
      for (auto& [id, mount] : export_mounts_) {
        if (mount == old) mount = *fresh;
      }
    }
    // What the ended session had not written is lost: clients resend.
    (*fresh)->RotateVerifier("session replaced");
    NFS3D_LOG_WARNING("%s: the cluster ended this head's session (evicted); serving from a new one",
                      old->cluster().c_str());
  }
  return absl::OkStatus();
}

int CephfsBackend::ProbeSessions() {
  for (const std::shared_ptr<Impl>& mount : AllMounts()) {
    const int rc = mount->ProbeSession();
    if (CephSessionLost(rc)) return rc;
  }
  return 0;
}

uint64_t CephfsBackend::session_id() const { return ceph_get_instance_id(CurrentImpl()->cm()); }

std::string CephfsBackend::SessionId(const std::string& mount, bool other) const {
  return absl::StrCat(uuid_, second_set_ != other ? "-b" : "", mount);
}

std::vector<std::string> CephfsBackend::SessionIdsToEnd(const std::string& mount) const {
  // Its own id may be left from an instance long gone; the other set is the
  // running instance's, if there is one.
  std::vector<std::string> ids = {SessionId(mount)};
  if (!beside_running_) ids.push_back(SessionId(mount, /*other=*/true));
  return ids;
}

absl::Status CephfsBackend::RecordSessionInUse() {
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(options_.state_dir);
  if (!dir.ok()) return dir.status();
  return (*dir)->WriteFileAtomic(kSessionFile, second_set_ ? "b\n" : "a\n");
}

void CephfsBackend::EndPredecessorSessions() {
  for (const std::shared_ptr<Impl>& mount : AllMounts()) {
    absl::StatusOr<std::string> part = MountPart(*mount);
    if (!part.ok()) continue;
    (void)EndSession(WithUser(options_, mount->spec().user), mount->cluster(),
                     SessionId(*part, /*other=*/true));
  }
}

CephfsBackend::~CephfsBackend() { watch_.reset(); }

std::shared_ptr<CephfsBackend::Impl> CephfsBackend::CurrentImpl() const {
  absl::MutexLock lock(&impl_mu_);
  return impl_;
}

std::shared_ptr<CephfsBackend::Impl> CephfsBackend::ImplForExport(uint32_t export_id) const {
  absl::MutexLock lock(&impl_mu_);
  auto it = export_mounts_.find(export_id);
  return it == export_mounts_.end() ? impl_ : it->second;
}

std::shared_ptr<CephfsBackend::Impl> CephfsBackend::ImplFor(const FileHandle& fh) const {
  absl::StatusOr<DecodedHandle> decoded = codec_->Decode(fh);
  return ImplForExport(decoded.ok() ? decoded->export_id : 0);
}

std::vector<std::shared_ptr<CephfsBackend::Impl>> CephfsBackend::AllMounts() const {
  absl::MutexLock lock(&impl_mu_);
  std::vector<std::shared_ptr<Impl>> all{impl_};
  for (const auto& [id, mount] : export_mounts_) all.push_back(mount);
  return all;
}

absl::Status CephfsBackend::AddExport(uint32_t export_id, const std::string& path, uint64_t fsid,
                                      const CephUser& user) {
  if (path == "/" && user.client_id.empty() && user.keyring.empty()) {
    return CurrentImpl()->AddExport(export_id, path, fsid);
  }
  {
    absl::MutexLock lock(&impl_mu_);
    if (export_mounts_.count(export_id)) {
      return ErrnoError(EEXIST, absl::StrCat("export id ", export_id, " taken"));
    }
  }
  // A mount of its own, rooted at the exported directory: its root's ".."
  // is itself, and the MDS checks this user's caps on everything it reaches.
  const CephfsOptions options = WithUser(options_, user);
  const std::string cluster = ClusterName(options);
  const std::string mount_id = ExportMountPart(export_id);
  absl::StatusOr<ceph_mount_info*> cm =
      OpenSession(options, cluster, SessionId(mount_id), path, SessionIdsToEnd(mount_id));
  if (!cm.ok()) return cm.status();
  auto mount =
      std::make_shared<Impl>(*cm, secret_, cluster, Impl::MountSpec{path, user}, &verifier_);
  absl::Status added = mount->AddExport(export_id, "/", fsid);
  if (!added.ok()) return added;
  NFS3D_LOG_INFO("%s: export %u mounts %s", cluster.c_str(), export_id, path.c_str());
  absl::MutexLock lock(&impl_mu_);
  export_mounts_[export_id] = std::move(mount);
  return absl::OkStatus();
}

absl::StatusOr<FileHandle> CephfsBackend::RootHandle(uint32_t export_id) {
  const std::shared_ptr<Impl> impl = ImplForExport(export_id);
  absl::StatusOr<Impl::Node> root = impl->Root(export_id);
  if (!root.ok()) return root.status();
  return root->handle;
}

absl::StatusOr<uint32_t> CephfsBackend::ExportOf(const FileHandle& fh) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
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
