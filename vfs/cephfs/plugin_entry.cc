// The CephFS backend as a plugin (vfs/backend_plugin.h): the one symbol
// backend-cephfs.so exports.
#include "common/version.h"
#include "vfs/backend_plugin.h"
#include "vfs/cephfs/cephfs_backend.h"
#include "vfs/cephfs/malloc_settings.h"

namespace nfs3d::vfs {
namespace {

absl::StatusOr<std::unique_ptr<ClusterBackend>> CreateCephfs(const ClusterBackendOptions& options) {
  absl::StatusOr<std::unique_ptr<CephfsBackend>> backend = CephfsBackend::Create(options);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<ClusterBackend>(std::move(*backend));
}

BackendPlugin MakePlugin() {
  BackendPlugin plugin;
  plugin.version = kVersion;
  plugin.name = "cephfs";
  plugin.prepare_process = KeepWriteBuffersInMallocArenas;
  plugin.create = CreateCephfs;
  return plugin;
}

}  // namespace
}  // namespace nfs3d::vfs

extern "C" const nfs3d::vfs::BackendPlugin* nfs3d_backend_plugin_v1(
    const nfs3d::vfs::BackendPluginHost* host) {
  using nfs3d::vfs::BackendPlugin;
  if (host == nullptr || host->abi != nfs3d::vfs::kBackendPluginAbi ||
      std::string_view(host->version) != nfs3d::kVersion) {
    return nullptr;
  }
  if (host->log != nullptr) nfs3d::log::ForwardTo(host->log);
  static const BackendPlugin plugin = nfs3d::vfs::MakePlugin();
  return &plugin;
}
