// Binding an AF_UNIX socket to a path so that it is never reachable with a
// looser mode than asked, whatever the umask of the calling thread: a local
// user who connects in the moment between bind and a later chmod would hold a
// connection to the control or handover socket (issue 48, finding 6).
#ifndef NFS3D_COMMON_UNIX_SOCKET_H_
#define NFS3D_COMMON_UNIX_SOCKET_H_

#include <sys/types.h>
#include <sys/un.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nfs3d {

// The address of the socket at `path`; an error when the path is too long.
absl::StatusOr<sockaddr_un> UnixSocketAddress(const std::string& path);

// Binds socket `fd` to `path` with the file's mode `mode` (e.g. 0600) from
// the moment it exists: Linux gives the new file the mode of the socket's
// inode (fchmod'ed before bind) less the umask, so it is at most `mode`. A
// file that still came out looser is removed and the bind refused.
absl::Status BindUnixSocket(int fd, const std::string& path, mode_t mode);

}  // namespace nfs3d

#endif  // NFS3D_COMMON_UNIX_SOCKET_H_
