// Issue 48, findings 6 (c) and 9: the two ends of a handover and what each
// may make the other do. `nfs3d --takeover` takes over only from a
// predecessor of its own user: a process of another uid listening on
// <state_dir>/handover.sock gets no Hello and hands over no write verifier,
// cached reply or lock. A successor that stops talking after the
// predecessor paused its listeners for it (or trickles its Ready a byte at a
// time) holds service up for seconds, not a minute: the pause is measured
// as the longest wait for a NULL answer over UDP, and printed.
#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "common/fd_channel.h"
#include "daemon/handover_format.h"
#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

constexpr uid_t kNobody = 65534;
constexpr uint64_t kFakeVerifier = 0x66616b6576657266;  // "fakeverf"
constexpr size_t kMaxFrame = 64 << 10;

class LocalHandoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (a predecessor of another uid)";
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-local-handover-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export");
    server_.Configure(dir_,
                      (dir_ / "export").string() + " 127.0.0.1(rw,insecure,no_root_squash)\n");
  }
  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  fs::path HandoverSocket() const { return dir_ / "state" / "handover.sock"; }

  fs::path dir_;
  NfsdProcess server_;
};

// In a child: a listener on `path` bound as root, then listening as uid
// 65534 (the credentials a connecting successor sees are those of listen),
// which answers a successor as a predecessor would: accepts, hands over a
// write verifier of its choosing and, after Ready, a cached reply. Reports
// on `report` each step it got to: L(istening), H(ello), R(eady); N when the
// successor sent no Hello.
pid_t FakePredecessor(const fs::path& path, int report) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  auto say = [report](char c) { (void)!write(report, &c, 1); };
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) _exit(2);
  if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(3);
  if (listen(fd, 4) != 0) _exit(4);
  say('L');
  FdChannel channel{OwnedFd(accept4(fd, nullptr, nullptr, SOCK_CLOEXEC))};
  (void)channel.SetTimeout(30);
  absl::StatusOr<FdFrame> hello = channel.Receive(kMaxFrame);
  if (!hello.ok()) {
    say('N');
    _exit(0);
  }
  say('H');
  handover::Answer answer;
  answer.accepted = true;
  answer.version = "fake";
  (void)channel.Send(handover::EncodeFrame(handover::Step::kAnswer, answer));
  handover::Sockets sockets;
  sockets.write_verifier = kFakeVerifier;
  (void)channel.Send(handover::EncodeFrame(handover::Step::kSockets, sockets));
  if (channel.Receive(kMaxFrame).ok()) {
    say('R');
    handover::State state;
    state.drc.push_back({"peer", 1, 100003, 3, 8, 0, "a planted reply"});
    (void)channel.Send(handover::EncodeFrame(handover::Step::kState, state));
  }
  pause();
  _exit(0);
}

TEST_F(LocalHandoverTest, TakeoverRefusesAPredecessorOfAnotherUser) {
  ASSERT_EQ(chmod((dir_ / "state").c_str(), 0700), 0);
  int report[2];
  ASSERT_EQ(pipe2(report, O_CLOEXEC), 0);
  const pid_t fake = FakePredecessor(HandoverSocket(), report[1]);
  close(report[1]);
  char step = 0;
  ASSERT_EQ(read(report[0], &step, 1), 1);
  ASSERT_EQ(step, 'L');

  std::optional<int> status = server_.TakeOverUntilExit("", absl::Seconds(30));
  kill(fake, SIGKILL);
  int ignored;
  waitpid(fake, &ignored, 0);
  std::string steps;
  for (char c; read(report[0], &c, 1) == 1;) steps += c;
  close(report[0]);
  const std::string log = server_.Log();
  std::printf("fake predecessor saw: '%s'\nsuccessor's log:\n%s", steps.c_str(), log.c_str());
  ASSERT_TRUE(status.has_value()) << "the successor serves after a fake predecessor's handover";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0);
  EXPECT_EQ(steps.find('H'), std::string::npos) << "the successor said Hello to uid 65534";
  EXPECT_EQ(steps.find('R'), std::string::npos) << "the successor took the fake's sockets";
  EXPECT_NE(log.find(absl::StrCat("runs as uid ", kNobody)), std::string::npos) << log;
}

// NULL calls over UDP, one after another, until stopped: the longest any
// waited for its answer, and when the last answered one was sent.
class Prober {
 public:
  explicit Prober(uint16_t port) {
    ClientOptions o;
    o.transport = rpc::Transport::kUdp;
    client_ = RawClient::Open(port, o);
    thread_ = std::thread([this] { Run(); });
  }
  ~Prober() {
    stop_ = true;
    thread_.join();
  }
  absl::Duration longest() {
    std::lock_guard<std::mutex> lock(mu_);
    return longest_;
  }
  // Sent at or after `t` and answered.
  bool AnsweredOneSentAfter(absl::Time t) {
    std::lock_guard<std::mutex> lock(mu_);
    return last_sent_ >= t;
  }

 private:
  void Run() {
    while (!stop_ && client_ != nullptr) {
      const absl::Time sent = absl::Now();
      std::optional<client::RpcReply> r =
          client_->Call(++xid_, nfs3::kProgram, 3, nfs3::kNull, "", absl::Seconds(120));
      const absl::Time answered = absl::Now();
      if (r) {
        std::lock_guard<std::mutex> lock(mu_);
        longest_ = std::max(longest_, answered - sent);
        last_sent_ = sent;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  std::unique_ptr<RawClient> client_;
  uint32_t xid_ = static_cast<uint32_t>(getpid()) << 16;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  absl::Duration longest_;
  absl::Time last_sent_ = absl::InfinitePast();
  std::thread thread_;
};

// A successor (root, as a real one) that says Hello, takes the sockets and
// then stalls; with `trickle` it sends a Ready's first bytes one at a time.
void StallAfterSockets(NfsdProcess& server, const fs::path& socket, bool trickle) {
  Prober prober(server.port());
  absl::SleepFor(absl::Milliseconds(300));
  absl::StatusOr<FdChannel> channel = FdChannel::Connect(socket.string());
  ASSERT_TRUE(channel.ok()) << channel.status();
  handover::Hello hello;
  hello.version = "stalling successor";
  ASSERT_TRUE(channel->Send(handover::EncodeFrame(handover::Step::kHello, hello)).ok());
  absl::StatusOr<FdFrame> answer = channel->Receive(kMaxFrame);
  ASSERT_TRUE(answer.ok()) << answer.status();
  absl::StatusOr<FdFrame> sockets = channel->Receive(kMaxFrame);
  ASSERT_TRUE(sockets.ok()) << sockets.status();
  const absl::Time stalled = absl::Now();
  std::printf("the predecessor paused and sent %zu sockets; the successor stalls%s\n",
              sockets->fds.size(), trickle ? " (trickling a Ready)" : "");
  // A frame header announcing 1000 bytes, then a byte a second.
  const std::string ready_start("\0\0\x03\xe8", 4);
  size_t sent = 0;
  absl::Time next_byte = stalled;
  while (!prober.AnsweredOneSentAfter(stalled) && absl::Now() - stalled < absl::Seconds(150)) {
    if (trickle && absl::Now() >= next_byte) {
      const char byte = sent < ready_start.size() ? ready_start[sent] : 0;
      if (send(channel->fd(), &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) ++sent;
      next_byte = absl::Now() + absl::Seconds(1);
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  const absl::Duration pause = prober.longest();
  std::printf("longest wait for a NULL answer: %s (service back %s after the stall began)\n",
              absl::FormatDuration(pause).c_str(),
              absl::FormatDuration(absl::Now() - stalled).c_str());
  EXPECT_TRUE(prober.AnsweredOneSentAfter(stalled)) << "service never came back";
  // Seconds, not a minute: the predecessor gives up on the successor.
  EXPECT_LT(pause, absl::Seconds(30));
}

TEST_F(LocalHandoverTest, AStalledSuccessorPausesServiceForSecondsOnly) {
  ASSERT_TRUE(server_.Start()) << server_.Log();
  StallAfterSockets(server_, HandoverSocket(), /*trickle=*/false);
  // The handover server is not wedged: a real successor takes over.
  EXPECT_TRUE(server_.TakeOver()) << server_.Log();
}

TEST_F(LocalHandoverTest, ATricklingSuccessorPausesServiceForSecondsOnly) {
  ASSERT_TRUE(server_.Start()) << server_.Log();
  StallAfterSockets(server_, HandoverSocket(), /*trickle=*/true);
  EXPECT_TRUE(server_.TakeOver()) << server_.Log();
}

}  // namespace
}  // namespace nfs3d::e2e
