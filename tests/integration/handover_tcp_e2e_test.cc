// Established TCP connections across a handover (nfs3d --takeover), end to
// end with the binary: a client keeps its one connection through several
// handovers and never sees it close, a record sent half before and half
// after the handover is answered by the successor on the same connection
// (also a spliced WRITE), calls pipelined while the handover runs each get
// exactly one reply; the connections of a listener the new configuration
// drops are closed, and all of them close, as before, when the state does
// not reach the successor.
#include <arpa/inet.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

class HandoverTcpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-handover-tcp-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export");
  }

  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  void StartAndMount(const std::string& extra = "") {
    server_.Configure(dir_, (dir_ / "export").string() + " 127.0.0.1(rw,insecure,no_root_squash)\n",
                      extra);
    ASSERT_TRUE(server_.Start()) << server_.Log();
    client_ = Open();
    ASSERT_NE(client_, nullptr);
    root_ = Mount(*client_, (dir_ / "export").string());
    ASSERT_FALSE(root_.empty());
  }

  std::unique_ptr<RawClient> Open() {
    ClientOptions o;
    o.transport = rpc::Transport::kTcp;
    return RawClient::Open(server_.port(), o);
  }

  std::string NewFile(const std::string& name) {
    NfsReply created = Nfs(*client_, nfs3::kCreate, CreateArgs(root_, name));
    EXPECT_EQ(created.status, nfs3::NFS3_OK);
    return NewHandle(created);
  }

  // A call as a TCP record in one last fragment.
  static std::string Record(RawClient& c, uint32_t xid, uint32_t proc, const std::string& args) {
    const std::string call = c.EncodeCall(xid, nfs3::kProgram, 3, proc, args);
    const uint32_t mark = htonl(0x80000000u | static_cast<uint32_t>(call.size()));
    return std::string(reinterpret_cast<const char*>(&mark), 4) + call;
  }

  // The reply to `xid` on `c` (nothing else is outstanding there).
  static NfsReply ReplyTo(RawClient& c, uint32_t xid) {
    std::optional<std::string> m = c.Receive(absl::Seconds(10));
    client::RpcReply r;
    if (!m || !client::ParseReply(Span(*m), &r) || r.xid != xid) return NfsReply{};
    r.raw = std::move(*m);
    return ToNfsReply(r);
  }

  fs::path dir_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> client_;
  std::string root_;
};

TEST_F(HandoverTcpTest, OneConnectionLivesThroughSeveralHandovers) {
  StartAndMount();
  const std::string fh = NewFile("kept");
  std::unique_ptr<RawClient> c = Open();
  ASSERT_NE(c, nullptr);
  const uint16_t local_port = c->local_port();
  uint32_t status = 0;
  ASSERT_TRUE(Getattr(*c, fh, &status).has_value()) << status;
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(server_.TakeOver()) << server_.Log();
    // The same socket: answered by the successor, never closed.
    ASSERT_TRUE(Getattr(*c, fh, &status).has_value())
        << "round " << round << ": " << c->last_failure() << server_.Log();
    EXPECT_EQ(Nfs(*c, nfs3::kWrite,
                  Args().Opaque(fh).U64(round).U32(1).U32(nfs3::FILE_SYNC).Opaque("x").str())
                  .status,
              nfs3::NFS3_OK);
  }
  EXPECT_EQ(c->local_port(), local_port);
  EXPECT_FALSE(c->WaitClosed(absl::Milliseconds(100)));
  // The mount's connection came along too.
  EXPECT_TRUE(Getattr(*client_, fh, &status).has_value());
  EXPECT_NE(server_.Log().find("took over 2 of 2 TCP connections"), std::string::npos)
      << server_.Log();
}

// The first part of each record reaches the predecessor, the rest the
// successor: cut inside the record mark, inside the call header, and in a
// WRITE's data.
TEST_F(HandoverTcpTest, HalfSentRecordIsAnsweredByTheSuccessor) {
  StartAndMount();
  const std::string fh = NewFile("half");
  const std::string data(100000, 'h');
  struct Half {
    std::unique_ptr<RawClient> c;
    uint32_t xid;
    std::string record;
    size_t cut;
  };
  std::vector<Half> halves;
  for (size_t i = 0; i < 3; ++i) {
    Half h{Open(), 0x7c000000u + static_cast<uint32_t>(i), "", 0};
    ASSERT_NE(h.c, nullptr);
    h.record = i < 2 ? Record(*h.c, h.xid, nfs3::kGetattr, Args().Opaque(root_).str())
                     : Record(*h.c, h.xid, nfs3::kWrite,
                              Args()
                                  .Opaque(fh)
                                  .U64(0)
                                  .U32(data.size())
                                  .U32(nfs3::FILE_SYNC)
                                  .Opaque(data)
                                  .str());
    h.cut = i == 0 ? 2 : i == 1 ? 20 : h.record.size() / 2;
    ASSERT_TRUE(h.c->SendBytes(h.record.substr(0, h.cut)));
    halves.push_back(std::move(h));
  }
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  for (Half& h : halves) {
    ASSERT_TRUE(h.c->SendBytes(h.record.substr(h.cut)));
    NfsReply r = ReplyTo(*h.c, h.xid);
    ASSERT_TRUE(r.ok) << "cut at " << h.cut << ": " << server_.Log();
    EXPECT_EQ(r.accept_stat, 0u);
    EXPECT_EQ(r.status, nfs3::NFS3_OK);
  }
  uint32_t status = 0;
  std::optional<Fattr> attr = Getattr(*halves[2].c, fh, &status);
  ASSERT_TRUE(attr.has_value()) << status;
  EXPECT_EQ(attr->size, data.size());
}

// A big WRITE whose data is spliced from the socket into a pipe
// ([tcp] splice_writes) when the handover comes: the part in the pipe goes
// along with the connection.
TEST_F(HandoverTcpTest, HalfSplicedWriteIsAnsweredByTheSuccessor) {
  StartAndMount("\n[tcp]\nsplice_writes = 64K\n");
  const std::string fh = NewFile("spliced");
  std::string data(1 << 20, 's');
  for (size_t i = 0; i < data.size(); i += 4096) data[i] = static_cast<char>('a' + i / 4096 % 26);
  std::unique_ptr<RawClient> c = Open();
  ASSERT_NE(c, nullptr);
  const std::string record =
      Record(*c, 0x7d000001u, nfs3::kWrite,
             Args().Opaque(fh).U64(0).U32(data.size()).U32(nfs3::FILE_SYNC).Opaque(data).str());
  ASSERT_TRUE(c->SendBytes(record.substr(0, record.size() / 2)));
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  ASSERT_TRUE(c->SendBytes(record.substr(record.size() / 2)));
  NfsReply r = ReplyTo(*c, 0x7d000001u);
  ASSERT_TRUE(r.ok) << server_.Log();
  EXPECT_EQ(r.status, nfs3::NFS3_OK);
  NfsReply read = Nfs(*c, nfs3::kRead, Args().Opaque(fh).U64(0).U32(data.size()).str());
  ASSERT_EQ(read.status, nfs3::NFS3_OK);
  EXPECT_NE(read.results.find(data), std::string::npos) << "the data read back differs";
}

// GETATTRs and WRITEs pipelined on one connection, round after round from
// a thread of their own while the handover runs: each call gets exactly one
// reply, and the connection stays open.
TEST_F(HandoverTcpTest, CallsInFlightDuringTheHandoverGetOneReplyEach) {
  StartAndMount();
  const std::string fh = NewFile("pipelined");
  std::unique_ptr<RawClient> c = Open();
  ASSERT_NE(c, nullptr);
  const std::string chunk(8192, 'p');
  std::atomic<bool> stop{false};
  std::atomic<bool> send_failed{false};
  std::vector<uint32_t> sent;  // the sender's until joined
  std::thread sender([&] {
    uint32_t xid = 0x7e000000u;
    while (!stop.load()) {
      std::string bytes;
      for (int i = 0; i < 32; ++i) {
        sent.push_back(xid);
        bytes += Record(*c, xid++, nfs3::kGetattr, Args().Opaque(fh).str());
      }
      for (int i = 0; i < 4; ++i) {
        sent.push_back(xid);
        bytes += Record(*c, xid++, nfs3::kWrite,
                        Args()
                            .Opaque(fh)
                            .U64(static_cast<uint64_t>(i) * chunk.size())
                            .U32(chunk.size())
                            .U32(nfs3::UNSTABLE)
                            .Opaque(chunk)
                            .str());
      }
      if (!c->SendBytes(bytes)) {
        send_failed = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::map<uint32_t, int> replies;  // xid -> replies seen
  size_t wrong = 0;
  // Reads replies until none came for `wait`, or 64 of them.
  auto drain = [&](absl::Duration wait) {
    for (int n = 0; n < 64; ++n) {
      std::optional<std::string> m = c->Receive(wait);
      if (!m) return;
      client::RpcReply r;
      if (!client::ParseReply(Span(*m), &r) || ToNfsReply(r).status != nfs3::NFS3_OK) ++wrong;
      ++replies[r.xid];
    }
  };
  while (replies.size() < 100) drain(absl::Milliseconds(50));  // the pipeline runs
  const pid_t old = server_.pid();
  const pid_t successor = server_.SpawnTakeover();
  int old_status = -1;
  bool old_gone = false;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (!old_gone && absl::Now() < give_up) {
    drain(absl::Milliseconds(5));
    old_gone = waitpid(old, &old_status, WNOHANG) == old;
  }
  for (int i = 0; i < 10; ++i) drain(absl::Milliseconds(5));  // and on through the successor
  stop = true;
  // The sender may wait for the socket to take its last round: replies
  // are read meanwhile, so the server reads on.
  std::atomic<bool> joined{false};
  std::thread joiner([&] {
    sender.join();
    joined = true;
  });
  while (!joined.load()) drain(absl::Milliseconds(5));
  joiner.join();
  ASSERT_TRUE(old_gone) << server_.Log();
  EXPECT_TRUE(WIFEXITED(old_status) && WEXITSTATUS(old_status) == 0);
  server_.Adopt(successor);
  EXPECT_FALSE(send_failed.load());
  // Every reply still due arrives; a second reply to any call would be
  // counted too.
  const absl::Time until = absl::Now() + absl::Seconds(20);
  while (replies.size() < sent.size() && absl::Now() < until) drain(absl::Milliseconds(100));
  for (int i = 0; i < 4; ++i) drain(absl::Milliseconds(50));
  size_t missing = 0, twice = 0;
  for (uint32_t xid : sent) {
    auto it = replies.find(xid);
    missing += it == replies.end();
    twice += it != replies.end() && it->second > 1;
  }
  EXPECT_EQ(replies.size(), sent.size());
  EXPECT_EQ(missing, 0u) << "of " << sent.size() << "\n" << server_.Log();
  EXPECT_EQ(twice, 0u);
  EXPECT_EQ(wrong, 0u);
  EXPECT_FALSE(c->WaitClosed(absl::Milliseconds(100)));
  EXPECT_NE(server_.Log().find("took over 2 of 2 TCP connections"), std::string::npos)
      << server_.Log();
}

// A listener the new configuration drops takes its connections along: the
// successor closes them (their clients reconnect to a port that stays);
// the connections of the ports that stay go on.
TEST_F(HandoverTcpTest, ConnectionsOfADroppedListenerAreClosed) {
  StartAndMount();
  std::unique_ptr<RawClient> nfs = Open();
  ClientOptions o;
  o.transport = rpc::Transport::kTcp;
  std::unique_ptr<RawClient> mount = RawClient::Open(server_.mount_port(), o);
  ASSERT_NE(nfs, nullptr);
  ASSERT_NE(mount, nullptr);
  ASSERT_TRUE(nfs->Call(nfs3::kProgram, 3, 0, "").has_value());
  ASSERT_TRUE(mount->Call(mount3::kProgram, 3, 0, "").has_value());
  // The MOUNT service moves to another port.
  const fs::path conf = dir_ / "nfs3d.conf";
  std::ifstream in(conf);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string old_line = absl::StrCat("mountd_port = ", server_.mount_port());
  ASSERT_NE(text.find(old_line), std::string::npos);
  text.replace(text.find(old_line), old_line.size(), absl::StrCat("mountd_port = ", FreePort()));
  std::ofstream(conf) << text;
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  EXPECT_TRUE(mount->WaitClosed(absl::Seconds(10)));
  EXPECT_TRUE(nfs->Call(nfs3::kProgram, 3, 0, "").has_value()) << nfs->last_failure();
  EXPECT_NE(server_.Log().find("no listener here any more"), std::string::npos) << server_.Log();
}

// The predecessor dies after its connections stopped, before the state
// reaches the successor: the connections close as before connections were
// handed over, the clients reconnect and are answered by the successor.
TEST_F(HandoverTcpTest, ConnectionsCloseWhenTheStateDoesNotArrive) {
  server_.set_start_env("NFS3D_TEST_HANDOVER_KILL=predecessor-finished");
  StartAndMount();
  std::unique_ptr<RawClient> c = Open();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Call(nfs3::kProgram, 3, 0, "").has_value());
  const pid_t old = server_.pid();
  const pid_t successor = server_.SpawnTakeover("NFS3D_TEST_HANDOVER_KILL=none");
  int status = 0;
  bool old_gone = false;
  for (int i = 0; i < 600 && !old_gone; ++i) {
    old_gone = waitpid(old, &status, WNOHANG) == old;
    if (!old_gone) usleep(100000);
  }
  ASSERT_TRUE(old_gone);
  EXPECT_TRUE(WIFSIGNALED(status));
  server_.Adopt(successor);
  EXPECT_TRUE(c->WaitClosed(absl::Seconds(30)));
  bool answers = false;
  for (int i = 0; i < 100 && !answers; ++i) {
    answers = server_.Answers(rpc::Transport::kTcp);
    if (!answers) usleep(100000);
  }
  EXPECT_TRUE(answers) << server_.Log();
  std::unique_ptr<RawClient> again = Open();
  ASSERT_NE(again, nullptr);
  uint32_t st = 0;
  EXPECT_TRUE(Getattr(*again, root_, &st).has_value()) << st;
  EXPECT_NE(server_.Log().find("serving without the predecessor's state"), std::string::npos)
      << server_.Log();
}

}  // namespace
}  // namespace nfs3d::e2e
