#include "daemon/hostname_resolver.h"

#include <netdb.h>
#include <netinet/in.h>

#include <cctype>
#include <cstring>

namespace nfs3d::daemon {
namespace {

// The IP bytes of an address (IPv4-mapped IPv6 as IPv4), for comparison.
std::string AddressBytes(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return std::string(reinterpret_cast<const char*>(&in->sin_addr), 4);
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    const auto* b = reinterpret_cast<const char*>(&in6->sin6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return std::string(b + 12, 4);
    return std::string(b, 16);
  }
  return "";
}

// Reverse lookup, then a forward lookup of the name that must lead back.
std::string LookUp(const sockaddr* peer, socklen_t len) {
  // An IPv4 client on a dual-stack socket: look up its IPv4 address.
  sockaddr_in v4{};
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(peer);
  if (peer->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
    v4.sin_family = AF_INET;
    std::memcpy(&v4.sin_addr, reinterpret_cast<const uint8_t*>(&in6->sin6_addr) + 12, 4);
    peer = reinterpret_cast<const sockaddr*>(&v4);
    len = sizeof(v4);
  }
  char host[NI_MAXHOST];
  if (getnameinfo(peer, len, host, sizeof(host), nullptr, 0, NI_NAMEREQD) != 0) return "";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (getaddrinfo(host, nullptr, &hints, &list) != 0) return "";
  const std::string want = AddressBytes(peer);
  bool confirmed = false;
  for (addrinfo* ai = list; ai != nullptr && !confirmed; ai = ai->ai_next) {
    confirmed = AddressBytes(ai->ai_addr) == want;
  }
  freeaddrinfo(list);
  if (!confirmed) return "";
  std::string name(host);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

std::string CachingHostnameResolver::Resolve(const sockaddr* peer, socklen_t len) {
  const std::string key = AddressBytes(peer);
  if (key.empty()) return "";
  const absl::Time now = absl::Now();
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.expires > now) return it->second.name;
  }
  std::string name = LookUp(peer, len);  // may block: not under the lock
  absl::MutexLock lock(&mu_);
  if (cache_.size() >= max_entries_) cache_.clear();  // crude bound; names are cheap to redo
  cache_[key] = Entry{name, now + ttl_};
  return name;
}

}  // namespace nfs3d::daemon
