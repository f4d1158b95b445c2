// The TCP connections this process serves, found from its own descriptors
// (a connected socket whose local address and port are a listening socket's
// of the same process), and their text form: one "server-ip server-port
// client-ip client-port" a line. What a head of a cluster records so that
// the instance started after it can reset its clients' connections
// (daemon/tickle_ack.h).
#ifndef NFS3D_DAEMON_TCP_PEERS_H_
#define NFS3D_DAEMON_TCP_PEERS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace nfs3d::daemon {

struct TcpEndpoint {
  std::string ip;  // numeric, IPv4 or IPv6
  uint16_t port = 0;
  bool operator==(const TcpEndpoint&) const = default;
  auto operator<=>(const TcpEndpoint&) const = default;
};

struct TcpPeer {
  TcpEndpoint server, client;
  bool operator==(const TcpPeer&) const = default;
  auto operator<=>(const TcpPeer&) const = default;
};

// The connections accepted by this process's listening TCP sockets, sorted.
std::vector<TcpPeer> ServedTcpPeers();

std::string FormatTcpPeers(const std::vector<TcpPeer>& peers);
// Lines that do not parse are left out (the file is advice, not state).
std::vector<TcpPeer> ParseTcpPeers(const std::string& text);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_TCP_PEERS_H_
