// Issue 48, finding 4: nfs3d's own portmapper (served on port 111 when no
// rpcbind runs) must not let a local user redirect clients. A caller on
// loopback from an unprivileged port, or a process running as uid 1001,
// must neither remove nfs3d's NFS and MOUNT mappings nor set other ports
// over them; remote GETPORT keeps answering nfs3d's ports. Root, calling
// from a reserved port, registers and unregisters its own programs as with
// rpcbind. Registrations are bounded, so DUMP is always answered.
//
// The portmap program with the mappings the daemon adds (AddLocal), served
// by a real RpcServer on 127.0.0.1 with ephemeral ports; callers are real
// sockets (client::RpcClient).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "client/rpc_client.h"
#include "rpc/dispatcher.h"
#include "rpc/portmap_program.h"
#include "rpc/portmap_registry.h"
#include "rpc/rpc_server.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc {
namespace {

constexpr uint32_t kNfs = 100003, kMount = 100005, kNlm = 100021, kNsm = 100024;
constexpr uint16_t kNfsPort = 2049, kMountPort = 20048;
constexpr uint32_t kAttackerPort = 6666;
constexpr uid_t kLocalUser = 1001;

std::string Encoded(const PmapMapping& m) {
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  Encode(e, m);
  return c.Flatten();
}
std::string Encoded(const RpcbArgs& a) {
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  Encode(e, a);
  return c.Flatten();
}
absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// What an attacker tries: remove nfs3d's mappings and put its own port in
// their place, over v2 and v3/v4, claiming to be the superuser where the
// protocol lets it claim anything; and register a program of its own.
struct Attempt {
  uint32_t vers;
  uint32_t proc;
  std::string args;
};
std::vector<Attempt> Attacks() {
  std::vector<Attempt> a;
  for (uint32_t prog : {kNfs, kMount}) {
    a.push_back({2, kPmapProcUnset, Encoded(PmapMapping{prog, 3, kIpProtoTcp, 0})});
    a.push_back({3, kRpcbProcUnset, Encoded(RpcbArgs{prog, 3, "", "", "superuser"})});
    a.push_back({4, kRpcbProcUnset, Encoded(RpcbArgs{prog, 3, "udp", "", "superuser"})});
    a.push_back({2, kPmapProcSet, Encoded(PmapMapping{prog, 3, kIpProtoTcp, kAttackerPort})});
    a.push_back(
        {4, kRpcbProcSet, Encoded(RpcbArgs{prog, 3, "udp", "127.0.0.1.26.10", "superuser"})});
    a.push_back({3, kRpcbProcSet, Encoded(RpcbArgs{prog, 4, "tcp6", "::1.26.10", "superuser"})});
  }
  a.push_back({2, kPmapProcSet, Encoded(PmapMapping{400200, 1, kIpProtoUdp, kAttackerPort})});
  return a;
}

class PortmapOwnerTest : public ::testing::Test {
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
    // As daemon/daemon_impl.cc ServePortmapper.
    for (const char* netid : {"tcp", "udp"}) {
      for (uint32_t vers : {2, 3, 4}) registry_.AddLocal(kPortmapProgram, vers, netid, 111);
      registry_.AddLocal(kNfs, 3, netid, kNfsPort);
      for (uint32_t vers : {1, 3}) registry_.AddLocal(kMount, vers, netid, kMountPort);
      for (uint32_t vers : {1, 3, 4}) registry_.AddLocal(kNlm, vers, netid, kNfsPort);
      registry_.AddLocal(kNsm, 1, netid, kNfsPort);
    }
  }
  void TearDown() override { server_->Stop(); }

  std::unique_ptr<client::RpcClient> Client(Transport transport, bool reserved) {
    client::RpcClientOptions o;
    o.transport = transport;
    o.reserved_port = reserved;
    auto c = client::RpcClient::Connect("127.0.0.1",
                                        transport == Transport::kTcp ? tcp_port_ : udp_port_, o);
    return c.ok() ? std::move(*c) : nullptr;
  }

  // The boolean result of SET/UNSET, or nullopt without a SUCCESS reply.
  static std::optional<bool> Bool(client::RpcClient& c, const Attempt& a) {
    auto r = c.Call(kPortmapProgram, a.vers, a.proc, Bytes(a.args));
    if (!r.ok() || r->reply_stat != 0 || r->accept_stat != 0 || r->results.size() != 4) {
      return std::nullopt;
    }
    return r->results[3] != 0;
  }

  // What GETPORT answers for prog v3 over prot.
  uint32_t Getport(uint32_t prog, uint32_t prot) {
    auto c = Client(Transport::kUdp, false);
    if (c == nullptr) return 0;
    auto r = c->Call(kPortmapProgram, 2, kPmapProcGetport,
                     Bytes(Encoded(PmapMapping{prog, 3, prot, 0})));
    if (!r.ok() || r->results.size() != 4) return 0;
    xdr::Decoder d(Bytes(r->results));
    return d.U32();
  }

  void ExpectNfs3dPortsAnswered() {
    for (uint32_t prot : {kIpProtoTcp, kIpProtoUdp}) {
      EXPECT_EQ(Getport(kNfs, prot), kNfsPort) << prot;
      EXPECT_EQ(Getport(kMount, prot), kMountPort) << prot;
    }
  }

  // v2 DUMP and v4 DUMP: how many entries each lists (nullopt: no answer).
  std::optional<size_t> Dump(Transport transport, uint32_t vers) {
    auto c = Client(transport, false);
    if (c == nullptr) return std::nullopt;
    auto r = c->Call(kPortmapProgram, vers, vers == 2 ? kPmapProcDump : kRpcbProcDump, {});
    if (!r.ok() || r->reply_stat != 0 || r->accept_stat != 0) return std::nullopt;
    xdr::Decoder d(Bytes(r->results));
    size_t n = 0;
    while (d.Bool()) {
      if (vers == 2) {
        PmapMapping m;
        if (!Decode(d, &m)) return std::nullopt;
      } else {
        RpcbArgs a;
        if (!Decode(d, &a)) return std::nullopt;
      }
      ++n;
    }
    if (!d.ok()) return std::nullopt;
    return n;
  }

  PortmapRegistry registry_;
  Program program_;
  Dispatcher dispatcher_;
  std::unique_ptr<RpcServer> server_;
  uint16_t tcp_port_ = 0;
  uint16_t udp_port_ = 0;
};

TEST_F(PortmapOwnerTest, UnprivilegedPortCannotUnsetOrShadowNfs3dEntries) {
  const size_t before = registry_.Dump().size();
  int refused = 0, total = 0;
  for (Transport t : {Transport::kUdp, Transport::kTcp}) {
    auto c = Client(t, /*reserved=*/false);
    ASSERT_NE(c, nullptr);
    for (const Attempt& a : Attacks()) {
      std::optional<bool> ok = Bool(*c, a);
      ASSERT_TRUE(ok.has_value()) << "vers " << a.vers << " proc " << a.proc;
      EXPECT_FALSE(*ok) << "vers " << a.vers << " proc " << a.proc;
      refused += *ok ? 0 : 1;
      ++total;
    }
  }
  std::printf("unprivileged port: %d of %d SET/UNSET refused\n", refused, total);
  EXPECT_EQ(registry_.Dump().size(), before);
  ExpectNfs3dPortsAnswered();
}

// The same from a process running as a local user (uid 1001), which cannot
// even bind a reserved port to pass for root.
TEST_F(PortmapOwnerTest, LocalUserCannotUnsetOrShadowNfs3dEntries) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become uid " << kLocalUser;
  const size_t before = registry_.Dump().size();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const std::vector<Attempt> attacks = Attacks();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    // One byte per attempt: 0 refused, 1 accepted, 2 no answer; then 'r'
    // if a reserved port could be bound, else 'n'.
    if (setgid(kLocalUser) != 0 || setuid(kLocalUser) != 0) _exit(3);
    for (Transport t : {Transport::kUdp, Transport::kTcp}) {
      auto c = Client(t, false);
      for (const Attempt& a : attacks) {
        std::optional<bool> ok = c ? Bool(*c, a) : std::nullopt;
        const char b = ok ? (*ok ? 1 : 0) : 2;
        if (write(pipe_fds[1], &b, 1) != 1) _exit(4);
      }
    }
    const char r = Client(Transport::kUdp, /*reserved=*/true) ? 'r' : 'n';
    if (write(pipe_fds[1], &r, 1) != 1) _exit(4);
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) got.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_EQ(got.size(), 2 * attacks.size() + 1);
  for (size_t i = 0; i + 1 < got.size(); ++i) EXPECT_EQ(got[i], 0) << "attempt " << i;
  EXPECT_EQ(got.back(), 'n');  // uid 1001 bound no reserved port
  EXPECT_EQ(registry_.Dump().size(), before);
  ExpectNfs3dPortsAnswered();
}

TEST_F(PortmapOwnerTest, RootFromReservedPortRegistersAndUnregistersItsOwn) {
  auto c = Client(Transport::kUdp, /*reserved=*/true);
  if (c == nullptr) GTEST_SKIP() << "no reserved port (not root?)";
  const Attempt set{2, kPmapProcSet, Encoded(PmapMapping{400300, 1, kIpProtoUdp, 5000})};
  const Attempt unset{2, kPmapProcUnset, Encoded(PmapMapping{400300, 1, 0, 0})};
  EXPECT_EQ(Bool(*c, set), true);
  auto getport = [&] {
    auto r = c->Call(kPortmapProgram, 2, kPmapProcGetport,
                     Bytes(Encoded(PmapMapping{400300, 1, kIpProtoUdp, 0})));
    // Named: a temporary would die before the decoder reads it.
    const std::string results = r.ok() ? r->results : std::string();
    xdr::Decoder d(Bytes(results));
    return d.U32();
  };
  EXPECT_EQ(getport(), 5000u);
  // Its owner is the superuser, whatever r_owner says.
  EXPECT_EQ(registry_.Find(400300, 1, "udp", false)->owner, "superuser");
  // nfs3d's own stay where they are: SET over them fails for root too.
  EXPECT_EQ(Bool(*c, {2, kPmapProcSet, Encoded(PmapMapping{kNfs, 3, kIpProtoTcp, 7777})}), false);
  EXPECT_EQ(Bool(*c, unset), true);
  EXPECT_EQ(getport(), 0u);
  ExpectNfs3dPortsAnswered();
}

// 20,000 SETs of distinct programs from root's reserved port: only a bounded
// number is kept, nfs3d's entries stay, and DUMP (v2 over UDP, v4 over TCP
// and UDP) is answered with every entry.
TEST_F(PortmapOwnerTest, RegistrationsAreBoundedAndDumpIsAnswered) {
  auto c = Client(Transport::kUdp, /*reserved=*/true);
  if (c == nullptr) GTEST_SKIP() << "no reserved port (not root?)";
  int accepted = 0;
  for (uint32_t i = 0; i < 20'000; ++i) {
    // v4 with the longest address the protocol admits: the worst case for DUMP.
    const Attempt set{4, kRpcbProcSet,
                      Encoded(RpcbArgs{500000 + i, 1, i % 2 ? "udp6" : "tcp6",
                                       "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255.195.80",
                                       std::string(1000, 'o')})};
    std::optional<bool> ok = Bool(*c, set);
    ASSERT_TRUE(ok.has_value()) << i;
    accepted += *ok ? 1 : 0;
  }
  const size_t entries = registry_.Dump().size();
  std::optional<size_t> v2_udp = Dump(Transport::kUdp, 2);
  std::optional<size_t> v4_tcp = Dump(Transport::kTcp, 4);
  std::optional<size_t> v4_udp = Dump(Transport::kUdp, 4);
  std::printf("20000 SETs: %d accepted, %zu entries; DUMP v2/udp %s, v4/tcp %s, v4/udp %s\n",
              accepted, entries, v2_udp ? std::to_string(*v2_udp).c_str() : "unanswered",
              v4_tcp ? std::to_string(*v4_tcp).c_str() : "unanswered",
              v4_udp ? std::to_string(*v4_udp).c_str() : "unanswered");
  EXPECT_LE(accepted, 1000);
  ASSERT_TRUE(v4_tcp.has_value());
  ASSERT_TRUE(v4_udp.has_value());
  ASSERT_TRUE(v2_udp.has_value());
  EXPECT_EQ(*v4_tcp, entries);
  EXPECT_EQ(*v4_udp, entries);
  ExpectNfs3dPortsAnswered();
}

}  // namespace
}  // namespace nfs3d::rpc
