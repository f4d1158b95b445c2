// The embedded portmapper / rpcbind (RFC 1833), program 100000, versions 2
// (PMAPPROC_*), 3 and 4 (RPCBPROC_*), served from a PortmapRegistry when no
// system rpcbind runs. A Program like any other: hand it to the dispatcher.
#ifndef NFS3D_RPC_PORTMAP_PROGRAM_H_
#define NFS3D_RPC_PORTMAP_PROGRAM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/call_context.h"
#include "rpc/portmap_registry.h"
#include "rpc/program.h"
#include "xdr/describe.h"

namespace nfs3d::rpc {

inline constexpr uint32_t kPortmapProgram = 100000;
inline constexpr uint16_t kPortmapPort = 111;
inline constexpr uint32_t kIpProtoTcp = 6;
inline constexpr uint32_t kIpProtoUdp = 17;

// Version 2 procedures.
inline constexpr uint32_t kPmapProcNull = 0;
inline constexpr uint32_t kPmapProcSet = 1;
inline constexpr uint32_t kPmapProcUnset = 2;
inline constexpr uint32_t kPmapProcGetport = 3;
inline constexpr uint32_t kPmapProcDump = 4;
// Versions 3 and 4.
inline constexpr uint32_t kRpcbProcSet = 1;
inline constexpr uint32_t kRpcbProcUnset = 2;
inline constexpr uint32_t kRpcbProcGetaddr = 3;
inline constexpr uint32_t kRpcbProcDump = 4;
inline constexpr uint32_t kRpcbProcGettime = 6;
inline constexpr uint32_t kRpcbProcGetversaddr = 9;   // v4 only
inline constexpr uint32_t kRpcbProcGetaddrlist = 11;  // v4 only

// struct mapping (v2).
struct PmapMapping {
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t prot = 0;  // kIpProtoTcp / kIpProtoUdp
  uint32_t port = 0;
};
NFS3D_XDR(PmapMapping) { v(x.prog, x.vers, x.prot, x.port); }

// struct rpcb (v3, v4).
struct RpcbArgs {
  uint32_t prog = 0;
  uint32_t vers = 0;
  std::string netid;
  std::string addr;
  std::string owner;
};
inline constexpr uint32_t kRpcbMaxString = 1024;  // netids, uaddrs and owners are short
NFS3D_XDR(RpcbArgs) {
  v(x.prog, x.vers, xdr::Bounded(x.netid, kRpcbMaxString), xdr::Bounded(x.addr, kRpcbMaxString),
    xdr::Bounded(x.owner, kRpcbMaxString));
}

// rpcb_entry (v4 GETADDRLIST).
inline constexpr uint32_t kNcTpiClts = 1;
inline constexpr uint32_t kNcTpiCotsOrd = 3;
struct RpcbEntry {
  std::string maddr;
  std::string netid;
  uint32_t semantics = 0;  // kNcTpiClts (datagram) or kNcTpiCotsOrd (stream)
  std::string protofmly;
  std::string proto;
};
NFS3D_XDR(RpcbEntry) {
  v(xdr::Bounded(x.maddr, kRpcbMaxString), xdr::Bounded(x.netid, kRpcbMaxString), x.semantics,
    xdr::Bounded(x.protofmly, kRpcbMaxString), xdr::Bounded(x.proto, kRpcbMaxString));
}

// pmaplist, rp__list and rpcb_entry_list are XDR linked lists (xdr::Chain).
inline constexpr size_t kMaxPortmapList = 1u << 16;

// The program; `registry` must outlive it. Versions 2, 3, 4.
Program MakePortmapProgram(PortmapRegistry* registry);

// Who may SET and UNSET, and as which owner (rpcbind's rules, rpcbind -L):
// a caller on loopback from a reserved port is the superuser. Anyone else
// gets nullopt and may do neither: a remote host, and a local user on an
// unprivileged port, whose uid a TCP or UDP peer address does not tell
// (rpcbind records such a caller as "unknown" and refuses it too; its
// unprivileged registrations come over a unix socket, which nfs3d's
// portmapper does not serve).
std::optional<std::string_view> PortmapCaller(const TransportInfo& transport);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_PORTMAP_PROGRAM_H_
