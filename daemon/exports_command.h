// `nfs3d exports list|show|add|remove|check`: the exports of a running nfs3d
// managed at run time, with knfsd's exportfs(8) semantics. nfs3d's export
// table is its exports file, so a command edits the file (atomically, after
// checking that the result parses) and the server puts it in force at once:
// when the server follows the file ([paths] exports_poll) it picks the change
// up by itself, else the command sends it SIGHUP (as `exportfs -r` after an
// edit). The file's first line then says who made the change, and the server
// logs it. `add` of an exported path replaces its line (exportfs -o).
#ifndef NFS3D_DAEMON_EXPORTS_COMMAND_H_
#define NFS3D_DAEMON_EXPORTS_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

#include "conf/server_config.h"

namespace nfs3d::daemon {

// `args`: the subcommand and its arguments. Returns the exit status: 0 done,
// 1 refused or failed (the reason on `err`), 2 usage.
int RunExportsCommand(const std::vector<std::string>& args, const conf::ServerConfig& config,
                      std::FILE* out, std::FILE* err);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_EXPORTS_COMMAND_H_
