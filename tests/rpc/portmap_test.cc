// The embedded portmapper: registry and codecs in isolation, then end to end
// through the real dispatcher and transports on 127.0.0.1 with ephemeral
// ports, as rpcinfo / mount.nfs would talk to it. Also RpcbindAvailable().
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/dispatcher.h"
#include "rpc/portmap_program.h"
#include "rpc/portmap_registry.h"
#include "rpc/record_marker.h"
#include "rpc/rpc_server.h"
#include "rpc/rpcbind_client.h"
#include "tests/support/net.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc {
namespace {

TEST(UaddrTest, RoundTrip) {
  EXPECT_EQ(MakeUaddr("127.0.0.1", 2049), "127.0.0.1.8.1");
  EXPECT_EQ(MakeUaddr("::1", 111), "::1.0.111");
  std::string host;
  uint16_t port;
  ASSERT_TRUE(ParseUaddr("10.1.2.3.8.1", &host, &port));
  EXPECT_EQ(host, "10.1.2.3");
  EXPECT_EQ(port, 2049);
  ASSERT_TRUE(ParseUaddr("fe80::1.0.111", &host, &port));
  EXPECT_EQ(host, "fe80::1");
  EXPECT_EQ(port, 111);
  EXPECT_FALSE(ParseUaddr("", &host, &port));
  EXPECT_FALSE(ParseUaddr("1.2", &host, &port));
  EXPECT_FALSE(ParseUaddr("1.2.3.4.256.1", &host, &port));
  EXPECT_FALSE(ParseUaddr("1.2.3.4.x.1", &host, &port));
}

TEST(UaddrTest, ResolveWildcardToLocalAddress) {
  sockaddr_storage local{};
  auto* sin = reinterpret_cast<sockaddr_in*>(&local);
  sin->sin_family = AF_INET;
  inet_pton(AF_INET, "192.0.2.7", &sin->sin_addr);
  PortMapping wild{100003, 3, "tcp", "0.0.0.0.8.1", ""};
  EXPECT_EQ(ResolveUaddr(wild, local), "192.0.2.7.8.1");
  PortMapping fixed{100003, 3, "tcp", "10.0.0.1.8.1", ""};
  EXPECT_EQ(ResolveUaddr(fixed, local), "10.0.0.1.8.1");
  PortMapping v6{100003, 3, "tcp6", "::.8.1", ""};
  EXPECT_EQ(ResolveUaddr(v6, local), "::.8.1");  // families differ: left alone
}

TEST(PortmapRegistryTest, SetUnsetFind) {
  PortmapRegistry r;
  EXPECT_TRUE(r.Set({100003, 3, "tcp", "0.0.0.0.8.1", "a"}));
  EXPECT_FALSE(r.Set({100003, 3, "tcp", "0.0.0.0.8.2", "b"}));  // already mapped
  EXPECT_TRUE(r.Set({100003, 3, "udp", "0.0.0.0.8.1", "a"}));
  EXPECT_TRUE(r.Set({100003, 2, "tcp", "0.0.0.0.8.3", "a"}));
  EXPECT_EQ(r.Find(100003, 3, "tcp", false)->uaddr, "0.0.0.0.8.1");
  EXPECT_FALSE(r.Find(100003, 4, "tcp", false).has_value());
  EXPECT_EQ(r.Find(100003, 4, "tcp", true)->vers, 3u);  // highest other version
  EXPECT_FALSE(r.Find(100003, 3, "tcp6", true).has_value());
  EXPECT_TRUE(r.Unset(100003, 3, "tcp", kPortmapSuperuser));
  EXPECT_FALSE(r.Unset(100003, 3, "tcp", kPortmapSuperuser));
  EXPECT_FALSE(r.Unset(100003, 3, "", "b"));  // a's
  EXPECT_TRUE(r.Unset(100003, 3, "", "a"));   // every netid
  EXPECT_EQ(r.Dump().size(), 1u);
  r.AddLocal(100005, 3, "udp6", 20048);
  r.AddLocal(100005, 3, "udp6", 20049);  // replaces
  EXPECT_EQ(r.Find(100005, 3, "udp6", false)->uaddr, "::.78.81");
}

// Calls a procedure of the program table directly, as the dispatcher would.
struct DirectCall {
  explicit DirectCall(PortmapRegistry* registry) : program(MakePortmapProgram(registry)) {}

  // Returns the encoded results, or nullopt when the row is missing.
  std::optional<std::string> Run(uint32_t vers, uint32_t proc, const std::string& peer_ip,
                                 const xdr::BufferChain& args, uint16_t peer_port = 40000) {
    for (const ProgramVersion& v : program.versions) {
      if (v.version != vers) continue;
      if (proc >= v.procedures.size() || v.procedures[proc].run == nullptr) return std::nullopt;
      EXPECT_EQ(v.procedures[proc].number, proc);
      TransportInfo t;
      t.transport = Transport::kUdp;
      auto* peer = reinterpret_cast<sockaddr_in*>(&t.peer);
      peer->sin_family = AF_INET;
      peer->sin_port = htons(peer_port);
      inet_pton(AF_INET, peer_ip.c_str(), &peer->sin_addr);
      auto* local = reinterpret_cast<sockaddr_in*>(&t.local);
      local->sin_family = AF_INET;
      inet_pton(AF_INET, "192.0.2.1", &local->sin_addr);
      CallContext ctx;
      ctx.transport = &t;
      std::string flat = args.Flatten();
      xdr::Decoder in(reinterpret_cast<const uint8_t*>(flat.data()), flat.size());
      xdr::BufferChain out;
      xdr::Encoder enc(&out);
      EXPECT_EQ(v.procedures[proc].run(program.service, ctx, in, enc), ProcResult::kSuccess);
      return out.Flatten();
    }
    return std::nullopt;
  }
  Program program;
};

uint32_t U32At(const std::string& s, size_t off) {
  auto* p = reinterpret_cast<const uint8_t*>(s.data() + off);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

TEST(PortmapProgramTest, SetRefusedFromRemotePeers) {
  PortmapRegistry registry;
  DirectCall call(&registry);
  xdr::BufferChain args;
  xdr::Encoder enc(&args);
  Encode(enc, PmapMapping{300000, 1, kIpProtoUdp, 999});
  EXPECT_EQ(U32At(*call.Run(2, kPmapProcSet, "10.0.0.9", args, 700), 0), 0u);
  EXPECT_EQ(U32At(*call.Run(2, kPmapProcSet, "127.0.0.1", args), 0), 0u);  // unprivileged
  EXPECT_TRUE(registry.Dump().empty());
  EXPECT_EQ(U32At(*call.Run(2, kPmapProcSet, "127.0.0.1", args, 700), 0), 1u);
  EXPECT_EQ(registry.Dump().size(), 1u);
  EXPECT_EQ(U32At(*call.Run(2, kPmapProcUnset, "10.0.0.9", args, 700), 0), 0u);
  EXPECT_EQ(U32At(*call.Run(2, kPmapProcUnset, "127.0.0.1", args), 0), 0u);
  EXPECT_EQ(registry.Dump().size(), 1u);

  xdr::BufferChain rargs;
  xdr::Encoder renc(&rargs);
  Encode(renc, RpcbArgs{300001, 1, "tcp", "0.0.0.0.4.0", "me"});
  EXPECT_EQ(U32At(*call.Run(4, kRpcbProcSet, "192.0.2.50", rargs, 700), 0), 0u);
  EXPECT_EQ(U32At(*call.Run(3, kRpcbProcSet, "127.0.0.1", rargs, 700), 0), 1u);
  EXPECT_EQ(registry.Find(300001, 1, "tcp", false)->owner, "superuser");  // not "me"
  EXPECT_EQ(U32At(*call.Run(3, kRpcbProcUnset, "192.0.2.50", rargs, 700), 0), 0u);
  EXPECT_EQ(U32At(*call.Run(3, kRpcbProcUnset, "127.0.0.1", rargs, 700), 0), 1u);
}

TEST(PortmapProgramTest, TableShape) {
  PortmapRegistry registry;
  Program p = MakePortmapProgram(&registry);
  EXPECT_EQ(p.number, kPortmapProgram);
  ASSERT_EQ(p.versions.size(), 3u);
  for (const ProgramVersion& v : p.versions) {
    for (size_t i = 0; i < v.procedures.size(); ++i) EXPECT_EQ(v.procedures[i].number, i);
  }
  EXPECT_EQ(p.versions[0].procedures.size(), 6u);
  EXPECT_EQ(p.versions[1].procedures.size(), 9u);
  EXPECT_EQ(p.versions[2].procedures.size(), 13u);
  EXPECT_EQ(p.versions[0].procedures[5].run, nullptr);  // CALLIT
}

// ---- end to end ----

struct Reply {
  uint32_t accept_stat = 0xffffffff;
  std::string results;
};

std::string EncodeCall(uint32_t xid, uint32_t vers, uint32_t proc, const xdr::BufferChain& args) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  e.U32(xid);
  e.U32(0);  // CALL
  e.U32(2);
  e.U32(kPortmapProgram);
  e.U32(vers);
  e.U32(proc);
  e.U32(0);  // AUTH_NONE
  e.U32(0);
  e.U32(0);
  e.U32(0);
  return chain.Flatten() + args.Flatten();
}

std::optional<Reply> DecodeReply(const std::string& msg, uint32_t xid) {
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(msg.data()), msg.size());
  if (d.U32() != xid || d.U32() != 1 || d.U32() != 0) return std::nullopt;
  d.U32();  // verifier flavor
  d.Opaque(400);
  Reply r;
  r.accept_stat = d.U32();
  if (!d.ok()) return std::nullopt;
  auto rest = d.Rest();
  r.results.assign(reinterpret_cast<const char*>(rest.data()), rest.size());
  return r;
}

class PortmapEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    program_ = MakePortmapProgram(&registry_);
    dispatcher_.AddProgram(&program_);
    RpcServerOptions opts;
    opts.worker_threads = 2;
    server_ = std::make_unique<RpcServer>(opts, &dispatcher_);
    tcp_port_ = *server_->ListenTcp("127.0.0.1", 0);
    udp_port_ = *server_->ListenUdp("127.0.0.1", 0);
    server_->Start();
    registry_.AddLocal(kPortmapProgram, 2, "tcp", tcp_port_);
    registry_.AddLocal(kPortmapProgram, 2, "udp", udp_port_);
    registry_.AddLocal(100003, 3, "tcp", 2049);
    registry_.AddLocal(100003, 3, "udp", 2049);
    registry_.AddLocal(100003, 3, "tcp6", 2049);
    registry_.AddLocal(100005, 1, "udp", 20048);
    registry_.AddLocal(100005, 3, "udp", 20048);
    registry_.AddLocal(100005, 3, "tcp", 20048);
  }
  void TearDown() override { server_->Stop(); }

  std::optional<Reply> CallUdp(uint32_t vers, uint32_t proc, const xdr::BufferChain& args) {
    uint32_t xid = next_xid_++;
    std::string call = EncodeCall(xid, vers, proc, args);
    int fd = reserved_ ? test_support::ConnectLoopbackFromReservedPort(SOCK_DGRAM, udp_port_)
                       : test_support::ConnectLoopback(SOCK_DGRAM, udp_port_);
    if (fd < 0) return std::nullopt;
    send(fd, call.data(), call.size(), 0);
    std::string buf(65536, '\0');
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    close(fd);
    if (n <= 0) return std::nullopt;
    buf.resize(static_cast<size_t>(n));
    return DecodeReply(buf, xid);
  }

  std::optional<Reply> CallTcp(uint32_t vers, uint32_t proc, const xdr::BufferChain& args) {
    uint32_t xid = next_xid_++;
    std::string call = EncodeCall(xid, vers, proc, args);
    uint8_t mark[4];
    EncodeRecordMark(static_cast<uint32_t>(call.size()), true, mark);
    call.insert(0, reinterpret_cast<char*>(mark), 4);
    int fd = reserved_ ? test_support::ConnectLoopbackFromReservedPort(SOCK_STREAM, tcp_port_)
                       : test_support::ConnectLoopback(SOCK_STREAM, tcp_port_);
    std::optional<Reply> out;
    if (fd >= 0 && send(fd, call.data(), call.size(), 0) == static_cast<ssize_t>(call.size())) {
      std::string msg;
      std::string header(4, '\0');
      while (recv(fd, header.data(), 4, MSG_WAITALL) == 4) {
        uint32_t m = U32At(header, 0);
        std::string frag(m & kMaxFragmentLength, '\0');
        if (!frag.empty() &&
            recv(fd, frag.data(), frag.size(), MSG_WAITALL) != static_cast<ssize_t>(frag.size())) {
          break;
        }
        msg += frag;
        if (m & kLastFragmentBit) {
          out = DecodeReply(msg, xid);
          break;
        }
      }
    }
    if (fd >= 0) close(fd);
    return out;
  }

  static xdr::BufferChain Mapping(uint32_t prog, uint32_t vers, uint32_t prot) {
    xdr::BufferChain c;
    xdr::Encoder e(&c);
    Encode(e, PmapMapping{prog, vers, prot, 0});
    return c;
  }
  static xdr::BufferChain Rpcb(uint32_t prog, uint32_t vers, const std::string& netid,
                               const std::string& addr = "", const std::string& owner = "") {
    xdr::BufferChain c;
    xdr::Encoder e(&c);
    Encode(e, RpcbArgs{prog, vers, netid, addr, owner});
    return c;
  }
  static std::string DecodeString(const std::string& results) {
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(results.data()), results.size());
    std::string s(d.String(1024));
    EXPECT_TRUE(d.ok());
    return s;
  }

  PortmapRegistry registry_;
  Program program_;
  Dispatcher dispatcher_;
  std::unique_ptr<RpcServer> server_;
  uint16_t tcp_port_ = 0;
  uint16_t udp_port_ = 0;
  uint32_t next_xid_ = 0x1000;
  bool reserved_ = false;  // calls from a reserved port: the superuser's
};

TEST_F(PortmapEndToEndTest, NullOnEveryVersion) {
  for (uint32_t v : {2u, 3u, 4u}) {
    auto r = CallUdp(v, 0, xdr::BufferChain());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->accept_stat, 0u);
    EXPECT_TRUE(r->results.empty());
  }
}

TEST_F(PortmapEndToEndTest, PmapGetport) {
  auto r = CallUdp(2, kPmapProcGetport, Mapping(100003, 3, kIpProtoTcp));
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->results.size(), 4u);
  EXPECT_EQ(U32At(r->results, 0), 2049u);
  r = CallTcp(2, kPmapProcGetport, Mapping(100005, 1, kIpProtoUdp));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(U32At(r->results, 0), 20048u);
  r = CallUdp(2, kPmapProcGetport, Mapping(123456, 1, kIpProtoUdp));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(U32At(r->results, 0), 0u);
}

TEST_F(PortmapEndToEndTest, PmapDumpOverTcp) {
  auto r = CallTcp(2, kPmapProcDump, xdr::BufferChain());
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->accept_stat, 0u);
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(r->results.data()), r->results.size());
  std::vector<PmapMapping> list;
  while (d.Bool()) {
    PmapMapping m;
    ASSERT_TRUE(Decode(d, &m));
    list.push_back(m);
  }
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.remaining(), 0u);
  EXPECT_EQ(list.size(), 7u);  // everything but the tcp6 entry
  bool found = false;
  for (const auto& m : list) {
    if (m.prog == 100005 && m.vers == 3 && m.prot == kIpProtoTcp) found = m.port == 20048;
  }
  EXPECT_TRUE(found);
}

TEST_F(PortmapEndToEndTest, RpcbGetaddrAnswersTheAddressCalled) {
  auto r = CallUdp(3, kRpcbProcGetaddr, Rpcb(100003, 3, "tcp"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(DecodeString(r->results), "127.0.0.1.8.1");
  // v4, empty netid: the transport of the call (tcp).
  r = CallTcp(4, kRpcbProcGetaddr, Rpcb(100005, 3, ""));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(DecodeString(r->results), "127.0.0.1.78.80");
  r = CallUdp(4, kRpcbProcGetaddr, Rpcb(999999, 1, "udp"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(DecodeString(r->results), "");
  // GETADDR falls back to another version; GETVERSADDR does not.
  r = CallUdp(4, kRpcbProcGetaddr, Rpcb(100005, 2, "udp"));
  EXPECT_EQ(DecodeString(r->results), "127.0.0.1.78.80");
  r = CallUdp(4, kRpcbProcGetversaddr, Rpcb(100005, 2, "udp"));
  EXPECT_EQ(DecodeString(r->results), "");
  r = CallUdp(4, kRpcbProcGetversaddr, Rpcb(100005, 1, "udp"));
  EXPECT_EQ(DecodeString(r->results), "127.0.0.1.78.80");
}

TEST_F(PortmapEndToEndTest, RpcbDumpV4) {
  auto r = CallTcp(4, kRpcbProcDump, xdr::BufferChain());
  ASSERT_TRUE(r.has_value());
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(r->results.data()), r->results.size());
  std::vector<RpcbArgs> list;
  while (d.Bool()) {
    RpcbArgs a;
    ASSERT_TRUE(Decode(d, &a));
    list.push_back(a);
  }
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(list.size(), 8u);
  bool v6 = false;
  for (const auto& a : list)
    v6 |= a.netid == "tcp6" && a.addr == "::.8.1" && a.owner == "superuser";
  EXPECT_TRUE(v6);
}

TEST_F(PortmapEndToEndTest, RpcbGetaddrlistAndGettime) {
  auto r = CallUdp(4, kRpcbProcGetaddrlist, Rpcb(100003, 3, "udp"));
  ASSERT_TRUE(r.has_value());
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(r->results.data()), r->results.size());
  int entries = 0;
  while (d.Bool()) {
    std::string maddr(d.String(256));
    std::string netid(d.String(256));
    uint32_t semantics = d.U32();
    std::string family(d.String(256));
    std::string proto(d.String(256));
    if (netid == "udp") {
      EXPECT_EQ(maddr, "127.0.0.1.8.1");
      EXPECT_EQ(semantics, 1u);
      EXPECT_EQ(family, "inet");
      EXPECT_EQ(proto, "udp");
    }
    ++entries;
  }
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(entries, 3);

  r = CallUdp(3, kRpcbProcGettime, xdr::BufferChain());
  ASSERT_TRUE(r.has_value());
  int64_t diff =
      static_cast<int64_t>(U32At(r->results, 0)) - static_cast<int64_t>(std::time(nullptr));
  EXPECT_LE(std::abs(diff), 2);
}

TEST_F(PortmapEndToEndTest, SetAndUnsetFromLoopback) {
  auto r = CallUdp(3, kRpcbProcSet, Rpcb(400000, 1, "udp", "0.0.0.0.4.0", "test"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(U32At(r->results, 0), 0u);  // an unprivileged port: nobody's
  reserved_ = true;
  r = CallUdp(3, kRpcbProcSet, Rpcb(400000, 1, "udp", "0.0.0.0.4.0", "test"));
  if (!r.has_value()) GTEST_SKIP() << "no reserved port to call from (not root?)";
  EXPECT_EQ(U32At(r->results, 0), 1u);
  r = CallUdp(3, kRpcbProcSet, Rpcb(400000, 1, "udp", "0.0.0.0.4.1", "test"));
  EXPECT_EQ(U32At(r->results, 0), 0u);  // already registered elsewhere
  r = CallUdp(2, kPmapProcGetport, Mapping(400000, 1, kIpProtoUdp));
  EXPECT_EQ(U32At(r->results, 0), 1024u);
  r = CallTcp(2, kPmapProcSet, [] {
    xdr::BufferChain c;
    xdr::Encoder e(&c);
    Encode(e, PmapMapping{400001, 2, kIpProtoTcp, 5555});
    return c;
  }());
  EXPECT_EQ(U32At(r->results, 0), 1u);
  r = CallTcp(4, kRpcbProcGetaddr, Rpcb(400001, 2, "tcp"));
  EXPECT_EQ(DecodeString(r->results), "127.0.0.1.21.179");
  r = CallUdp(2, kPmapProcUnset, Mapping(400000, 1, 0));
  EXPECT_EQ(U32At(r->results, 0), 1u);
  r = CallUdp(2, kPmapProcGetport, Mapping(400000, 1, kIpProtoUdp));
  EXPECT_EQ(U32At(r->results, 0), 0u);
}

TEST_F(PortmapEndToEndTest, UnavailableProceduresAndVersions) {
  auto r = CallUdp(2, 5, xdr::BufferChain());  // CALLIT
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->accept_stat, 3u);           // PROC_UNAVAIL
  r = CallUdp(4, 12, xdr::BufferChain());  // GETSTAT
  EXPECT_EQ(r->accept_stat, 3u);
  r = CallUdp(5, 0, xdr::BufferChain());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->accept_stat, 2u);  // PROG_MISMATCH
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(r->results.data()), r->results.size());
  EXPECT_EQ(d.U32(), 2u);
  EXPECT_EQ(d.U32(), 4u);
  r = CallUdp(2, kPmapProcGetport, xdr::BufferChain());  // no arguments
  EXPECT_EQ(r->accept_stat, 4u);                         // GARBAGE_ARGS
}

TEST_F(PortmapEndToEndTest, RpcbindAvailableSeesTheEmbeddedPortmapper) {
  EXPECT_TRUE(RpcbindAvailable("127.0.0.1", udp_port_, std::chrono::milliseconds(1000)));
}

TEST(RpcbindAvailableTest, FalseQuicklyWhenNothingListens) {
  // Grab a free port and release it: ECONNREFUSED comes back at once.
  uint16_t port = test_support::FreePort();
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(RpcbindAvailable("127.0.0.1", port, std::chrono::milliseconds(500)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(700));
}

TEST(RpcbindAvailableTest, FalseWithinTimeoutWhenPeerIsSilent) {
  uint16_t port = 0;
  int fd = test_support::BindLoopback(SOCK_DGRAM, &port);  // silent: never answers
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(RpcbindAvailable("127.0.0.1", port, std::chrono::milliseconds(300)));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(250));
  EXPECT_LT(took, std::chrono::milliseconds(800));
  close(fd);
  EXPECT_FALSE(RpcbindAvailable("not an address", 111));
}

// By hand only: serves the embedded portmapper on port 111 (tcp+udp,
// 127.0.0.1) for NFS3D_PORTMAP_SERVE_SECONDS seconds so rpcinfo can be tried,
// with --gtest_also_run_disabled_tests --gtest_filter='*ServeOnPort111*'.
TEST(PortmapManualTest, DISABLED_ServeOnPort111) {
  const char* secs = std::getenv("NFS3D_PORTMAP_SERVE_SECONDS");
  if (secs == nullptr) GTEST_SKIP() << "set NFS3D_PORTMAP_SERVE_SECONDS";
  PortmapRegistry registry;
  Program program = MakePortmapProgram(&registry);
  Dispatcher dispatcher;
  dispatcher.AddProgram(&program);
  RpcServer server(RpcServerOptions{}, &dispatcher);
  ASSERT_TRUE(server.ListenTcp("127.0.0.1", kPortmapPort).ok());
  ASSERT_TRUE(server.ListenUdp("127.0.0.1", kPortmapPort).ok());
  for (uint32_t v : {2u, 3u, 4u}) {
    registry.AddLocal(kPortmapProgram, v, "tcp", kPortmapPort, "superuser");
    registry.AddLocal(kPortmapProgram, v, "udp", kPortmapPort, "superuser");
  }
  registry.AddLocal(100003, 3, "tcp", 2049, "superuser");
  registry.AddLocal(100003, 3, "udp", 2049, "superuser");
  server.Start();
  std::this_thread::sleep_for(std::chrono::seconds(std::atoi(secs)));
  server.Stop();
}

}  // namespace
}  // namespace nfs3d::rpc

namespace nfs3d::rpc {
namespace {

// By hand only, against a system rpcbind in a private mount namespace (its
// /run/rpcbind.sock is shared by every network namespace otherwise):
//   unshare -m sh -c "mount -t tmpfs tmpfs /run && (rpcbind -f &) && sleep 1 &&
//     NFS3D_SYSTEM_RPCBIND=1 portmap_test --gtest_also_run_disabled_tests
//     --gtest_filter=*RegisterWithSystemRpcbind*"
TEST(RpcbindClientManualTest, DISABLED_RegisterWithSystemRpcbind) {
  if (std::getenv("NFS3D_SYSTEM_RPCBIND") == nullptr) GTEST_SKIP() << "set NFS3D_SYSTEM_RPCBIND";
  ASSERT_TRUE(RpcbindAvailable());
  ASSERT_TRUE(RegisterWithRpcbind(390123, 3, "udp", 2049).ok());
  ASSERT_TRUE(RegisterWithRpcbind(390123, 3, "tcp", 2049).ok());
  ASSERT_TRUE(RegisterWithRpcbind(390123, 3, "tcp", 2050).ok());  // replaces the stale entry
  EXPECT_FALSE(RegisterWithRpcbind(390123, 3, "bogus", 1).ok());
  std::system("rpcinfo -p 127.0.0.1 | grep 390123");
  ASSERT_TRUE(UnregisterAll().ok());
  EXPECT_NE(std::system("rpcinfo -p 127.0.0.1 | grep -q 390123"), 0);
}

}  // namespace
}  // namespace nfs3d::rpc
