#include "rpc/portmap_registry.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace nfs3d::rpc {

const PortmapRegistry::Entry* PortmapRegistry::FindLocked(uint32_t prog, uint32_t vers,
                                                          std::string_view netid) const {
  for (const Entry& e : entries_) {
    if (e.mapping.prog == prog && e.mapping.vers == vers && e.mapping.netid == netid) return &e;
  }
  return nullptr;
}

bool PortmapRegistry::Set(PortMapping mapping) {
  if (!ValidMapping(mapping)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (const Entry* e = FindLocked(mapping.prog, mapping.vers, mapping.netid)) {
    return e->mapping.uaddr == mapping.uaddr;  // rpcbind: the same again is fine
  }
  size_t set = 0, of_owner = 0;
  for (const Entry& e : entries_) {
    if (e.local) continue;
    ++set;
    if (e.mapping.owner == mapping.owner) ++of_owner;
  }
  if (set >= limits_.max_mappings || of_owner >= limits_.max_per_owner) return false;
  entries_.push_back({std::move(mapping), /*local=*/false});
  return true;
}

bool PortmapRegistry::Unset(uint32_t prog, uint32_t vers, std::string_view netid,
                            std::string_view caller) {
  auto matches = [&](const Entry& e) {
    return e.mapping.prog == prog && e.mapping.vers == vers &&
           (netid.empty() || e.mapping.netid == netid);
  };
  std::lock_guard<std::mutex> lock(mu_);
  if (caller != kPortmapSuperuser) {
    for (const Entry& e : entries_) {
      if (matches(e) && e.mapping.owner != caller) return false;
    }
  }
  return std::erase_if(entries_, matches) != 0;
}

std::optional<PortMapping> PortmapRegistry::Find(uint32_t prog, uint32_t vers,
                                                 std::string_view netid, bool any_version) const {
  std::lock_guard<std::mutex> lock(mu_);
  const PortMapping* fallback = nullptr;
  for (const Entry& e : entries_) {
    const PortMapping& m = e.mapping;
    if (m.prog != prog || m.netid != netid) continue;
    if (m.vers == vers) return m;
    if (any_version && (fallback == nullptr || m.vers > fallback->vers)) fallback = &m;
  }
  if (fallback != nullptr) return *fallback;
  return std::nullopt;
}

std::vector<PortMapping> PortmapRegistry::Dump() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PortMapping> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.mapping);
  return out;
}

void PortmapRegistry::AddLocal(uint32_t prog, uint32_t vers, std::string_view netid, uint16_t port,
                               std::string_view owner) {
  std::string host = NetidIsV6(netid) ? "::" : "0.0.0.0";
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) {
    return e.mapping.prog == prog && e.mapping.vers == vers && e.mapping.netid == netid;
  });
  entries_.push_back(
      {PortMapping{prog, vers, std::string(netid), MakeUaddr(host, port), std::string(owner)},
       /*local=*/true});
}

bool ValidMapping(const PortMapping& m) {
  constexpr size_t kMaxOwner = 16;  // "superuser", a uid
  const bool v6 = NetidIsV6(m.netid);
  if (m.netid != "tcp" && m.netid != "udp" && m.netid != "tcp6" && m.netid != "udp6") return false;
  if (m.owner.size() > kMaxOwner) return false;
  std::string host;
  uint16_t port;
  if (!ParseUaddr(m.uaddr, &host, &port) || port == 0) return false;
  uint8_t addr[sizeof(in6_addr)];
  return inet_pton(v6 ? AF_INET6 : AF_INET, host.c_str(), addr) == 1;
}

bool ParseUaddr(std::string_view uaddr, std::string* host, uint16_t* port) {
  size_t last = uaddr.rfind('.');
  if (last == std::string_view::npos || last == 0) return false;
  size_t prev = uaddr.rfind('.', last - 1);
  if (prev == std::string_view::npos || prev == 0) return false;
  // Debian's abseil has its own string_view type.
  std::string_view hi_text = uaddr.substr(prev + 1, last - prev - 1);
  std::string_view lo_text = uaddr.substr(last + 1);
  uint32_t hi, lo;
  if (!absl::SimpleAtoi(absl::string_view(hi_text.data(), hi_text.size()), &hi) ||
      !absl::SimpleAtoi(absl::string_view(lo_text.data(), lo_text.size()), &lo) || hi > 255 ||
      lo > 255) {
    return false;
  }
  *host = std::string(uaddr.substr(0, prev));
  *port = static_cast<uint16_t>((hi << 8) | lo);
  return true;
}

std::string MakeUaddr(std::string_view host, uint16_t port) {
  return absl::StrCat(std::string(host), ".", port >> 8, ".", port & 0xff);
}

std::string AddressText(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, buf, sizeof(buf));
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

bool NetidIsV6(std::string_view netid) { return !netid.empty() && netid.back() == '6'; }

std::string ResolveUaddr(const PortMapping& mapping, const sockaddr_storage& local) {
  std::string host;
  uint16_t port;
  if (!ParseUaddr(mapping.uaddr, &host, &port)) return mapping.uaddr;
  bool wildcard = host == "0.0.0.0" || host == "::";
  bool v6 = NetidIsV6(mapping.netid);
  if (!wildcard || local.ss_family != (v6 ? AF_INET6 : AF_INET)) return mapping.uaddr;
  std::string local_host = AddressText(local);
  if (local_host.empty()) return mapping.uaddr;
  return MakeUaddr(local_host, port);
}

}  // namespace nfs3d::rpc
