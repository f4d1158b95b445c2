#include "daemon/tcp_peers.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "nlm/peer_caller.h"

namespace nfs3d::daemon {

namespace {

// IPv4-mapped addresses (a dual-stack listener's IPv4 clients) come out as
// IPv4: that is what goes on the wire, and what a tickle must be sent as.
bool ToEndpoint(const sockaddr_storage& ss, TcpEndpoint* out) {
  out->ip = nlm::AddressString(ss);
  if (out->ip.empty()) return false;
  out->port = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(ss).sin_port
                                            : reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
  return true;
}

bool IsWildcard(const std::string& ip) { return ip == "0.0.0.0" || ip == "::"; }

}  // namespace

std::vector<TcpPeer> ServedTcpPeers() {
  std::vector<TcpEndpoint> listening;
  std::vector<TcpPeer> connected;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return {};
  while (const dirent* e = readdir(dir)) {
    int fd = 0;
    if (!absl::SimpleAtoi(e->d_name, &fd) || fd == dirfd(dir)) continue;
    int type = 0, accepting = 0;
    socklen_t len = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    len = sizeof(accepting);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
    TcpPeer p;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        !ToEndpoint(local, &p.server)) {
      continue;
    }
    if (accepting != 0) {
      listening.push_back(p.server);
    } else if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0 &&
               ToEndpoint(peer, &p.client)) {
      connected.push_back(std::move(p));
    }
  }
  closedir(dir);
  // Outgoing connections (NLM callbacks, the Ceph cluster) have no listener
  // of their own address and port.
  std::erase_if(connected, [&](const TcpPeer& c) {
    return std::none_of(listening.begin(), listening.end(), [&](const TcpEndpoint& l) {
      return l.port == c.server.port && (l.ip == c.server.ip || IsWildcard(l.ip));
    });
  });
  std::sort(connected.begin(), connected.end());
  connected.erase(std::unique(connected.begin(), connected.end()), connected.end());
  return connected;
}

std::string FormatTcpPeers(const std::vector<TcpPeer>& peers) {
  std::string out;
  for (const TcpPeer& p : peers) {
    absl::StrAppend(&out, p.server.ip, " ", p.server.port, " ", p.client.ip, " ", p.client.port,
                    "\n");
  }
  return out;
}

std::vector<TcpPeer> ParseTcpPeers(const std::string& text) {
  std::vector<TcpPeer> peers;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint32_t server_port = 0, client_port = 0;
    if (f.size() != 4 || !absl::SimpleAtoi(f[1], &server_port) ||
        !absl::SimpleAtoi(f[3], &client_port) || server_port > 65535 || client_port > 65535) {
      continue;
    }
    TcpPeer p{{std::string(f[0]), static_cast<uint16_t>(server_port)},
              {std::string(f[2]), static_cast<uint16_t>(client_port)}};
    sockaddr_storage server{}, client{};
    if (!nlm::ParseAddress(p.server.ip, &server) || !nlm::ParseAddress(p.client.ip, &client) ||
        server.ss_family != client.ss_family) {
      continue;
    }
    peers.push_back(std::move(p));
  }
  return peers;
}

}  // namespace nfs3d::daemon
