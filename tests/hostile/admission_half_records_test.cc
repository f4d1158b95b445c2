// Issue 48, finding 1: a host that opens many TCP connections and sends on
// each only the start of a record (a record mark declaring 64 KiB, then
// nothing) must not stop service for other hosts, must not hold the memory
// of its half records beyond its share, and loses such connections after the
// record deadline. The attacker speaks from 127.0.0.2, the honest client from
// 127.0.0.1 (both reach the server on loopback).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

constexpr uint32_t kNlmProgram = 100021;
constexpr uint32_t kNlmVersion4 = 4;

std::string Mark(uint32_t len, bool last) {
  const uint32_t be = htonl((last ? 0x80000000u : 0) | len);
  return std::string(reinterpret_cast<const char*>(&be), 4);
}

// The server's resident memory, in KiB (0 if unknown).
size_t RssKib(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

// A TCP connection of the attacking host, from 127.0.0.2 and a port below
// the ephemeral range (20000-31999): thousands of them leave the ports that
// other tests' servers pick (FreePort) free.
class AttackerConnection {
 public:
  static std::unique_ptr<AttackerConnection> Open(uint16_t server_port) {
    static uint16_t next = static_cast<uint16_t>(20000 + (getpid() % 12) * 1000);
    for (int tries = 0; tries < 12000; ++tries) {
      const uint16_t port = next;
      next = static_cast<uint16_t>(next >= 31999 ? 20000 : next + 1);
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return nullptr;
      sockaddr_in local{};
      local.sin_family = AF_INET;
      local.sin_port = htons(port);
      inet_pton(AF_INET, "127.0.0.2", &local.sin_addr);
      sockaddr_in server{};
      server.sin_family = AF_INET;
      server.sin_port = htons(server_port);
      server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      const int one = 1;  // a port whose last connection is in TIME_WAIT will do
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) == 0 &&
          connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) == 0) {
        return std::unique_ptr<AttackerConnection>(new AttackerConnection(fd));
      }
      close(fd);  // taken (another test, TIME_WAIT): the next port
    }
    return nullptr;
  }
  ~AttackerConnection() { close(fd_); }

  void Send(const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // closed by the server
      sent += static_cast<size_t>(n);
    }
  }
  // True once the server closed the connection (within `wait`).
  bool WaitClosed(absl::Duration wait) {
    const absl::Time deadline = absl::Now() + wait;
    while (absl::Now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      if (recv(fd_, buf, sizeof(buf), 0) <= 0) return true;
    }
    return false;
  }
  // True if the server has closed the connection already.
  bool ClosedNow() {
    char c;
    const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

 private:
  explicit AttackerConnection(int fd) : fd_(fd) {}
  int fd_;
};

class AdmissionTest : public ::testing::Test {
 protected:
  // `extra`: configuration lines after [nfsd]'s (may open [tcp]).
  void StartServer(const std::string& extra = "") {
    dir_ = FreshTestDir("admission");
    server_.Configure(dir_, ExportLine(dir_, "127.0.0.0/8(rw,insecure)"), extra);
    ASSERT_TRUE(server_.Start()) << server_.Log();
    auto mnt = RawClient::Open(server_.mount_port(), {});
    ASSERT_NE(mnt, nullptr);
    root_ = Mount(*mnt, (dir_ / "export").string());
    ASSERT_FALSE(root_.empty());
  }

  void TearDown() override {
    attackers_.clear();
    if (server_.pid() > 0) {
      EXPECT_TRUE(server_.Alive());
      server_.Stop();
    }
    fs::remove_all(dir_);
  }

  static std::unique_ptr<RawClient> Open(uint16_t port, rpc::Transport t, const char* from) {
    ClientOptions o;
    o.transport = t;
    o.local_ip = from;
    return RawClient::Open(port, o);
  }

  // Opens `n` connections from 127.0.0.2 and sends `bytes` on each (the
  // server may close some meanwhile).
  void Attack(size_t n, const std::string& bytes) {
    for (size_t i = 0; i < n; ++i) {
      auto c = AttackerConnection::Open(server_.port());
      ASSERT_NE(c, nullptr) << "connection " << i << ": " << strerror(errno);
      c->Send(bytes);
      attackers_.push_back(std::move(c));
    }
  }

  // A GETATTR of the export's root from 127.0.0.1: how long its answer took
  // (nullopt: none within 5 s).
  std::optional<absl::Duration> TimedGetattr(RawClient& c) {
    const absl::Time start = absl::Now();
    uint32_t status = 0;
    if (!Getattr(c, root_, &status) || status != 0) return std::nullopt;
    return absl::Now() - start;
  }

  fs::path dir_;
  NfsdProcess server_;
  std::string root_;
  std::vector<std::unique_ptr<AttackerConnection>> attackers_;
};

// 2,000 connections from one host, each stalled after a record mark that
// declares 64 KiB: with the record holding a server-wide call slot (1,024 by
// default) every call of every client stopped. Another host's NFS, MOUNT
// and NLM calls over TCP and UDP must still be answered, and promptly.
TEST_F(AdmissionTest, StalledHalfRecordsOfOneHostLeaveOthersServed) {
  rlimit rl{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
  rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, 8192);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_cur < 2200) GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << rl.rlim_max;
  StartServer();  // defaults: max_requests 1024, record_timeout 30 s
  auto before = Open(server_.port(), rpc::Transport::kTcp, "127.0.0.1");
  ASSERT_NE(before, nullptr);
  const size_t rss_before = RssKib(server_.pid());

  const absl::Time attack_start = absl::Now();
  Attack(2000, Mark(64 << 10, true));
  std::printf("2000 half records opened in %s\n",
              absl::FormatDuration(absl::Now() - attack_start).c_str());
  absl::SleepFor(absl::Seconds(2));  // the server has read every mark

  auto tcp = Open(server_.port(), rpc::Transport::kTcp, "127.0.0.1");
  auto udp = Open(server_.port(), rpc::Transport::kUdp, "127.0.0.1");
  auto mnt_tcp = Open(server_.mount_port(), rpc::Transport::kTcp, "127.0.0.1");
  auto mnt_udp = Open(server_.mount_port(), rpc::Transport::kUdp, "127.0.0.1");
  ASSERT_TRUE(tcp && udp && mnt_tcp && mnt_udp);
  absl::Duration worst = absl::ZeroDuration();
  for (int round = 0; round < 5; ++round) {
    for (RawClient* c : {before.get(), tcp.get(), udp.get()}) {
      std::optional<absl::Duration> took = TimedGetattr(*c);
      ASSERT_TRUE(took.has_value()) << "GETATTR unanswered, round " << round;
      std::printf("GETATTR from 127.0.0.1 (%s) beside 2000 stalled records: %.2f ms\n",
                  c == udp.get() ? "udp" : "tcp", absl::ToDoubleMilliseconds(*took));
      worst = std::max(worst, *took);
    }
    for (RawClient* c : {tcp.get(), udp.get()}) {
      auto nfs_null = c->Call(nfs3::kProgram, 3, nfs3::kNull, "");
      EXPECT_TRUE(nfs_null && nfs_null->accept_stat == 0) << "NFS NULL, round " << round;
      auto nlm_null = c->Call(kNlmProgram, kNlmVersion4, 0, "");
      EXPECT_TRUE(nlm_null && nlm_null->accept_stat == 0) << "NLM NULL, round " << round;
    }
    for (RawClient* c : {mnt_tcp.get(), mnt_udp.get()}) {
      auto mnt_null = c->Call(mount3::kProgram, 3, 0, "");
      EXPECT_TRUE(mnt_null && mnt_null->accept_stat == 0) << "MOUNT NULL, round " << round;
    }
  }
  const size_t rss_during = RssKib(server_.pid());
  std::printf("slowest GETATTR: %.2f ms; server RSS %zu KiB before, %zu KiB with 2000 stalled\n",
              absl::ToDoubleMilliseconds(worst), rss_before, rss_during);
  // The answers came while the stalled records still held their
  // connections (they are closed only after record_timeout, 30 s), not
  // because the deadline freed them: a behaviour, where a bound on the
  // latency would be a time assertion (the figure is printed above; the
  // issue asked for 100 ms).
  size_t still_open = 0;
  for (const auto& a : attackers_) still_open += a->ClosedNow() ? 0 : 1;
  EXPECT_EQ(still_open, attackers_.size());
  // Half records touch no memory for bytes that never came: 2,000 of them
  // cost their connections' small read buffers, not 64 KiB each.
  EXPECT_LT(rss_during, rss_before + 100 * 1024);
}

// A record that stops arriving is closed after [tcp] record_timeout; one
// that keeps arriving slowly is not, nor is an idle connection.
TEST_F(AdmissionTest, RecordThatStopsArrivingIsClosedAfterTheDeadline) {
  StartServer("\n[tcp]\nrecord_timeout = 1\n");
  auto idle = Open(server_.port(), rpc::Transport::kTcp, "127.0.0.2");
  auto stalled = Open(server_.port(), rpc::Transport::kTcp, "127.0.0.2");
  auto slow = Open(server_.port(), rpc::Transport::kTcp, "127.0.0.2");
  ASSERT_TRUE(idle && stalled && slow);

  // A NULL call in a record of 64 KiB + its header: the arguments' bytes
  // that follow the call are never read (NULL takes none).
  const std::string call = slow->EncodeCall(7, nfs3::kProgram, 3, nfs3::kNull, "");
  const std::string record = call + std::string((64 << 10) - call.size(), '\0');
  const absl::Time start = absl::Now();
  ASSERT_TRUE(stalled->SendBytes(Mark(record.size(), true) + record.substr(0, 1000)));
  ASSERT_TRUE(slow->SendBytes(Mark(record.size(), true)));
  // The slow one sends a piece every 300 ms for 3 s: three deadlines.
  size_t sent = 0;
  const size_t piece = record.size() / 11;
  std::optional<absl::Duration> closed_after;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(slow->SendBytes(record.substr(sent, piece)));
    sent += piece;
    const absl::Time next = absl::Now() + absl::Milliseconds(300);
    if (!closed_after && stalled->WaitClosed(absl::Milliseconds(300))) {
      closed_after = absl::Now() - start;
    }
    absl::SleepFor(next - absl::Now());
  }
  if (!closed_after && stalled->WaitClosed(absl::Seconds(5))) closed_after = absl::Now() - start;
  ASSERT_TRUE(closed_after.has_value()) << "the stalled record's connection stayed open";
  std::printf("stalled record closed after %.0f ms (record_timeout 1 s)\n",
              absl::ToDoubleMilliseconds(*closed_after));
  ASSERT_TRUE(slow->SendBytes(record.substr(sent)));
  std::optional<std::string> reply = slow->Receive(absl::Seconds(5));
  EXPECT_TRUE(reply.has_value()) << "the slow but steady record was not answered";
  auto still = idle->Call(nfs3::kProgram, 3, nfs3::kNull, "");
  EXPECT_TRUE(still && still->accept_stat == 0) << "an idle connection was closed";
}

// One host's half records may hold at most its share of memory: with
// [tcp] unfinished_per_client = 2M, eight connections that each hold 900 KiB
// of an unfinished record (in non-last fragments, read into memory) keep at
// most two; the others are closed. Another host's own half record is not
// touched by the first host's share.
TEST_F(AdmissionTest, HalfRecordsOfOneHostHoldAtMostItsShare) {
  StartServer("\n[tcp]\nrecord_timeout = 0\nunfinished_per_client = 2M\n");
  auto honest = Open(server_.port(), rpc::Transport::kTcp, "127.0.0.1");
  ASSERT_NE(honest, nullptr);
  // A NULL call padded to 900 KiB, in 15 fragments none of them the last.
  constexpr size_t kFragment = 60 << 10;
  std::string body = honest->EncodeCall(9, nfs3::kProgram, 3, nfs3::kNull, "");
  body.resize(15 * kFragment, '\0');
  std::string fragments;
  for (size_t at = 0; at < body.size(); at += kFragment) {
    fragments += Mark(kFragment, false) + body.substr(at, kFragment);
  }
  ASSERT_TRUE(honest->SendBytes(fragments));
  Attack(8, fragments);
  size_t closed = 0;
  for (auto& c : attackers_) closed += c->WaitClosed(absl::Seconds(3)) ? 1 : 0;
  std::printf("%zu of 8 connections holding 900 KiB half records closed (share 2 MiB)\n", closed);
  EXPECT_GE(closed, 6u);
  // The honest host's half record stayed: it finishes (an empty last
  // fragment) and is answered.
  ASSERT_TRUE(honest->SendBytes(Mark(0, true)));
  std::optional<std::string> reply = honest->Receive(absl::Seconds(5));
  EXPECT_TRUE(reply.has_value()) << "the other host's record was dropped";
}

// At max_connections a newcomer takes the place of an idle connection of the
// host with the most, not of the longest idle one: a host that holds its
// connections open (with half records, which leave them idle) cannot push
// another host's quiet mount out.
TEST_F(AdmissionTest, EvictionAtTheLimitTakesFromTheHostWithTheMost) {
  StartServer("max_connections = 4\n");
  auto honest = Open(server_.port(), rpc::Transport::kTcp, "127.0.0.1");
  ASSERT_NE(honest, nullptr);
  auto first = honest->Call(nfs3::kProgram, 3, nfs3::kNull, "");
  ASSERT_TRUE(first && first->accept_stat == 0);
  absl::SleepFor(absl::Milliseconds(200));  // the honest one is now the longest idle
  Attack(3, Mark(64 << 10, true));
  absl::SleepFor(absl::Milliseconds(200));
  // Two newcomers from a third host, kept open: each needs a place.
  std::vector<std::unique_ptr<RawClient>> newcomers;
  for (int i = 0; i < 2; ++i) {
    newcomers.push_back(Open(server_.port(), rpc::Transport::kTcp, "127.0.0.3"));
    ASSERT_NE(newcomers.back(), nullptr);
    auto r = newcomers.back()->Call(nfs3::kProgram, 3, nfs3::kNull, "");
    EXPECT_TRUE(r && r->accept_stat == 0) << "newcomer " << i;
  }
  auto again = honest->Call(nfs3::kProgram, 3, nfs3::kNull, "");
  EXPECT_TRUE(again && again->accept_stat == 0) << "the quiet host's connection was closed";
}

}  // namespace
}  // namespace nfs3d::e2e
