// Issue 48, finding 4, against the nfs3d binary: with no rpcbind on the host
// it serves the portmapper on port 111 itself. A local caller from an
// unprivileged port can neither unset nor replace nfs3d's NFS and MOUNT
// mappings, GETPORT keeps answering nfs3d's ports, and root from a reserved
// port registers and unregisters its own program. Holds RESOURCE_LOCK
// nfs3d_system (port 111); skipped when port 111 is taken (a system rpcbind).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

#include "client/rpc_client.h"
#include "rpc/portmap_program.h"
#include "tests/integration/e2e_harness.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d {
namespace {

namespace fs = std::filesystem;
using rpc::PmapMapping;
using rpc::RpcbArgs;

constexpr uint32_t kNfs = 100003, kMount = 100005;

template <typename T>
std::string Encoded(const T& value) {
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  Encode(e, value);
  return c.Flatten();
}

class PortmapBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("hostile-portmap");
    server_.Configure(dir_, e2e::ExportLine(dir_, "127.0.0.1(rw)"));
    // The harness turns the portmapper off; this test wants nfs3d's own.
    std::ifstream in(dir_ / "nfs3d.conf");
    std::stringstream conf;
    conf << in.rdbuf();
    std::string text = conf.str();
    text.replace(text.find("portmapper = off"), 16, "portmapper = on");
    std::ofstream(dir_ / "nfs3d.conf") << text;
    ASSERT_TRUE(server_.Start()) << server_.Log();
    // Port 111 taken (a system rpcbind): the harness retried with the
    // portmapper off, and there is nothing of nfs3d's on 111 to test.
    if (server_.Log().find("nfs3d's own on port 111") == std::string::npos) {
      GTEST_SKIP() << "port 111 is taken (a system rpcbind?)";
    }
  }
  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  static std::unique_ptr<client::RpcClient> Client(rpc::Transport t, bool reserved) {
    client::RpcClientOptions o;
    o.transport = t;
    o.reserved_port = reserved;
    auto c = client::RpcClient::Connect("127.0.0.1", rpc::kPortmapPort, o);
    return c.ok() ? std::move(*c) : nullptr;
  }
  static std::optional<uint32_t> U32Call(client::RpcClient& c, uint32_t vers, uint32_t proc,
                                         const std::string& args) {
    auto r = c.Call(rpc::kPortmapProgram, vers, proc, test_support::Span(args));
    if (!r.ok() || r->reply_stat != 0 || r->accept_stat != 0 || r->results.size() != 4) {
      return std::nullopt;
    }
    xdr::Decoder d(test_support::Span(r->results));
    return d.U32();
  }
  uint32_t Getport(uint32_t prog, uint32_t prot) {
    auto c = Client(rpc::Transport::kUdp, false);
    if (c == nullptr) return 0;
    return U32Call(*c, 2, rpc::kPmapProcGetport, Encoded(PmapMapping{prog, 3, prot, 0}))
        .value_or(0);
  }
  void ExpectNfs3dPorts() {
    for (uint32_t prot : {rpc::kIpProtoTcp, rpc::kIpProtoUdp}) {
      EXPECT_EQ(Getport(kNfs, prot), server_.port());
      EXPECT_EQ(Getport(kMount, prot), server_.mount_port());
    }
  }

  fs::path dir_;
  e2e::NfsdProcess server_;
};

TEST_F(PortmapBinaryTest, UnprivilegedLocalCallerCannotRedirectClients) {
  ExpectNfs3dPorts();
  for (rpc::Transport t : {rpc::Transport::kUdp, rpc::Transport::kTcp}) {
    auto c = Client(t, /*reserved=*/false);
    ASSERT_NE(c, nullptr);
    for (uint32_t prog : {kNfs, kMount}) {
      EXPECT_EQ(
          U32Call(*c, 2, rpc::kPmapProcUnset, Encoded(PmapMapping{prog, 3, rpc::kIpProtoTcp, 0})),
          0u);
      EXPECT_EQ(
          U32Call(*c, 4, rpc::kRpcbProcUnset, Encoded(RpcbArgs{prog, 3, "", "", "superuser"})), 0u);
      EXPECT_EQ(
          U32Call(*c, 2, rpc::kPmapProcSet, Encoded(PmapMapping{prog, 3, rpc::kIpProtoTcp, 6666})),
          0u);
      EXPECT_EQ(U32Call(*c, 3, rpc::kRpcbProcSet,
                        Encoded(RpcbArgs{prog, 3, "udp", "127.0.0.1.26.10", "superuser"})),
                0u);
    }
  }
  ExpectNfs3dPorts();
}

TEST_F(PortmapBinaryTest, RootFromReservedPortRegistersItsOwn) {
  auto c = Client(rpc::Transport::kTcp, /*reserved=*/true);
  if (c == nullptr) GTEST_SKIP() << "no reserved port (not root?)";
  const std::string mapping = Encoded(PmapMapping{400400, 1, rpc::kIpProtoTcp, 5001});
  EXPECT_EQ(U32Call(*c, 2, rpc::kPmapProcSet, mapping), 1u);
  EXPECT_EQ(U32Call(*c, 2, rpc::kPmapProcGetport, mapping), 5001u);
  EXPECT_EQ(U32Call(*c, 2, rpc::kPmapProcUnset, mapping), 1u);
  EXPECT_EQ(U32Call(*c, 2, rpc::kPmapProcGetport, mapping), 0u);
  ExpectNfs3dPorts();
}

}  // namespace
}  // namespace nfs3d
