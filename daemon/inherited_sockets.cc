#include "daemon/inherited_sockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace nfs3d::daemon {

namespace {

// Whether fd is bound to address (numeric, as the config writes it) and,
// unless port is 0, to port.
bool BoundTo(int fd, const std::string& address, uint16_t port) {
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return false;
  if (local.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&local);
    in_addr want{};
    return inet_pton(AF_INET, address.c_str(), &want) == 1 && want.s_addr == sin->sin_addr.s_addr &&
           (port == 0 || ntohs(sin->sin_port) == port);
  }
  if (local.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&local);
    in6_addr want{};
    return inet_pton(AF_INET6, address.c_str(), &want) == 1 &&
           std::memcmp(&want, &sin6->sin6_addr, sizeof(want)) == 0 &&
           (port == 0 || ntohs(sin6->sin6_port) == port);
  }
  return false;
}

}  // namespace

InheritedSockets::InheritedSockets(const std::vector<handover::SocketEntry>& entries,
                                   std::vector<OwnedFd> fds) {
  for (const handover::SocketEntry& e : entries) {
    if (e.fd_index >= fds.size() || fds[e.fd_index].get() < 0) continue;
    sockets_.push_back({e.role, e.stream, std::move(fds[e.fd_index])});
  }
}

std::optional<OwnedFd> InheritedSockets::Take(handover::SocketRole role, bool stream,
                                              const std::string& address, uint16_t port) {
  for (auto it = sockets_.begin(); it != sockets_.end(); ++it) {
    if (it->role == role && it->stream == stream && BoundTo(it->fd.get(), address, port)) {
      OwnedFd fd = std::move(it->fd);
      sockets_.erase(it);
      return fd;
    }
  }
  return std::nullopt;
}

std::optional<OwnedFd> InheritedSockets::Take(handover::SocketRole role) {
  for (auto it = sockets_.begin(); it != sockets_.end(); ++it) {
    if (it->role == role) {
      OwnedFd fd = std::move(it->fd);
      sockets_.erase(it);
      return fd;
    }
  }
  return std::nullopt;
}

}  // namespace nfs3d::daemon
