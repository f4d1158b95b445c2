// The interface between nfs3d and an optional backend built as a plugin: a
// shared object (e.g. backend-cephfs.so, Debian package nfs3d-ceph) that
// nfs3d loads with dlopen when an export needs it, so nfs3d itself neither
// links nor needs the backend's libraries (libcephfs) and is compiled the
// same way whether they are installed or not.
//
// The plugin exports one C symbol, kBackendPluginEntry, a function that
// takes what nfs3d gives it (BackendPluginHost) and returns what it offers
// (BackendPlugin). Both sides are C++ built from the same source tree by
// the same compiler, so the structures hold C++ types; `abi` and `version`
// must match exactly, which a plugin from another build of nfs3d does not.
// Everything else in the plugin is local to it (its version script): its
// copies of nfs3d's libraries and of Boost.Asio never interpose on the
// executable's or on those of the libraries it loads.
#ifndef NFS3D_VFS_BACKEND_PLUGIN_H_
#define NFS3D_VFS_BACKEND_PLUGIN_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

#include "common/log_forward.h"
#include "vfs/cluster_backend.h"

namespace nfs3d::vfs {

// Changes whenever a structure below or ClusterBackend changes.
inline constexpr uint32_t kBackendPluginAbi = 1;
inline constexpr char kBackendPluginEntry[] = "nfs3d_backend_plugin_v1";

// What nfs3d gives a plugin.
struct BackendPluginHost {
  uint32_t abi = kBackendPluginAbi;
  const char* version = "";  // nfs3d's version (common/version.h)
  // The process's logger (common/log.h): the plugin's lines go there.
  const log::Forward* log = nullptr;
};

// What a plugin offers.
struct BackendPlugin {
  uint32_t abi = kBackendPluginAbi;
  const char* version = "";  // the nfs3d version it was built with
  const char* name = "";     // the export option that selects it, e.g. "cephfs"
  // Process-wide settings the backend needs, before nfs3d starts threads
  // (e.g. malloc's); may be null.
  void (*prepare_process)() = nullptr;
  // Connects to the cluster ClusterBackendOptions names.
  absl::StatusOr<std::unique_ptr<ClusterBackend>> (*create)(const ClusterBackendOptions&) = nullptr;
};

// The entry point's type: null when the host is not one the plugin serves.
using BackendPluginEntry = const BackendPlugin* (*)(const BackendPluginHost* host);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_BACKEND_PLUGIN_H_
