#include "daemon/check_exports.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "daemon/backend_plugins.h"
#include "daemon/daemon_settings.h"
#include "vfs/mount_point.h"
#include "vfs/vfs_error.h"

namespace nfs3d::daemon {
namespace {

std::string ClientName(const conf::ExportClient& c) {
  return c.kind == conf::ExportClient::Kind::kAnyone ? "<world>" : c.spec;
}

// The remark for an export with `mountpoint`, or "" when it will be served.
std::string MountPointRemark(const conf::Export& exp) {
  for (const conf::ExportClient& c : exp.clients) {
    if (!c.options.mountpoint) continue;
    std::string mp = c.options.mountpoint->empty() ? exp.path : *c.options.mountpoint;
    absl::StatusOr<bool> is_mp = vfs::IsMountPoint(mp);
    if (is_mp.ok() && *is_mp) return "";
    return absl::StrCat(exp.path, ": mountpoint: ", mp,
                        is_mp.ok()
                            ? " is not a mount point now"
                            : absl::StrCat(": ", std::strerror(vfs::ErrnoOf(is_mp.status()))),
                        "; MNT is refused until a file system is mounted there");
  }
  return "";
}

}  // namespace

std::string DescribeExportTable(const conf::ExportTable& table) {
  std::string out;
  for (const conf::Export& exp : table.exports) {
    for (const conf::ExportClient& c : exp.clients) {
      absl::StrAppendFormat(&out, "%-20s %s(%s)\n", exp.path, ClientName(c),
                            conf::DescribeOptions(c.options));
    }
  }
  for (const std::string& w : table.warnings) absl::StrAppend(&out, "note: ", w, "\n");
  for (const conf::Export& exp : table.exports) {
    if (std::string remark = MountPointRemark(exp); !remark.empty()) {
      absl::StrAppend(&out, "note: ", remark, "\n");
    }
  }
  return out;
}

int CheckExports(const std::string& path, const conf::ServerConfig& config, std::FILE* out) {
  absl::StatusOr<conf::ExportTable> table = conf::LoadExports(path);
  if (!table.ok()) {
    std::fprintf(out, "nfs3d: %s\n", std::string(table.status().message()).c_str());
    return 1;
  }
  std::string text = DescribeExportTable(*table);
  std::fwrite(text.data(), 1, text.size(), out);
  // nfs3d refuses to start without the plugins its exports need.
  if (absl::Status plugins = LoadPluginsFor(*table, /*shared_exports=*/false); !plugins.ok()) {
    std::fprintf(out, "nfs3d: %s\n", std::string(plugins.message()).c_str());
    return 1;
  }
  // nfs3d refuses to start when an export asks for TLS that [tls] cannot give.
  if (std::string problem = TlsConfigProblem(*table, config); !problem.empty()) {
    std::fprintf(out, "nfs3d: %s\n", problem.c_str());
    return 1;
  }
  std::fprintf(out, "%s: %zu export%s, valid\n", path.c_str(), table->exports.size(),
               table->exports.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace nfs3d::daemon
