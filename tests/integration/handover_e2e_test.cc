// Handover of a running nfs3d to its successor (nfs3d --takeover), end to
// end with the binary: the ports stay open and the successor answers on
// them, file handles and the write verifier stay valid, a successor that
// cannot read the format is refused while the old process serves on, a
// non-idempotent call answered before the handover is answered from the
// cache when retransmitted after it (TCP and UDP), a half-sent record does
// not hold the handover up, a slow client and a flood of garbage across it
// are handled as the old process would, and kill -9 of either process at each step
// leaves a server that recovers as after a crash today.
#include <sys/wait.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "stats/metrics_server.h"
#include "stats/prom_text.h"
#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

class HandoverE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-handover-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export");
    server_.Configure(dir_,
                      (dir_ / "export").string() + " 127.0.0.1(rw,insecure,no_root_squash)\n");
  }

  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  void StartAndMount(const std::string& env = "") {
    server_.set_start_env(env);
    ASSERT_TRUE(server_.Start()) << server_.Log();
    client_ = Open(rpc::Transport::kTcp);
    ASSERT_NE(client_, nullptr);
    root_ = Mount(*client_, (dir_ / "export").string());
    ASSERT_FALSE(root_.empty());
  }

  std::unique_ptr<RawClient> Open(rpc::Transport transport) {
    ClientOptions o;
    o.transport = transport;
    return RawClient::Open(server_.port(), o);
  }

  // A GETATTR of the root over a new TCP connection.
  bool RootAnswers() {
    std::unique_ptr<RawClient> c = Open(rpc::Transport::kTcp);
    uint32_t status = 0xffffffffu;
    return c != nullptr && Getattr(*c, root_, &status).has_value() && status == nfs3::NFS3_OK;
  }

  fs::path dir_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> client_;
  std::string root_;
};

TEST_F(HandoverE2eTest, SuccessorServesTheSamePortsHandlesAndVerifier) {
  StartAndMount();
  NfsReply created = Nfs(*client_, nfs3::kCreate, CreateArgs(root_, "file"));
  ASSERT_EQ(created.status, nfs3::NFS3_OK);
  const std::string fh = NewHandle(created);
  // An UNSTABLE write: its data is safe only once a COMMIT answers with the
  // verifier the WRITE had.
  NfsReply wrote = Nfs(*client_, nfs3::kWrite,
                       Args().Opaque(fh).U64(0).U32(5).U32(nfs3::UNSTABLE).Opaque("hello").str());
  ASSERT_EQ(wrote.status, nfs3::NFS3_OK);
  const std::string before = CommitVerifier(*client_, fh);
  const pid_t old = server_.pid();

  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(server_.TakeOver()) << server_.Log();
    EXPECT_NE(server_.pid(), old);
    uint32_t status = 0;
    std::unique_ptr<RawClient> c = Open(rpc::Transport::kTcp);
    ASSERT_NE(c, nullptr);
    std::optional<Fattr> attr = Getattr(*c, fh, &status);
    ASSERT_TRUE(attr.has_value()) << "status " << status;
    EXPECT_EQ(attr->size, 5u);
    EXPECT_EQ(CommitVerifier(*c, fh), before) << "round " << round;
    std::unique_ptr<RawClient> u = Open(rpc::Transport::kUdp);
    ASSERT_NE(u, nullptr);
    EXPECT_TRUE(Getattr(*u, fh, &status).has_value());
  }
  const std::string log = server_.Log();
  EXPECT_NE(log.find("handed over to a successor"), std::string::npos);
  EXPECT_NE(log.find("(handed over)"), std::string::npos);
  EXPECT_TRUE(server_.Stop());
  EXPECT_FALSE(fs::exists(dir_ / "state" / "handover.sock"));
}

TEST_F(HandoverE2eTest, SuccessorThatCannotReadTheFormatIsRefused) {
  StartAndMount();
  const pid_t old = server_.pid();
  std::optional<int> status =
      server_.TakeOverUntilExit("NFS3D_TEST_HANDOVER_FORMAT=999", absl::Seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1);
  EXPECT_EQ(server_.pid(), old);
  EXPECT_TRUE(server_.Alive());
  EXPECT_TRUE(server_.Answers(rpc::Transport::kTcp));
  EXPECT_TRUE(server_.Answers(rpc::Transport::kUdp));
  EXPECT_TRUE(RootAnswers());
  EXPECT_NE(server_.Log().find("handover refused"), std::string::npos) << server_.Log();
  // An nfs3d of format 3 (before kTLS connections crossed) would take one
  // for a plain connection: refused too.
  status = server_.TakeOverUntilExit("NFS3D_TEST_HANDOVER_FORMAT=3", absl::Seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1);
  EXPECT_EQ(server_.pid(), old);
  EXPECT_TRUE(RootAnswers());
  EXPECT_NE(server_.Log().find("reads formats 3 to 3"), std::string::npos) << server_.Log();
  // A successor that reads it still can.
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  EXPECT_TRUE(RootAnswers());
}

// CREATE answered before the handover, retransmitted after it (same xid
// and arguments): the successor replays the reply instead of running it
// again (which would answer EXIST).
class HandoverDrcTest : public HandoverE2eTest,
                        public ::testing::WithParamInterface<rpc::Transport> {};

TEST_P(HandoverDrcTest, RetransmissionAfterTheHandoverIsAnsweredFromTheCache) {
  StartAndMount();
  std::unique_ptr<RawClient> c = Open(GetParam());
  ASSERT_NE(c, nullptr);
  const uint32_t xid = 0x40d00000u + static_cast<uint32_t>(GetParam());
  const std::string args = CreateArgs(root_, "once");
  std::optional<client::RpcReply> first = c->Call(xid, nfs3::kProgram, 3, nfs3::kCreate, args);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(ToNfsReply(first).status, nfs3::NFS3_OK);
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  // TCP: the client retransmits on a new connection, as after any
  // reconnect (its old one was handed over and stays open).
  if (GetParam() == rpc::Transport::kTcp) c = Open(GetParam());
  std::optional<client::RpcReply> again = c->Call(xid, nfs3::kProgram, 3, nfs3::kCreate, args);
  ASSERT_TRUE(again.has_value()) << c->last_failure();
  EXPECT_EQ(again->raw, first->raw) << server_.Log();
  // The same arguments under a new xid do run: EXIST.
  EXPECT_EQ(Nfs(*c, nfs3::kCreate, args).status, nfs3::NFS3ERR_EXIST);
  EXPECT_NE(server_.Log().find("took over 1 cached replies"), std::string::npos) << server_.Log();
}

INSTANTIATE_TEST_SUITE_P(Transports, HandoverDrcTest,
                         ::testing::Values(rpc::Transport::kTcp, rpc::Transport::kUdp),
                         [](const auto& info) {
                           return info.param == rpc::Transport::kTcp ? "Tcp" : "Udp";
                         });

// A client that sent half a record when the handover begins: the handover
// does not wait for the rest, and the server answers whole calls after it.
TEST_F(HandoverE2eTest, HalfSentRecordDoesNotHoldTheHandover) {
  StartAndMount();
  std::unique_ptr<RawClient> slow = Open(rpc::Transport::kTcp);
  ASSERT_NE(slow, nullptr);
  const std::string call =
      slow->EncodeCall(77, nfs3::kProgram, 3, nfs3::kGetattr, Args().Opaque(root_).str());
  const uint32_t mark = htonl(0x80000000u | static_cast<uint32_t>(call.size()));
  const std::string record = std::string(reinterpret_cast<const char*>(&mark), 4) + call;
  ASSERT_TRUE(slow->SendBytes(record.substr(0, record.size() / 2)));
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  EXPECT_TRUE(RootAnswers());
  // The rest of the record reaches either the successor (answered) or a
  // closed connection (the client reconnects and resends): never garbage.
  if (slow->SendBytes(record.substr(record.size() / 2))) {
    std::optional<std::string> reply = slow->Receive(absl::Seconds(5));
    if (reply.has_value()) {
      client::RpcReply r;
      ASSERT_TRUE(client::ParseReply(Span(*reply), &r));
      EXPECT_EQ(r.xid, 77u);
      EXPECT_EQ(r.accept_stat, 0u);
    }
  }
}

// Hostile traffic across a handover: a slow client trickling a record one
// byte at a time over the whole handover, and a flood of garbage (UDP
// datagrams, TCP records that declare 2 GiB) from other threads. The
// successor handles them as the old process would: the handover completes,
// the slow client's call is answered on its connection (which crossed),
// and the server answers others throughout and after.
TEST_F(HandoverE2eTest, SlowClientAndFloodAcrossTheHandover) {
  StartAndMount();
  std::unique_ptr<RawClient> slow = Open(rpc::Transport::kTcp);
  ASSERT_NE(slow, nullptr);
  const std::string call =
      slow->EncodeCall(78, nfs3::kProgram, 3, nfs3::kGetattr, Args().Opaque(root_).str());
  const uint32_t mark = htonl(0x80000000u | static_cast<uint32_t>(call.size()));
  const std::string record = std::string(reinterpret_cast<const char*>(&mark), 4) + call;
  std::atomic<bool> stop{false};
  std::atomic<int> sent_bytes{0};
  std::thread trickle([&] {
    for (char byte : record) {
      if (!slow->SendBytes(std::string(1, byte))) return;
      ++sent_bytes;
      usleep(1000000 / 50);  // the whole record takes a few seconds
    }
  });
  std::thread flood([&] {
    const uint32_t huge = htonl(0x80000000u | 0x7fffffffu);
    const std::string bogus_mark(reinterpret_cast<const char*>(&huge), 4);
    while (!stop.load()) {
      if (std::unique_ptr<RawClient> udp = Open(rpc::Transport::kUdp)) {
        for (int i = 0; i < 50; ++i) (void)udp->SendBytes(std::string(64 + i, '\xa5'));
      }
      if (std::unique_ptr<RawClient> tcp = Open(rpc::Transport::kTcp)) {
        (void)tcp->SendBytes(bogus_mark + std::string(1000, '\x5a'));
      }
      usleep(5000);
    }
  });
  usleep(300000);
  const bool took_over = server_.TakeOver();
  trickle.join();
  stop = true;
  flood.join();
  ASSERT_TRUE(took_over) << server_.Log();
  EXPECT_EQ(sent_bytes.load(), static_cast<int>(record.size()));
  std::optional<std::string> reply = slow->Receive(absl::Seconds(10));
  ASSERT_TRUE(reply.has_value()) << "the slow client's call was not answered";
  client::RpcReply r;
  ASSERT_TRUE(client::ParseReply(Span(*reply), &r));
  EXPECT_EQ(r.xid, 78u);
  EXPECT_EQ(r.accept_stat, 0u);
  EXPECT_TRUE(RootAnswers());
  EXPECT_TRUE(server_.Answers(rpc::Transport::kUdp));
}

// The statistics counters of the metrics page (the control socket's), by
// name and labels; the counters and histograms only, not the gauges.
std::map<std::string, double> Counters(const fs::path& state_dir) {
  std::map<std::string, double> out;
  absl::StatusOr<std::string> page =
      stats::HttpGet(stats::ControlSocketTarget(state_dir.string()), "/metrics");
  EXPECT_TRUE(page.ok()) << page.status();
  if (!page.ok()) return out;
  absl::StatusOr<std::vector<stats::Sample>> samples = stats::ParsePrometheusText(*page);
  EXPECT_TRUE(samples.ok()) << samples.status();
  if (!samples.ok()) return out;
  for (const stats::Sample& s : *samples) {
    const bool counter = s.name.starts_with("nfs3d_rpc_") || s.name.starts_with("nfs3d_read_") ||
                         s.name.starts_with("nfs3d_write_");
    if (!counter) continue;
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) absl::StrAppend(&key, ",", k, "=", v);
    out[key] = s.value;
  }
  return out;
}

TEST_F(HandoverE2eTest, StatisticsCountersGoOnAfterTheHandover) {
  StartAndMount();
  NfsReply created = Nfs(*client_, nfs3::kCreate, CreateArgs(root_, "counted"));
  ASSERT_EQ(created.status, nfs3::NFS3_OK);
  const std::string fh = NewHandle(created);
  ASSERT_EQ(Nfs(*client_, nfs3::kWrite,
                Args().Opaque(fh).U64(0).U32(5).U32(nfs3::FILE_SYNC).Opaque("hello").str())
                .status,
            nfs3::NFS3_OK);
  uint32_t status = 0;
  std::unique_ptr<RawClient> udp = Open(rpc::Transport::kUdp);
  ASSERT_NE(udp, nullptr);
  ASSERT_TRUE(Getattr(*udp, fh, &status).has_value());
  const fs::path state = dir_ / "state";
  const std::map<std::string, double> before = Counters(state);
  ASSERT_GE(before.at("nfs3d_write_bytes_total"), 5);
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  const std::map<std::string, double> after = Counters(state);
  int compared = 0;
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    ASSERT_NE(it, after.end()) << key << " is gone after the handover";
    EXPECT_GE(it->second, value) << key;
    ++compared;
  }
  EXPECT_GT(compared, 50);
  EXPECT_GE(after.at("nfs3d_write_bytes_total"), 5);
}

// kill -9 at each step of the handover, of the predecessor, the successor
// or both: afterwards a server is running or starts as after any crash, and
// what was written before is there.
struct KillPoint {
  const char* name;
  bool predecessor;  // the point is in the predecessor (else the successor)
};

class HandoverKillTest : public HandoverE2eTest, public ::testing::WithParamInterface<KillPoint> {};

TEST_P(HandoverKillTest, ServerRecovers) {
  const KillPoint point = GetParam();
  const std::string env = absl::StrCat("NFS3D_TEST_HANDOVER_KILL=", point.name);
  StartAndMount(point.predecessor ? env : "");
  NfsReply created = Nfs(*client_, nfs3::kCreate, CreateArgs(root_, "kept"));
  ASSERT_EQ(created.status, nfs3::NFS3_OK);
  const std::string fh = NewHandle(created);
  ASSERT_EQ(Nfs(*client_, nfs3::kWrite,
                Args().Opaque(fh).U64(0).U32(4).U32(nfs3::FILE_SYNC).Opaque("data").str())
                .status,
            nfs3::NFS3_OK);
  const pid_t old = server_.pid();
  const pid_t successor =
      server_.SpawnTakeover(point.predecessor ? "NFS3D_TEST_HANDOVER_KILL=none" : env);
  // Wait for the predecessor to be gone or to serve on, and the successor
  // to be gone or to serve: whichever the point leaves.
  int old_status = 0, new_status = 0;
  bool old_gone = false, new_gone = false;
  for (int i = 0; i < 600 && !(old_gone && new_gone); ++i) {
    if (!old_gone) old_gone = waitpid(old, &old_status, WNOHANG) == old;
    if (!new_gone) new_gone = waitpid(successor, &new_status, WNOHANG) == successor;
    // One of them is gone and the other answers: done. (A successor gone
    // is not enough: past Ready the predecessor has stopped and exits too,
    // a moment later, slowly under ASan.)
    if (old_gone != new_gone && server_.Answers(rpc::Transport::kTcp)) break;
    usleep(100000);
  }
  if (old_gone && new_gone) {
    // Nobody serves: restart as a supervisor would.
    server_.Adopt(-1);
    server_.set_start_env("");
    ASSERT_TRUE(server_.Start()) << server_.Log();
  } else {
    server_.Adopt(old_gone ? successor : old);
    // A predecessor serving on resumes its listeners once it sees the
    // successor gone, which may come a moment after the successor's exit.
    for (int i = 0; i < 100 && !(server_.Answers(rpc::Transport::kTcp) &&
                                 server_.Answers(rpc::Transport::kUdp));
         ++i) {
      usleep(100000);
    }
  }
  // Whoever serves now: both kinds of socket answer, the data is there.
  EXPECT_TRUE(server_.Answers(rpc::Transport::kTcp));
  EXPECT_TRUE(server_.Answers(rpc::Transport::kUdp));
  std::unique_ptr<RawClient> c = Open(rpc::Transport::kTcp);
  ASSERT_NE(c, nullptr);
  uint32_t status = 0;
  std::optional<Fattr> attr = Getattr(*c, fh, &status);
  ASSERT_TRUE(attr.has_value()) << status;
  EXPECT_EQ(attr->size, 4u);
  // And the next handover works.
  server_.set_start_env("");
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  EXPECT_TRUE(RootAnswers());
}

INSTANTIATE_TEST_SUITE_P(Points, HandoverKillTest,
                         ::testing::Values(KillPoint{"successor-sockets", false},
                                           KillPoint{"successor-ready", false},
                                           KillPoint{"predecessor-paused", true},
                                           KillPoint{"predecessor-finished", true}),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace nfs3d::e2e
