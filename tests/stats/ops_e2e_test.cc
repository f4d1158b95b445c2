// Operating the nfs3d binary: statistics over the wire match a known call
// sequence exactly; SIGHUP reloads exports and transfer sizes under a live
// TCP connection and keeps the old configuration when the new one is
// broken; SIGTERM during a write run exits 0 with the data in the file.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "client/rpc_client.h"
#include "stats/metrics_server.h"
#include "stats/prom_text.h"
#include "tests/integration/e2e_harness.h"
#include "tests/support/net.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"

namespace nfs3d {
namespace {

namespace fs = std::filesystem;
using client::RpcClient;
using client::RpcClientOptions;

using test_support::Span;

// Builds XDR argument bytes.
class Args {
 public:
  Args() : e_(&chain_) {}
  Args& Fh(const std::string& fh) {
    e_.Opaque(Span(fh));
    return *this;
  }
  Args& Str(const std::string& s) {
    e_.String(s);
    return *this;
  }
  Args& U32(uint32_t v) {
    e_.U32(v);
    return *this;
  }
  Args& U64(uint64_t v) {
    e_.U64(v);
    return *this;
  }
  std::string Bytes() const { return chain_.Flatten(); }

 private:
  xdr::BufferChain chain_;
  xdr::Encoder e_;
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class OpsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-ops-", getpid());
    fs::remove_all(dir_);
    for (const char* sub : {"a", "b"}) fs::create_directories(dir_ / sub);
    Configure({"a"}, "");
    ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
    port_ = nfsd_.port();
    mount_port_ = nfsd_.mount_port();
  }

  void TearDown() override {
    nfsd_.Kill9();
    fs::remove_all(dir_);
  }

  // Rewrites the exports (these subdirectories) and the configuration
  // (`extra`: more sections); the server reads them at start or SIGHUP.
  void Configure(const std::vector<std::string>& subdirs, const std::string& extra) {
    std::string exports;
    for (const std::string& s : subdirs) {
      exports += (dir_ / s).string() + " 127.0.0.1(rw,insecure,no_root_squash)\n";
    }
    nfsd_.Configure(dir_, exports, extra);
  }

  void Reload() { kill(nfsd_.pid(), SIGHUP); }

  std::unique_ptr<RpcClient> Client(uint16_t port, rpc::Transport t = rpc::Transport::kTcp) {
    RpcClientOptions o;
    o.transport = t;
    o.cred.flavor = kAuthSys;
    o.cred.machine = "ops";
    o.cred.uid = 0;
    o.cred.gid = 0;
    auto c = RpcClient::Connect("127.0.0.1", port, o);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(*c) : nullptr;
  }

  // MNT over `client`; returns the mountstat3 and the handle.
  uint32_t Mnt(RpcClient& client, const std::string& sub, std::string* fh = nullptr) {
    auto reply = client.Call(mount3::kProgram, 3, mount3::kMnt,
                             Span(Args().Str((dir_ / sub).string()).Bytes()));
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return 999;
    xdr::Decoder d(Span(reply->results));
    uint32_t status = d.U32();
    if (status == 0 && fh != nullptr) {
      auto bytes = d.Opaque(64);
      fh->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    return status;
  }

  // An NFSv3 call; returns nfsstat3 and the results.
  uint32_t Nfs(RpcClient& client, uint32_t proc, const std::string& args,
               std::string* results = nullptr) {
    auto reply = client.Call(nfs3::kProgram, 3, proc, Span(args));
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return 999;
    EXPECT_EQ(reply->accept_stat, 0u);
    if (results) *results = reply->results;
    xdr::Decoder d(Span(reply->results));
    return d.U32();
  }

  std::vector<stats::Sample> Metrics() {
    auto page =
        stats::HttpGet(absl::StrCat("unix:", (dir_ / "state/nfs3d.sock").string()), "/metrics");
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return {};
    auto samples = stats::ParsePrometheusText(*page);
    EXPECT_TRUE(samples.ok()) << samples.status();
    return samples.ok() ? *samples : std::vector<stats::Sample>{};
  }

  static double Value(const std::vector<stats::Sample>& samples, const std::string& name,
                      const std::map<std::string, std::string>& labels = {}) {
    double sum = 0;
    for (const stats::Sample& s : samples) {
      if (s.name != name) continue;
      bool match = true;
      for (const auto& [k, v] : labels) match = match && s.Label(k) == v;
      if (match) sum += s.value;
    }
    return sum;
  }

  // Waits until the reload counter for `result` reaches `n`.
  bool WaitReloads(const std::string& result, double n) {
    for (int i = 0; i < 100; ++i) {
      if (Value(Metrics(), "nfs3d_config_reloads_total", {{"result", result}}) >= n) return true;
      usleep(50000);
    }
    return false;
  }

  // Open TCP connections as the server counts them; waits up to 2 s for
  // `want` (closed probe connections are reaped asynchronously).
  double TcpConnections(double want) {
    double v = -1;
    for (int i = 0; i < 40; ++i) {
      v = Value(Metrics(), "nfs3d_tcp_connections");
      if (v == want) break;
      usleep(50000);
    }
    return v;
  }

  uint32_t FsinfoRtmax(RpcClient& client, const std::string& root) {
    std::string res;
    EXPECT_EQ(Nfs(client, nfs3::kFsinfo, Args().Fh(root).Bytes(), &res), 0u);
    xdr::Decoder d(Span(res));
    d.U32();
    if (d.U32()) {
      for (int i = 0; i < 21; ++i) d.U32();  // fattr3
    }
    return d.U32();  // rtmax
  }

  fs::path dir_;
  e2e::NfsdProcess nfsd_;
  uint16_t port_ = 0;
  uint16_t mount_port_ = 0;
};

TEST_F(OpsE2eTest, CountersMatchAKnownSequenceExactly) {
  auto mount = Client(mount_port_);
  auto nfs = Client(port_);
  auto nfs_udp = Client(port_, rpc::Transport::kUdp);
  ASSERT_TRUE(mount && nfs && nfs_udp);
  const auto before = Metrics();

  std::string root;
  ASSERT_EQ(Mnt(*mount, "a", &root), 0u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Nfs(*nfs, nfs3::kGetattr, Args().Fh(root).Bytes()), 0u);
  EXPECT_EQ(Nfs(*nfs_udp, nfs3::kGetattr, Args().Fh(root).Bytes()), 0u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(Nfs(*nfs, nfs3::kLookup, Args().Fh(root).Str("missing").Bytes()),
              uint32_t{nfs3::NFS3ERR_NOENT});
  }
  std::string res;
  ASSERT_EQ(Nfs(*nfs, nfs3::kCreate,
                Args()
                    .Fh(root)
                    .Str("f")
                    .U32(nfs3::UNCHECKED)
                    .U32(1)
                    .U32(0644)
                    .U32(0)
                    .U32(0)
                    .U32(0)
                    .U32(0)
                    .U32(0)
                    .Bytes(),
                &res),
            0u);
  xdr::Decoder d(Span(res));
  d.U32();
  ASSERT_EQ(d.U32(), 1u);  // handle follows
  auto fh_bytes = d.Opaque(64);
  const std::string fh(reinterpret_cast<const char*>(fh_bytes.data()), fh_bytes.size());
  const std::string data(1000, 'd');
  EXPECT_EQ(Nfs(*nfs, nfs3::kWrite,
                Args().Fh(fh).U64(0).U32(1000).U32(nfs3::FILE_SYNC).Str(data).Bytes()),
            0u);
  EXPECT_EQ(Nfs(*nfs, nfs3::kRead, Args().Fh(fh).U64(0).U32(4096).Bytes()), 0u);
  EXPECT_EQ(Nfs(*nfs, nfs3::kCommit, Args().Fh(fh).U64(0).U32(0).Bytes()), 0u);

  const auto after = Metrics();
  auto delta = [&](const std::string& name, const std::map<std::string, std::string>& labels) {
    return Value(after, name, labels) - Value(before, name, labels);
  };
  auto calls = [&](const char* program, const char* proc, const char* proto) {
    return delta("nfs3d_rpc_calls_total", {{"program", program}, {"proc", proc}, {"proto", proto}});
  };
  auto errors = [&](const char* proc) {
    return delta("nfs3d_rpc_errors_total", {{"program", "nfs"}, {"proc", proc}});
  };
  EXPECT_EQ(calls("mount", "MNT", "tcp"), 1);
  EXPECT_EQ(calls("nfs", "GETATTR", "tcp"), 3);
  EXPECT_EQ(calls("nfs", "GETATTR", "udp"), 1);
  EXPECT_EQ(calls("nfs", "LOOKUP", "tcp"), 2);
  EXPECT_EQ(errors("LOOKUP"), 2);
  EXPECT_EQ(errors("GETATTR"), 0);
  EXPECT_EQ(calls("nfs", "CREATE", "tcp"), 1);
  EXPECT_EQ(calls("nfs", "WRITE", "tcp"), 1);
  EXPECT_EQ(calls("nfs", "READ", "tcp"), 1);
  EXPECT_EQ(calls("nfs", "COMMIT", "tcp"), 1);
  EXPECT_EQ(calls("nfs", "NULL", "tcp"), 0);
  EXPECT_EQ(delta("nfs3d_rpc_messages_total", {}), 11);
  EXPECT_EQ(delta("nfs3d_read_bytes_total", {}), 1000);
  EXPECT_EQ(delta("nfs3d_write_bytes_total", {}), 1000);
  EXPECT_EQ(delta("nfs3d_write_size_bytes_bucket", {{"le", "1024"}}), 1);
  EXPECT_EQ(delta("nfs3d_sync_requests_total", {}), 2);  // FILE_SYNC WRITE + COMMIT
  EXPECT_EQ(delta("nfs3d_fsyncs_total", {}), 2);
  EXPECT_EQ(delta("nfs3d_rpc_duration_seconds_count", {{"proc", "GETATTR"}}), 4);
  EXPECT_EQ(TcpConnections(2), 2);
}

TEST_F(OpsE2eTest, SighupReloadsExportsAndSizesUnderALiveConnection) {
  auto mount = Client(mount_port_);
  auto nfs = Client(port_);
  ASSERT_TRUE(mount && nfs);
  std::string root_a;
  ASSERT_EQ(Mnt(*mount, "a", &root_a), 0u);
  EXPECT_NE(Mnt(*mount, "b"), 0u);
  EXPECT_EQ(FsinfoRtmax(*nfs, root_a), 1048576u);

  const std::string small_reads = "[tcp]\nrsize_max = 64K\nrsize_pref = 64K\n";
  Configure({"a", "b"}, small_reads);
  Reload();
  ASSERT_TRUE(WaitReloads("ok", 1)) << nfsd_.Log();
  // The same connections, new settings.
  EXPECT_EQ(Mnt(*mount, "b"), 0u);
  EXPECT_EQ(FsinfoRtmax(*nfs, root_a), 65536u);

  Configure({"b"}, small_reads);
  Reload();
  ASSERT_TRUE(WaitReloads("ok", 2));
  EXPECT_NE(Mnt(*mount, "a"), 0u);  // no longer exported
  EXPECT_EQ(Mnt(*mount, "b"), 0u);
  EXPECT_EQ(TcpConnections(2), 2);
}

TEST_F(OpsE2eTest, SighupWithABrokenFileKeepsTheOldConfig) {
  auto mount = Client(mount_port_);
  auto nfs = Client(port_);
  ASSERT_TRUE(mount && nfs);
  std::string root;
  ASSERT_EQ(Mnt(*mount, "a", &root), 0u);

  std::ofstream(dir_ / "exports") << (dir_ / "b").string() << " 127.0.0.1(rw,bogus_option)\n";
  Reload();
  ASSERT_TRUE(WaitReloads("failed", 1));
  EXPECT_EQ(Mnt(*mount, "a"), 0u);
  EXPECT_NE(Mnt(*mount, "b"), 0u);

  Configure({"a", "b"}, "[tcp]\nrsize_max = 64K\nno_such_key = 1\n");
  Reload();
  ASSERT_TRUE(WaitReloads("failed", 2));
  EXPECT_NE(Mnt(*mount, "b"), 0u);  // nothing of the failed reload applied
  EXPECT_EQ(FsinfoRtmax(*nfs, root), 1048576u);
  const std::string log = nfsd_.Log();
  EXPECT_NE(log.find("reload failed, keeping the old configuration"), std::string::npos) << log;
  EXPECT_NE(log.find("no_such_key"), std::string::npos) << log;
}

TEST_F(OpsE2eTest, SigtermDuringAWriteRunExitsCleanlyWithTheDataWritten) {
  auto mount = Client(mount_port_);
  ASSERT_TRUE(mount);
  std::string root;
  ASSERT_EQ(Mnt(*mount, "a", &root), 0u);
  auto nfs = Client(port_);
  std::string res;
  ASSERT_EQ(Nfs(*nfs, nfs3::kCreate,
                Args()
                    .Fh(root)
                    .Str("run")
                    .U32(nfs3::UNCHECKED)
                    .U32(1)
                    .U32(0644)
                    .U32(0)
                    .U32(0)
                    .U32(0)
                    .U32(0)
                    .U32(0)
                    .Bytes(),
                &res),
            0u);
  xdr::Decoder d(Span(res));
  d.U32();
  d.U32();
  auto fh_bytes = d.Opaque(64);
  const std::string fh(reinterpret_cast<const char*>(fh_bytes.data()), fh_bytes.size());

  // UNSTABLE 64 KiB writes, each block filled with its index, until the
  // server goes away.
  constexpr uint32_t kBlock = 65536;
  std::atomic<uint32_t> acknowledged{0};
  std::thread writer([&] {
    RpcClientOptions o;
    o.timeout = absl::Seconds(3);
    o.cred.flavor = kAuthSys;  // root, not squashed: may write the file
    o.cred.uid = 0;
    o.cred.gid = 0;
    auto c = RpcClient::Connect("127.0.0.1", port_, o);
    if (!c.ok()) return;
    for (uint32_t i = 0; i < 4096; ++i) {
      std::string block(kBlock, static_cast<char>('A' + i % 26));
      auto reply = (*c)->Call(nfs3::kProgram, 3, nfs3::kWrite,
                              Span(Args()
                                       .Fh(fh)
                                       .U64(uint64_t{i} * kBlock)
                                       .U32(kBlock)
                                       .U32(nfs3::UNSTABLE)
                                       .Str(block)
                                       .Bytes()));
      if (!reply.ok() || reply->results.size() < 4 || reply->results[3] != 0) return;
      acknowledged = i + 1;
    }
  });
  for (int i = 0; i < 10000 && acknowledged < 20; ++i) usleep(1000);
  ASSERT_GE(acknowledged, 20u) << "writes fail";
  const bool clean = nfsd_.Stop();  // SIGTERM
  writer.join();
  const std::string log = nfsd_.Log();
  ASSERT_TRUE(clean) << "nfs3d did not exit with status 0 within 30 s: " << log;
  EXPECT_NE(log.find("synced 1 exports"), std::string::npos) << log;
  // Every acknowledged block is in the file.
  const std::string file = ReadFile(dir_ / "a" / "run");
  ASSERT_GE(file.size(), uint64_t{acknowledged} * kBlock);
  for (uint32_t i = 0; i < acknowledged; ++i) {
    ASSERT_EQ(file[uint64_t{i} * kBlock], static_cast<char>('A' + i % 26)) << i;
    ASSERT_EQ(file[uint64_t{i} * kBlock + kBlock - 1], static_cast<char>('A' + i % 26)) << i;
  }
}

}  // namespace
}  // namespace nfs3d
