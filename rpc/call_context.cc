#include "rpc/call_context.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace nfs3d::rpc {

bool IsLoopbackPeer(const TransportInfo& t) {
  if (t.peer.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&t.peer);
    return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
  }
  if (t.peer.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&t.peer);
    if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace nfs3d::rpc
