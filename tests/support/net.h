// Small helpers shared by tests that talk to servers over 127.0.0.1: byte-span
// conversions and free ports. Header-only, so any test can include it without
// a link dependency.
#ifndef NFS3D_TESTS_SUPPORT_NET_H_
#define NFS3D_TESTS_SUPPORT_NET_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "absl/types/span.h"

namespace nfs3d::test_support {

inline absl::Span<const uint8_t> Span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string Str(absl::Span<const uint8_t> s) {
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

// A socket of `type` bound to an ephemeral port on 127.0.0.1; the port goes to
// *port. The caller closes the fd (-1 on failure).
inline int BindLoopback(int type, uint16_t* port) {
  int fd = socket(AF_INET, type, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

// A socket of `type` connected to 127.0.0.1:port, whose receives give up
// after `receive_timeout_s` (a hang guard; 0: never). The caller closes the
// fd (-1 on failure).
inline int ConnectLoopback(int type, uint16_t port, int receive_timeout_s = 5) {
  int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receive_timeout_s > 0) {
    timeval tv{receive_timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A free port on 127.0.0.1 for both TCP and UDP (bound and released).
inline uint16_t FreePort() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    uint16_t port = 0;
    int t = BindLoopback(SOCK_STREAM, &port);
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    bool udp_ok = bind(u, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    close(u);
    close(t);
    if (udp_ok) return port;
  }
  return 0;
}

// A socket of `type` connected to 127.0.0.1:port from a reserved source port
// (below 1024: only root may bind one), as rpcbind's privileged local callers
// use. -1 when none could be had (not root, or every port taken).
inline int ConnectLoopbackFromReservedPort(int type, uint16_t port, int receive_timeout_s = 5) {
  for (uint16_t source = 1023; source >= 600; --source) {
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    timeval tv{receive_timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(source);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      const bool denied = errno == EACCES;
      close(fd);
      if (denied) return -1;
      continue;  // in use
    }
    a.sin_port = htons(port);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
    close(fd);  // e.g. the same pair still in TIME_WAIT
  }
  return -1;
}

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_NET_H_
