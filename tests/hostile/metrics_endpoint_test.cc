// Findings 7 and 8 of issue 48, as a local user or a host that reaches the
// metrics port sees them:
// - a control call's audit line names the caller the kernel saw
//   (SO_PEERCRED), whatever its X-Nfs3d-Who header claims, and what the
//   caller sent cannot forge log lines;
// - thousands of idle connections to /metrics, or the descriptor limit
//   reached, neither stop NFS service nor make the metrics thread spin;
// - the TCP page, which anyone who reaches the port reads, shows no client
//   addresses, uids or principals (root's unix socket has them).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

#include "stats/metrics_server.h"
#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

class MetricsHostileTest : public ::testing::Test {
 protected:
  void StartServer(const std::string& metrics_extra = "") {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("metrics-hostile-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export");
    metrics_port_ = FreePort();
    server_.Configure(dir_, ExportLine(dir_, "127.0.0.0/8(rw,insecure)"),
                      absl::StrCat("[metrics]\nenable = on\nlisten = 127.0.0.1\nport = ",
                                   metrics_port_, "\n", metrics_extra));
    ASSERT_TRUE(server_.Start()) << server_.Log();
  }
  void TearDown() override {
    for (int fd : held_) close(fd);
    server_.Stop();
  }

  // Opens `n` connections to the metrics port and leaves them idle (the
  // connect completes in the kernel's backlog whether or not nfs3d accepts).
  void HoldMetricsConnections(int n) {
    for (int i = 0; i < n; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      ASSERT_GE(fd, 0) << strerror(errno);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(metrics_port_);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
      held_.push_back(fd);
    }
  }

  // Limits nfs3d's descriptors to `limit` (soft and hard), as a site's
  // LimitNOFILE would, without restarting it.
  void LimitDescriptors(rlim_t limit) {
    rlimit rl{limit, limit};
    ASSERT_EQ(prlimit(server_.pid(), RLIMIT_NOFILE, &rl, nullptr), 0) << strerror(errno);
  }

  // The descriptors nfs3d has open: the highest number + 1.
  int DescriptorCeiling() const {
    int top = 0;
    for (const auto& e : fs::directory_iterator(absl::StrCat("/proc/", server_.pid(), "/fd"))) {
      top = std::max(top, std::atoi(e.path().filename().c_str()));
    }
    return top + 1;
  }

  // The lowest descriptor number nfs3d has free: with its limit there, every
  // accept fails with EMFILE.
  int LowestFreeDescriptor() const {
    std::set<int> open;
    for (const auto& e : fs::directory_iterator(absl::StrCat("/proc/", server_.pid(), "/fd"))) {
      open.insert(std::atoi(e.path().filename().c_str()));
    }
    int fd = 0;
    while (open.count(fd) != 0) ++fd;
    return fd;
  }

  // nfs3d's user+system CPU time in clock ticks.
  long CpuTicks() const {
    std::ifstream in(absl::StrCat("/proc/", server_.pid(), "/stat"));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the ")" that ends the command name: state is field 3,
    // utime 14 and stime 15.
    std::vector<std::string> f = absl::StrSplit(stat.substr(stat.rfind(')') + 2), ' ');
    return f.size() > 12 ? std::atol(f[11].c_str()) + std::atol(f[12].c_str()) : -1;
  }

  bool NullOverNewTcpConnection() {
    auto c = RawClient::Open(server_.port());
    if (!c) return false;
    std::optional<client::RpcReply> r = c->Call(1, nfs3::kProgram, 3, nfs3::kNull, "");
    return r && r->reply_stat == 0 && r->accept_stat == 0;
  }

  std::string ControlTarget() const {
    return stats::ControlSocketTarget((server_.dir() / "state").string());
  }

  fs::path dir_;
  uint16_t metrics_port_ = 0;
  NfsdProcess server_;
  std::vector<int> held_;
};

// A local user who can reach the control socket (root, or the account the
// server runs as) says it is someone else and sends an export line with a
// newline that would start a line of its own in the log.
TEST_F(MetricsHostileTest, AuditLineNamesThePeerUidAndEscapesWhatItLogs) {
  StartServer();
  const std::string forged = "FORGED nfs3d[1]: exports add / *(rw,no_root_squash) by root";
  absl::StatusOr<std::string> answer =
      stats::HttpCall(ControlTarget(), "POST", "/exports/add", "root@trusted-admin-host",
                      absl::StrCat("/srv 10.0.0.1(rw)\n", forged, "\r\x01"));
  // This server has no shared exports: the call is refused, and logged.
  ASSERT_FALSE(answer.ok());
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  std::string log;
  while (!absl::StrContains(log = server_.Log(), "/srv 10.0.0.1(rw)") && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  std::string audit;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, "/srv 10.0.0.1(rw)")) audit = std::string(line);
    EXPECT_FALSE(absl::StartsWith(line, "FORGED")) << "a forged log line:\n" << log;
  }
  ASSERT_FALSE(audit.empty()) << log;
  EXPECT_TRUE(absl::StrContains(audit, absl::StrCat("by uid ", getuid(), " ")))
      << "the audit line does not name the caller's uid: " << audit;
  EXPECT_FALSE(absl::StrContains(audit, "by root@trusted-admin-host")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, forged)) << "the body is not in the audit line: " << audit;
  EXPECT_FALSE(absl::StrContains(audit, "\r") || absl::StrContains(audit, "\x01")) << audit;
}

// Anyone who reaches the metrics port opens 2,000 connections and sends
// nothing; nfs3d runs with few descriptors to spare. A new NFS client must
// still be served.
TEST_F(MetricsHostileTest, IdleMetricsConnectionsDoNotStopNfs) {
  StartServer();
  rlimit mine;
  getrlimit(RLIMIT_NOFILE, &mine);
  if (mine.rlim_cur < 2100) {
    mine.rlim_cur = std::min<rlim_t>(mine.rlim_max, 4096);
    setrlimit(RLIMIT_NOFILE, &mine);
  }
  if (mine.rlim_cur < 2100) GTEST_SKIP() << "this test needs 2,100 descriptors";
  // Room for the server's own descriptors and 150 more: well below 2,000.
  LimitDescriptors(static_cast<rlim_t>(DescriptorCeiling() + 150));
  HoldMetricsConnections(2000);
  absl::SleepFor(absl::Seconds(1));  // nfs3d accepts what it will
  EXPECT_TRUE(NullOverNewTcpConnection())
      << "NFS over a new TCP connection is not served beside 2,000 idle metrics connections";
  // And a scrape still gets its page.
  EXPECT_TRUE(stats::HttpGet(absl::StrCat("127.0.0.1:", metrics_port_), "/metrics").ok());
}

// nfs3d is out of descriptors (EMFILE) while clients wait in the metrics
// port's backlog: the metrics thread must not spin on accept.
TEST_F(MetricsHostileTest, MetricsAcceptDoesNotSpinAtTheDescriptorLimit) {
  StartServer();
  LimitDescriptors(static_cast<rlim_t>(LowestFreeDescriptor()));
  HoldMetricsConnections(200);
  absl::SleepFor(absl::Milliseconds(500));
  const long before = CpuTicks();
  const absl::Time start = absl::Now();
  absl::SleepFor(absl::Seconds(1));
  const long after = CpuTicks();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  ASSERT_GE(before, 0);
  const double share = static_cast<double>(after - before) / sysconf(_SC_CLK_TCK) / seconds;
  std::printf("nfs3d at EMFILE with 200 clients in the metrics backlog: %.1f %% of a core\n",
              share * 100);
  // Backing off, nfs3d is about idle (~1 %); a spinning accept loop takes
  // all the CPU its thread gets: 36 % of a core on this loaded 2-core
  // machine, so the bound is 20 % rather than half a core.
  EXPECT_LT(share, 0.2) << "nfs3d used " << share * 100 << " % of a core at EMFILE";
}

// A client of uid 4242 from 127.0.0.7 makes calls; someone else reads the
// TCP page.
TEST_F(MetricsHostileTest, TcpPageShowsNoClientAddressesOrUsers) {
  StartServer();
  ClientOptions o;
  o.local_ip = "127.0.0.7";
  o.uid = 4242;
  o.gid = 4242;
  auto c = RawClient::Open(server_.port(), o);
  ASSERT_TRUE(c);
  const std::string root = Mount(*c, (dir_ / "export").string());
  ASSERT_FALSE(root.empty());
  uint32_t status = 0;
  for (int i = 0; i < 5; ++i) Getattr(*c, root, &status);
  // Root's page (the unix socket) has them: the accounting saw the calls.
  absl::StatusOr<std::string> root_page;
  for (int i = 0; i < 50; ++i) {
    root_page = stats::HttpGet(ControlTarget(), "/metrics");
    if (root_page.ok() && absl::StrContains(*root_page, "127.0.0.7")) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(root_page.ok()) << root_page.status();
  ASSERT_TRUE(absl::StrContains(*root_page, "client=\"127.0.0.7\"")) << *root_page;
  ASSERT_TRUE(absl::StrContains(*root_page, "user=\"4242\"")) << *root_page;

  absl::StatusOr<std::string> page =
      stats::HttpGet(absl::StrCat("127.0.0.1:", metrics_port_), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_FALSE(absl::StrContains(*page, "127.0.0.7")) << "a client address on the TCP page";
  EXPECT_FALSE(absl::StrContains(*page, "\"4242\"")) << "a client's uid on the TCP page";
  EXPECT_FALSE(absl::StrContains(*page, "nfs3d_client_calls_total")) << *page;
  EXPECT_FALSE(absl::StrContains(*page, "nfs3d_user_calls_total")) << *page;
  EXPECT_TRUE(absl::StrContains(*page, "nfs3d_export_calls_total")) << *page;
}

// A site that scrapes per-client series over a trusted network says so.
TEST_F(MetricsHostileTest, PerClientSeriesOnTcpOnlyWhenConfigured) {
  StartServer("tcp_per_client = on\n");
  auto c = RawClient::Open(server_.port(), ClientOptions{.local_ip = "127.0.0.8"});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Call(1, nfs3::kProgram, 3, nfs3::kNull, ""));
  bool seen = false;
  for (int i = 0; i < 50 && !seen; ++i) {
    absl::StatusOr<std::string> page =
        stats::HttpGet(absl::StrCat("127.0.0.1:", metrics_port_), "/metrics");
    seen = page.ok() && absl::StrContains(*page, "client=\"127.0.0.8\"");
    if (!seen) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace nfs3d::e2e
