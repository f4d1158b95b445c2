// `nfs3d --check-exports FILE`: parses an exports file as the daemon would
// and prints how each line is understood, one client per line with every
// option spelled out (like `exportfs -v`), then the remarks the daemon would
// log (options without effect on NFSv3, flavors not served, `mountpoint`
// exports that are not mount points right now).
#ifndef NFS3D_DAEMON_CHECK_EXPORTS_H_
#define NFS3D_DAEMON_CHECK_EXPORTS_H_

#include <cstdio>
#include <string>

#include "conf/exports.h"
#include "conf/server_config.h"

namespace nfs3d::daemon {

// The text printed for a parsed table.
std::string DescribeExportTable(const conf::ExportTable& table);

// Prints the table or the parse error; returns the exit status (0: the file
// is valid, 1: it is not, or `config` could not serve it: e.g. xprtsec=tls
// without a [tls] certificate).
int CheckExports(const std::string& path, const conf::ServerConfig& config, std::FILE* out);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_CHECK_EXPORTS_H_
