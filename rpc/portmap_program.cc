#include "rpc/portmap_program.h"

#include <netinet/in.h>

#include <ctime>
#include <optional>
#include <string_view>

namespace nfs3d::rpc {
namespace {

PortmapRegistry& Registry(void* service) { return *static_cast<PortmapRegistry*>(service); }

std::string_view NetidForProt(uint32_t prot) {
  if (prot == kIpProtoTcp) return "tcp";
  if (prot == kIpProtoUdp) return "udp";
  return "";
}

// The netid of the transport a call came over ("udp6" for UDP over IPv6...).
std::string TransportNetid(const TransportInfo* t) {
  if (t == nullptr) return "udp";
  std::string netid = t->transport == Transport::kTcp ? "tcp" : "udp";
  if (t->local.ss_family == AF_INET6) netid += "6";
  return netid;
}

sockaddr_storage LocalOf(const CallContext& ctx) {
  return ctx.transport != nullptr ? ctx.transport->local : sockaddr_storage{};
}

// The owner SET and UNSET act for, or nullopt: the caller may do neither.
std::optional<std::string_view> Caller(const CallContext& ctx) {
  if (ctx.transport == nullptr) return std::nullopt;
  return PortmapCaller(*ctx.transport);
}

ProcResult Null(void*, const CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return ProcResult::kSuccess;
}

// ---- version 2 ----

ProcResult PmapSet(void* service, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out) {
  PmapMapping m;
  if (!Decode(in, &m)) return ProcResult::kGarbageArgs;
  std::string_view netid = NetidForProt(m.prot);
  std::optional<std::string_view> owner = Caller(ctx);
  bool ok = owner && !netid.empty() && m.port != 0 && m.port <= 0xffff &&
            Registry(service).Set(PortMapping{m.prog, m.vers, std::string(netid),
                                              MakeUaddr("0.0.0.0", static_cast<uint16_t>(m.port)),
                                              std::string(*owner)});
  out.Bool(ok);
  return ProcResult::kSuccess;
}

ProcResult PmapUnset(void* service, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out) {
  PmapMapping m;
  if (!Decode(in, &m)) return ProcResult::kGarbageArgs;
  bool ok = false;
  if (std::optional<std::string_view> owner = Caller(ctx)) {
    // As rpcbind: a v2 UNSET removes both IPv4 transports; prot is ignored.
    bool tcp = Registry(service).Unset(m.prog, m.vers, "tcp", *owner);
    bool udp = Registry(service).Unset(m.prog, m.vers, "udp", *owner);
    ok = tcp || udp;
  }
  out.Bool(ok);
  return ProcResult::kSuccess;
}

ProcResult PmapGetport(void* service, const CallContext&, xdr::Decoder& in, xdr::Encoder& out) {
  PmapMapping m;
  if (!Decode(in, &m)) return ProcResult::kGarbageArgs;
  uint32_t port = 0;
  std::string_view netid = NetidForProt(m.prot);
  if (!netid.empty()) {
    auto found = Registry(service).Find(m.prog, m.vers, netid, /*any_version=*/true);
    std::string host;
    uint16_t p;
    if (found && ParseUaddr(found->uaddr, &host, &p)) port = p;
  }
  out.U32(port);
  return ProcResult::kSuccess;
}

ProcResult PmapDump(void* service, const CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  std::vector<PmapMapping> maps;
  for (const PortMapping& m : Registry(service).Dump()) {
    uint32_t prot = m.netid == "tcp" ? kIpProtoTcp : m.netid == "udp" ? kIpProtoUdp : 0;
    std::string host;
    uint16_t port;
    if (prot == 0 || !ParseUaddr(m.uaddr, &host, &port)) continue;  // v2 knows IPv4 only
    maps.push_back({m.prog, m.vers, prot, port});
  }
  Encode(out, xdr::Chain(maps, kMaxPortmapList));
  return ProcResult::kSuccess;
}

// ---- versions 3 and 4 ----

ProcResult RpcbSet(void* service, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out) {
  RpcbArgs a;
  if (!Decode(in, &a)) return ProcResult::kGarbageArgs;
  // r_owner is what the caller claims; the owner is who it is (rpcbind).
  std::optional<std::string_view> owner = Caller(ctx);
  out.Bool(owner && Registry(service).Set(
                        PortMapping{a.prog, a.vers, a.netid, a.addr, std::string(*owner)}));
  return ProcResult::kSuccess;
}

ProcResult RpcbUnset(void* service, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out) {
  RpcbArgs a;
  if (!Decode(in, &a)) return ProcResult::kGarbageArgs;
  std::optional<std::string_view> owner = Caller(ctx);
  out.Bool(owner && Registry(service).Unset(a.prog, a.vers, a.netid, *owner));
  return ProcResult::kSuccess;
}

ProcResult GetAddrCommon(void* service, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out,
                         bool any_version) {
  RpcbArgs a;
  if (!Decode(in, &a)) return ProcResult::kGarbageArgs;
  // An empty netid means "the transport this call came over".
  std::string netid = a.netid.empty() ? TransportNetid(ctx.transport) : a.netid;
  auto found = Registry(service).Find(a.prog, a.vers, netid, any_version);
  out.String(found ? ResolveUaddr(*found, LocalOf(ctx)) : std::string());
  return ProcResult::kSuccess;
}

ProcResult RpcbGetaddr(void* service, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out) {
  return GetAddrCommon(service, ctx, in, out, /*any_version=*/true);
}

ProcResult RpcbGetversaddr(void* service, const CallContext& ctx, xdr::Decoder& in,
                           xdr::Encoder& out) {
  return GetAddrCommon(service, ctx, in, out, /*any_version=*/false);
}

ProcResult RpcbDump(void* service, const CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  std::vector<RpcbArgs> maps;
  for (const PortMapping& m : Registry(service).Dump()) {
    maps.push_back({m.prog, m.vers, m.netid, m.uaddr, m.owner});
  }
  Encode(out, xdr::Chain(maps, kMaxPortmapList));
  return ProcResult::kSuccess;
}

ProcResult RpcbGettime(void*, const CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(static_cast<uint32_t>(std::time(nullptr)));
  return ProcResult::kSuccess;
}

ProcResult RpcbGetaddrlist(void* service, const CallContext& ctx, xdr::Decoder& in,
                           xdr::Encoder& out) {
  RpcbArgs a;
  if (!Decode(in, &a)) return ProcResult::kGarbageArgs;
  sockaddr_storage local = LocalOf(ctx);
  // rpcb_entry_list: every transport the exact version is reachable on (the
  // caller's r_netid is its own transport, not a filter: it asks for others).
  std::vector<RpcbEntry> entries;
  for (const PortMapping& m : Registry(service).Dump()) {
    if (m.prog != a.prog || m.vers != a.vers) continue;
    const bool tcp = m.netid.rfind("tcp", 0) == 0;
    entries.push_back({ResolveUaddr(m, local), m.netid, tcp ? kNcTpiCotsOrd : kNcTpiClts,
                       NetidIsV6(m.netid) ? "inet6" : "inet", tcp ? "tcp" : "udp"});
  }
  Encode(out, xdr::Chain(entries, kMaxPortmapList));
  return ProcResult::kSuccess;
}

// Tables indexed by procedure number. run == nullptr answers PROC_UNAVAIL
// (CALLIT/BCAST/INDIRECT: no remote calls through us; address conversions
// and statistics are not offered).
// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr Procedure kVersion2[] = {
    {.number = 0, .name = "NULL", .run = Null},
    {.number = 1, .name = "SET", .run = PmapSet, .idempotent = false},
    {.number = 2, .name = "UNSET", .run = PmapUnset, .idempotent = false},
    {.number = 3, .name = "GETPORT", .run = PmapGetport},
    {.number = 4, .name = "DUMP", .run = PmapDump, .max_reply = 64 << 10},
    {.number = 5, .name = "CALLIT", .run = nullptr},
};
// clang-format on

// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr Procedure kVersion3[] = {
    {.number = 0, .name = "NULL", .run = Null},
    {.number = 1, .name = "SET", .run = RpcbSet, .idempotent = false},
    {.number = 2, .name = "UNSET", .run = RpcbUnset, .idempotent = false},
    {.number = 3, .name = "GETADDR", .run = RpcbGetaddr},
    {.number = 4, .name = "DUMP", .run = RpcbDump, .max_reply = 64 << 10},
    {.number = 5, .name = "CALLIT", .run = nullptr},
    {.number = 6, .name = "GETTIME", .run = RpcbGettime},
    {.number = 7, .name = "UADDR2TADDR", .run = nullptr},
    {.number = 8, .name = "TADDR2UADDR", .run = nullptr},
};
// clang-format on

// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr Procedure kVersion4[] = {
    {.number = 0, .name = "NULL", .run = Null},
    {.number = 1, .name = "SET", .run = RpcbSet, .idempotent = false},
    {.number = 2, .name = "UNSET", .run = RpcbUnset, .idempotent = false},
    {.number = 3, .name = "GETADDR", .run = RpcbGetaddr},
    {.number = 4, .name = "DUMP", .run = RpcbDump, .max_reply = 64 << 10},
    {.number = 5, .name = "BCAST", .run = nullptr},
    {.number = 6, .name = "GETTIME", .run = RpcbGettime},
    {.number = 7, .name = "UADDR2TADDR", .run = nullptr},
    {.number = 8, .name = "TADDR2UADDR", .run = nullptr},
    {.number = 9, .name = "GETVERSADDR", .run = RpcbGetversaddr},
    {.number = 10, .name = "INDIRECT", .run = nullptr},
    {.number = 11, .name = "GETADDRLIST", .run = RpcbGetaddrlist, .max_reply = 16 << 10},
    {.number = 12, .name = "GETSTAT", .run = nullptr},
};
// clang-format on

}  // namespace

Program MakePortmapProgram(PortmapRegistry* registry) {
  Program p;
  p.number = kPortmapProgram;
  p.name = "portmapper";
  p.versions = {{2, kVersion2}, {3, kVersion3}, {4, kVersion4}};
  p.service = registry;
  return p;
}

std::optional<std::string_view> PortmapCaller(const TransportInfo& t) {
  if (!IsLoopbackPeer(t)) return std::nullopt;
  uint16_t port = 0;
  if (t.peer.ss_family == AF_INET) {
    port = ntohs(reinterpret_cast<const sockaddr_in*>(&t.peer)->sin_port);
  } else if (t.peer.ss_family == AF_INET6) {
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(&t.peer)->sin6_port);
  }
  // Only root binds a port below 1024 (net.ipv4.ip_unprivileged_port_start).
  if (port == 0 || port >= IPPORT_RESERVED) return std::nullopt;
  return kPortmapSuperuser;
}

}  // namespace nfs3d::rpc
