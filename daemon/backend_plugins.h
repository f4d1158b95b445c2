// Finding and loading the optional backends' plugins (vfs/backend_plugin.h):
// which export option needs which plugin file, which Debian package ships
// it, and the one place nfs3d calls dlopen. The nfs3d of a build tree loads
// that tree's plugins; an installed nfs3d those in NFS3D_PLUGIN_DIR.
#ifndef NFS3D_DAEMON_BACKEND_PLUGINS_H_
#define NFS3D_DAEMON_BACKEND_PLUGINS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "conf/exports.h"
#include "vfs/backend_plugin.h"

namespace nfs3d::daemon {

// Plugins come from `dir` from now on ([paths] plugin_dir); "" keeps the
// default: where they were installed, or this build tree's for its nfs3d.
void UsePluginDir(const std::string& dir);

// Loads the plugin `name` once (later calls return the same one), which
// then sets up the process as its backend needs (prepare_process). Errors
// name the file looked for and the package that installs it, e.g.
// "cephfs= exports need the CephFS plugin .../backend-cephfs.so: install the
// nfs3d-ceph package", or say why the file was refused.
absl::StatusOr<const vfs::BackendPlugin*> LoadBackendPlugin(absl::string_view name);

// Loads the plugins every export of `table` needs, and the CephFS one for a
// head whose exports are kept in CephFS ([cluster] shared_exports); the
// first error names the export.
absl::Status LoadPluginsFor(const conf::ExportTable& table, bool shared_exports);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_BACKEND_PLUGINS_H_
