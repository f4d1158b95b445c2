#include "daemon/backend_plugins.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#include "common/version.h"

namespace nfs3d::daemon {
namespace {

struct KnownPlugin {
  absl::string_view name;     // the export option
  absl::string_view file;     // in the plugin directory
  absl::string_view package;  // the Debian package that installs it
  absl::string_view what;     // for messages
};
constexpr KnownPlugin kKnownPlugins[] = {
    {"cephfs", "backend-cephfs.so", "nfs3d-ceph", "the CephFS plugin"},
};

const KnownPlugin* Known(absl::string_view name) {
  for (const KnownPlugin& p : kKnownPlugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// This build tree's plugins for this build tree's nfs3d, else the installed
// ones: a copy of the binary elsewhere (cmake --install, the package) must
// not load plugins from a build tree.
absl::Mutex g_mu;
std::string g_dir ABSL_GUARDED_BY(g_mu);  // [paths] plugin_dir
std::map<std::string, const vfs::BackendPlugin*, std::less<>> g_loaded ABSL_GUARDED_BY(g_mu);

std::string PluginDir() ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_mu) {
  if (!g_dir.empty()) return g_dir;
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0 && absl::string_view(exe, n) == NFS3D_BUILD_BINARY) return NFS3D_BUILD_PLUGIN_DIR;
  return NFS3D_PLUGIN_DIR;
}

// The plugin an export needs ("cephfs"), or "" when the core serves it.
absl::string_view PluginOf(const conf::Export& exp) { return exp.cephfs_path ? "cephfs" : ""; }

const log::Forward kLogForward = {log::GetLevel, log::Write};

absl::StatusOr<const vfs::BackendPlugin*> Open(const KnownPlugin& known)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_mu) {
  const std::string dir = PluginDir();
  const std::string path = absl::StrCat(dir, "/", known.file);
  if (access(path.c_str(), F_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        known.name, "= exports need ", known.what, " ", path,
        dir == NFS3D_BUILD_PLUGIN_DIR ? ", which this build tree did not build: "
                                      : ", which is not installed: ",
        "install the ", known.package, " package",
        dir == NFS3D_BUILD_PLUGIN_DIR ? " (or its build dependencies, and build again)" : ""));
  }
  // RTLD_LOCAL: its symbols serve itself only; RTLD_NOW: a missing library
  // or symbol is an error here, not a crash at the first call.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(known.what, " ", path, " cannot be loaded (",
                                                      dlerror(), "): reinstall the ", known.package,
                                                      " package"));
  }
  auto entry = reinterpret_cast<vfs::BackendPluginEntry>(dlsym(handle, vfs::kBackendPluginEntry));
  vfs::BackendPluginHost host;
  host.version = kVersion;
  host.log = &kLogForward;
  const vfs::BackendPlugin* plugin = entry != nullptr ? entry(&host) : nullptr;
  if (plugin == nullptr || plugin->abi != vfs::kBackendPluginAbi ||
      absl::string_view(plugin->version) != kVersion || plugin->name != known.name ||
      plugin->create == nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat(known.what, " ", path, " is not the one of nfs3d ", kVersion, ": install the ",
                     known.package, " package of the same version as nfs3d"));
  }
  if (plugin->prepare_process != nullptr) plugin->prepare_process();
  return plugin;  // stays loaded for the life of the process
}

}  // namespace

void UsePluginDir(const std::string& dir) {
  absl::MutexLock lock(&g_mu);
  g_dir = dir;
}

absl::StatusOr<const vfs::BackendPlugin*> LoadBackendPlugin(absl::string_view name) {
  const KnownPlugin* known = Known(name);
  if (known == nullptr) return absl::NotFoundError(absl::StrCat("no backend plugin ", name));
  absl::MutexLock lock(&g_mu);
  if (auto it = g_loaded.find(name); it != g_loaded.end()) return it->second;
  absl::StatusOr<const vfs::BackendPlugin*> plugin = Open(*known);
  if (plugin.ok()) g_loaded.emplace(std::string(name), *plugin);
  return plugin;
}

absl::Status LoadPluginsFor(const conf::ExportTable& table, bool shared_exports) {
  if (shared_exports) {
    if (absl::StatusOr<const vfs::BackendPlugin*> p = LoadBackendPlugin("cephfs"); !p.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("[cluster] shared_exports: ", p.status().message()));
    }
  }
  for (const conf::Export& exp : table.exports) {
    if (absl::string_view name = PluginOf(exp); !name.empty()) {
      absl::StatusOr<const vfs::BackendPlugin*> plugin = LoadBackendPlugin(name);
      if (!plugin.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat("export ", exp.path, ": ", plugin.status().message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace nfs3d::daemon
