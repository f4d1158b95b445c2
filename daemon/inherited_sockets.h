// The sockets a predecessor handed over (daemon/handover.h), waiting to be
// taken by the listener the configuration asks for: same role, kind,
// address and port (port 0: the first of that address). Whatever the new
// configuration no longer listens on is closed when this is dropped.
#ifndef NFS3D_DAEMON_INHERITED_SOCKETS_H_
#define NFS3D_DAEMON_INHERITED_SOCKETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/fd_channel.h"
#include "daemon/handover_format.h"

namespace nfs3d::daemon {

class InheritedSockets {
 public:
  InheritedSockets() = default;
  // `fds` as received; entries index them (checked by the receiver).
  InheritedSockets(const std::vector<handover::SocketEntry>& entries, std::vector<OwnedFd> fds);

  // The socket of `role` and kind bound to address:port; for kHandover and
  // kControl the first of that role.
  std::optional<OwnedFd> Take(handover::SocketRole role, bool stream, const std::string& address,
                              uint16_t port);
  std::optional<OwnedFd> Take(handover::SocketRole role);
  bool empty() const { return sockets_.empty(); }

 private:
  struct Socket {
    handover::SocketRole role;
    bool stream;
    OwnedFd fd;
  };
  std::vector<Socket> sockets_;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_INHERITED_SOCKETS_H_
