// Frames with file descriptors over a connected AF_UNIX stream socket: a
// 4-byte big-endian length, the payload, and up to kMaxFds descriptors
// (SCM_RIGHTS) riding on the frame's first byte. Used by the handover of a
// running nfs3d to its successor (daemon/handover.h); the payload's format
// is the caller's.
#ifndef NFS3D_COMMON_FD_CHANNEL_H_
#define NFS3D_COMMON_FD_CHANNEL_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace nfs3d {

// Owns a descriptor; closes it when destroyed.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& o) noexcept : fd_(o.Release()) {}
  OwnedFd& operator=(OwnedFd&& o) noexcept;
  ~OwnedFd();
  int get() const { return fd_; }
  int Release();

 private:
  int fd_ = -1;
};

struct FdFrame {
  std::string payload;
  std::vector<OwnedFd> fds;
};

class FdChannel {
 public:
  static constexpr size_t kMaxFds = 250;  // below the kernel's SCM_MAX_FD (253)

  explicit FdChannel(OwnedFd socket) : socket_(std::move(socket)) {}

  // Connects to the listening socket at `path`.
  static absl::StatusOr<FdChannel> Connect(const std::string& path);
  // A reply slower than this fails a Receive (and a blocked Send).
  absl::Status SetTimeout(int seconds);

  absl::Status Send(std::string_view payload, absl::Span<const int> fds = {});
  // A frame larger than max_payload is refused (hostile or broken peer).
  absl::StatusOr<FdFrame> Receive(size_t max_payload);

  int fd() const { return socket_.get(); }
  // The process at the other end and its user (SO_PEERCRED); -1 if unknown.
  int PeerPid() const;
  int PeerUid() const;

 private:
  OwnedFd socket_;
};

// A listening AF_UNIX stream socket at `path` (a stale file there is
// replaced), mode 0600.
absl::StatusOr<OwnedFd> ListenUnixStream(const std::string& path);

}  // namespace nfs3d

#endif  // NFS3D_COMMON_FD_CHANNEL_H_
