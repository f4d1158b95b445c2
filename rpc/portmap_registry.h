// The mappings the embedded portmapper serves (RFC 1833): which program and
// version listens where, and who registered it. Thread-safe; also the place
// nfs3d records its own listeners when no system rpcbind runs.
//
// As rpcbind (rpcb_svc_com.c): each mapping has an owner, the identity of
// the caller that set it ("superuser" or a uid), never what the caller
// claims; only its owner or the superuser may unset it. Registrations from
// callers are bounded, in all and per owner, and each is short (the known
// netids, a numeric address), so a DUMP of them all fits one reply.
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
  std::string owner;  // kPortmapSuperuser, or a uid in decimal

  bool operator==(const PortMapping&) const = default;
};

// The owner who may unset any mapping; nfs3d's own mappings are its.
inline constexpr std::string_view kPortmapSuperuser = "superuser";

struct PortmapLimits {
  // Mappings set by callers (nfs3d's own, AddLocal, come on top): a DUMP of
  // them all stays well under its 64 KiB reply (~100 bytes each at most).
  size_t max_mappings = 512;
  size_t max_per_owner = 256;
};

class PortmapRegistry {
 public:
  explicit PortmapRegistry(PortmapLimits limits = {}) : limits_(limits) {}

  // Adds a mapping for mapping.owner. True when added, or when the same
  // mapping is there already (rpcbind's answer); false when (prog, vers,
  // netid) is mapped elsewhere, the mapping is malformed (ValidMapping) or
  // a bound is reached.
  bool Set(PortMapping mapping);
  // Removes the mappings of (prog, vers) with that netid, or with any netid
  // when netid is empty, if `caller` may: it is kPortmapSuperuser or owns
  // every one of them (else nothing goes). True when something was removed.
  bool Unset(uint32_t prog, uint32_t vers, std::string_view netid, std::string_view caller);
  // The mapping of (prog, vers, netid); if any_version, falls back to the
  // highest registered version of prog on that netid (as rpcbind does for
  // GETADDR, so the caller learns PROG_MISMATCH from the service itself).
  std::optional<PortMapping> Find(uint32_t prog, uint32_t vers, std::string_view netid,
                                  bool any_version) const;
  std::vector<PortMapping> Dump() const;

  // Registers a local listener bound to the wildcard address of its family,
  // replacing what was mapped there; outside the bounds.
  void AddLocal(uint32_t prog, uint32_t vers, std::string_view netid, uint16_t port,
                std::string_view owner = kPortmapSuperuser);

 private:
  struct Entry {
    PortMapping mapping;
    bool local = false;  // AddLocal's: outside the bounds
  };
  // The entry of (prog, vers, netid), or null.
  const Entry* FindLocked(uint32_t prog, uint32_t vers, std::string_view netid) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const PortmapLimits limits_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// A mapping a caller may set: netid tcp, udp, tcp6 or udp6, a universal
// address whose host is a numeric address of that family, an owner of at
// most 16 characters.
bool ValidMapping(const PortMapping& mapping);

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
