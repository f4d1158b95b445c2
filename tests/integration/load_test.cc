// Bounded load test against the nfs3d binary (loopback only, ~30 s): 1,000
// idle TCP connections held open, a few clients that pipeline big READs and
// never read the replies, a few that send half a record and stall, and a
// UDP flood of garbage and bogus calls — while another client's GETATTR loop
// must keep succeeding with bounded latency. Prints nfs3d's RSS before,
// during (peak) and after.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"
#include "tests/support/sanitizers.h"

namespace nfs3d::e2e {
namespace {

// Under ASan (quarantine, shadow memory, slower code) nfs3d needs several
// times the memory and is slower to answer.
constexpr bool kSanitized = test_support::kAddressSanitizer;
constexpr long kRssLimitKb = (kSanitized ? 2048 : 512) * 1024;

// VmRSS of pid in KiB.
long RssKb(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

int ConnectTcp(uint16_t port) {
  return test_support::ConnectLoopback(SOCK_STREAM, port, /*receive_timeout_s=*/0);
}

class LoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = std::max<rlim_t>(rl.rlim_cur, std::min<rlim_t>(rl.rlim_max, 16384));
    setrlimit(RLIMIT_NOFILE, &rl);  // inherited by nfs3d
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2200) GTEST_SKIP() << "RLIMIT_NOFILE too small: " << rl.rlim_cur;
    dir_ = FreshTestDir("load");
    std::ofstream(dir_ / "export/big") << std::string(1 << 20, 'b');
    server_.Configure(dir_, ExportLine(dir_, "127.0.0.1(rw,insecure)"));
    ASSERT_TRUE(server_.Start()) << server_.Log();
  }
  void TearDown() override {
    if (server_.pid() > 0) {
      EXPECT_TRUE(server_.Stop()) << "nfs3d did not exit cleanly";
    }
    fs::remove_all(dir_);
  }

  fs::path dir_;
  NfsdProcess server_;
};

TEST_F(LoadTest, IdleConnectionsSlowClientsAndUdpFloodDoNotStarveGetattr) {
  auto mnt = RawClient::Open(server_.mount_port(), {});
  std::string root = Mount(*mnt, (dir_ / "export").string());
  ASSERT_FALSE(root.empty());
  auto probe = RawClient::Open(server_.port(), {});
  LookupResult big = Lookup(*probe, root, "big");
  ASSERT_EQ(big.status, nfs3::NFS3_OK);
  const long rss_before = RssKb(server_.pid());

  // 1,000 idle connections.
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    int fd = ConnectTcp(server_.port());
    ASSERT_GE(fd, 0) << "connection " << i;
    idle.push_back(fd);
  }
  // Slow senders: half a record, then nothing.
  std::vector<int> stalled;
  for (int i = 0; i < 8; ++i) {
    int fd = ConnectTcp(server_.port());
    ASSERT_GE(fd, 0);
    uint32_t mark = htonl(0x80000000u | (1 << 20));
    std::string partial(reinterpret_cast<const char*>(&mark), 4);
    partial += std::string(60000, 'x');
    send(fd, partial.data(), partial.size(), MSG_NOSIGNAL);
    stalled.push_back(fd);
  }
  // Slow readers: 200 pipelined 256 KiB READs each, replies never read.
  std::vector<std::unique_ptr<RawClient>> slow_readers;
  for (int i = 0; i < 4; ++i) {
    auto c = RawClient::Open(server_.port(), {});
    ASSERT_NE(c, nullptr);
    int sndbuf = 1 << 20;
    setsockopt(c->fd(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    fcntl(c->fd(), F_SETFL, fcntl(c->fd(), F_GETFL) | O_NONBLOCK);
    for (int k = 0; k < 200; ++k) {
      std::string call = c->EncodeCall(0x51000 + k, nfs3::kProgram, 3, nfs3::kRead,
                                       Args().Opaque(big.fh).U64(0).U32(256 << 10).str());
      uint32_t mark = htonl(0x80000000u | static_cast<uint32_t>(call.size()));
      std::string rec = std::string(reinterpret_cast<const char*>(&mark), 4) + call;
      if (send(c->fd(), rec.data(), rec.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(rec.size()))
        break;
    }
    slow_readers.push_back(std::move(c));
  }

  // UDP flood: garbage datagrams and calls with bogus credentials.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> flood_sent{0};
  std::vector<std::thread> flooders;
  for (int t = 0; t < 2; ++t) {
    flooders.emplace_back([&, t] {
      auto udp = RawClient::Open(server_.port(), ClientOptions{rpc::Transport::kUdp});
      std::mt19937 rng(t);
      std::string garbage(1400, '\0');
      const std::string bogus =
          Args().U32(1).U32(0).U32(2).U32(nfs3::kProgram).U32(3).U32(1).U32(1).U32(401).str();
      while (!stop.load()) {
        for (char& ch : garbage) ch = static_cast<char>(rng());
        size_t len = 1 + rng() % garbage.size();
        udp->SendBytes((rng() & 1) ? garbage.substr(0, len) : bogus + garbage.substr(0, len % 64));
        flood_sent.fetch_add(1);
      }
    });
  }

  // The well-behaved client: GETATTR in a loop on its own connection, and
  // one over UDP (which retransmits through the flood).
  long rss_peak = 0;
  uint64_t ok_tcp = 0, ok_udp = 0, failed_tcp = 0, failed_udp = 0;
  std::string tcp_failure;
  absl::Duration worst = absl::ZeroDuration();
  {
    auto good = RawClient::Open(server_.port(), {});
    auto good_udp = RawClient::Open(server_.port(), ClientOptions{rpc::Transport::kUdp});
    ASSERT_NE(good, nullptr);
    absl::Time end = absl::Now() + absl::Seconds(15);
    absl::Time next_sample = absl::Now();
    while (absl::Now() < end) {
      absl::Time t0 = absl::Now();
      uint32_t status;
      // A starved call gets no reply at all; a slow one (a loaded machine, a
      // sanitizer build) gets one within this bound, which is no timing claim.
      if (Getattr(*good, root, &status, absl::Seconds(30)).has_value()) {
        ++ok_tcp;
      } else {
        ++failed_tcp;
        tcp_failure = good->last_failure();
      }
      worst = std::max(worst, absl::Now() - t0);
      if ((ok_tcp & 15) == 0) {
        if (Getattr(*good_udp, root, &status).has_value()) {
          ++ok_udp;
        } else {
          ++failed_udp;
        }
      }
      if (absl::Now() >= next_sample) {
        rss_peak = std::max(rss_peak, RssKb(server_.pid()));
        next_sample = absl::Now() + absl::Milliseconds(250);
      }
    }
  }
  stop = true;
  for (auto& t : flooders) t.join();
  rss_peak = std::max(rss_peak, RssKb(server_.pid()));

  for (int fd : idle) close(fd);
  for (int fd : stalled) close(fd);
  slow_readers.clear();
  // Let the server reap the connections and drain the workers.
  for (int i = 0; i < 30; ++i) {
    usleep(100000);
    if (server_.Answers(rpc::Transport::kTcp) && i > 10) break;
  }
  const long rss_after = RssKb(server_.pid());

  std::printf("load: nfs3d RSS before %ld KiB, peak during %ld KiB, after %ld KiB\n", rss_before,
              rss_peak, rss_after);
  std::printf(
      "load: GETATTR ok tcp %lu udp %lu, failed tcp %lu udp %lu, worst tcp latency %s; "
      "UDP flood %lu datagrams\n",
      static_cast<unsigned long>(ok_tcp), static_cast<unsigned long>(ok_udp),
      static_cast<unsigned long>(failed_tcp), static_cast<unsigned long>(failed_udp),
      absl::FormatDuration(worst).c_str(), static_cast<unsigned long>(flood_sent.load()));
  RecordProperty("rss_before_kb", std::to_string(rss_before));
  RecordProperty("rss_peak_kb", std::to_string(rss_peak));
  RecordProperty("rss_after_kb", std::to_string(rss_after));
  // Starvation shows as failed calls (each has its own bounded timeout); how
  // many succeed and how fast depends on the machine, so it is reported, not
  // asserted. Over TCP every call must be answered. Over UDP, while the flood
  // outruns the server (a slow machine, a sanitizer build), the kernel drops
  // datagrams from the full socket buffer before nfs3d sees them, the good
  // client's among them; no server can prevent that, and a UDP client
  // retransmits. So UDP must get through, not every call.
  EXPECT_EQ(failed_tcp, 0u) << "last failure: " << tcp_failure;
  EXPECT_GT(ok_tcp, 0u);
  EXPECT_GT(ok_udp, failed_udp);
  EXPECT_LT(rss_peak, kRssLimitKb) << "nfs3d's RSS under load";
  EXPECT_TRUE(server_.Alive());
}

}  // namespace
}  // namespace nfs3d::e2e
