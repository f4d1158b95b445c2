#include "common/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d {

absl::StatusOr<sockaddr_un> UnixSocketAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket path too long: ", path));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

absl::Status BindUnixSocket(int fd, const std::string& path, mode_t mode) {
  absl::StatusOr<sockaddr_un> addr = UnixSocketAddress(path);
  if (!addr.ok()) return addr.status();
  auto failed = [&path](const char* what) {
    return absl::UnavailableError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
  };
  if (fchmod(fd, mode) != 0) return failed("fchmod of the socket for");
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return failed("bind");
  }
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return failed("lstat");
  if ((st.st_mode & 07777 & ~mode) != 0) {
    unlink(path.c_str());
    return absl::FailedPreconditionError(
        absl::StrFormat("bind %s: the socket came out with mode %04o, not %04o; removed", path,
                        st.st_mode & 07777, mode));
  }
  return absl::OkStatus();
}

}  // namespace nfs3d
