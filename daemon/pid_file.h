// <state_dir>/nfs3d.pid: the running server's pid, for `nfs3d exports`,
// which signals the server after changing its exports. Root signals the pid
// written there, so the file is only believed when it could only have been
// written by nfs3d's user and the pid is an nfs3d of that user (issue 48,
// finding 6).
#ifndef NFS3D_DAEMON_PID_FILE_H_
#define NFS3D_DAEMON_PID_FILE_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "conf/server_config.h"

namespace nfs3d::daemon {

std::string PidFilePath(const conf::ServerConfig& config);

// Replaces `path` with this process's pid: a new file (mode 0644 from the
// start, no link followed) renamed over the old one.
absl::Status WritePidFile(const std::string& path);

// The pid in `path` when it is safe to signal: the file is a regular file
// of this process's effective user that group and others cannot write, and
// the pid is a live process named nfs3d whose real and effective uid are
// this process's effective uid. NotFound when there is no such file or the
// process is gone; PermissionDenied (saying why) when it is not believed.
absl::StatusOr<pid_t> ReadServerPid(const std::string& path);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_PID_FILE_H_
