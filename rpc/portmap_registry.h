// The mappings the embedded portmapper serves (RFC 1833): which program and
// version listens where. Thread-safe; also the place nfs3d records its own
// listeners when no system rpcbind runs.
#ifndef NFS3D_RPC_PORTMAP_REGISTRY_H_
#define NFS3D_RPC_PORTMAP_REGISTRY_H_

#include <sys/socket.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace nfs3d::rpc {

struct PortMapping {
  uint32_t prog = 0;
  uint32_t vers = 0;
  std::string netid;  // "tcp", "udp", "tcp6", "udp6"
  std::string uaddr;  // universal address: "h1.h2.h3.h4.p1.p2" or "<ipv6>.p1.p2"
  std::string owner;  // free text ("superuser", "nfs3d", ...)

  bool operator==(const PortMapping&) const = default;
};

class PortmapRegistry {
 public:
  // Adds a mapping; false if (prog, vers, netid) is already mapped.
  bool Set(PortMapping mapping);
  // Removes the mappings of (prog, vers) with that netid, or with any netid
  // when netid is empty. True when something was removed.
  bool Unset(uint32_t prog, uint32_t vers, std::string_view netid);
  // The mapping of (prog, vers, netid); if any_version, falls back to the
  // highest registered version of prog on that netid (as rpcbind does for
  // GETADDR, so the caller learns PROG_MISMATCH from the service itself).
  std::optional<PortMapping> Find(uint32_t prog, uint32_t vers, std::string_view netid,
                                  bool any_version) const;
  std::vector<PortMapping> Dump() const;

  // Registers a local listener bound to the wildcard address of its family.
  void AddLocal(uint32_t prog, uint32_t vers, std::string_view netid, uint16_t port,
                std::string_view owner = "superuser");

 private:
  mutable std::mutex mu_;
  std::vector<PortMapping> mappings_ ABSL_GUARDED_BY(mu_);
};

// Universal address helpers (RFC 1833 section 2.2 / RFC 5665).
// "127.0.0.1.8.1" -> host "127.0.0.1", port 2049. False if malformed.
bool ParseUaddr(std::string_view uaddr, std::string* host, uint16_t* port);
std::string MakeUaddr(std::string_view host, uint16_t port);
// The host part of a socket address as text ("" for other families).
std::string AddressText(const sockaddr_storage& addr);
// True for "tcp6"/"udp6".
bool NetidIsV6(std::string_view netid);
// The uaddr a client should use: the mapping's own, except that a wildcard
// host is replaced by `local` (the address the client reached us through)
// when the families agree.
std::string ResolveUaddr(const PortMapping& mapping, const sockaddr_storage& local);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_PORTMAP_REGISTRY_H_
