// Established TCP connections across a handover (nfs3d --takeover), end to
// end with the binary: a client keeps its one connection through several
// handovers and never sees it close, a record sent half before and half
// after the handover is answered by the successor on the same connection
// (also a spliced WRITE), and calls pipelined while the handover runs each
// get exactly one reply.
#include <arpa/inet.h>
#include <sys/wait.h>

#include <map>
#include <string>

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

// GETATTRs and WRITEs pipelined on one connection, round after round while
// the handover runs: each call gets exactly one reply, and the connection
// stays open.
TEST_F(HandoverTcpTest, CallsInFlightDuringTheHandoverGetOneReplyEach) {
  StartAndMount();
  const std::string fh = NewFile("pipelined");
  std::unique_ptr<RawClient> c = Open();
  ASSERT_NE(c, nullptr);
  std::map<uint32_t, int> replies;  // xid -> replies seen
  uint32_t next_xid = 0x7e000000u;
  size_t wrong = 0;
  auto drain = [&](absl::Duration wait) {
    while (std::optional<std::string> m = c->Receive(wait)) {
      client::RpcReply r;
      if (!client::ParseReply(Span(*m), &r) || ToNfsReply(r).status != nfs3::NFS3_OK) ++wrong;
      ++replies[r.xid];
    }
  };
  const std::string chunk(8192, 'p');
  auto send_round = [&] {
    std::string bytes;
    for (int i = 0; i < 32; ++i) {
      bytes += Record(*c, next_xid, nfs3::kGetattr, Args().Opaque(fh).str());
      replies[next_xid++];
    }
    for (int i = 0; i < 4; ++i) {
      bytes += Record(*c, next_xid, nfs3::kWrite,
                      Args()
                          .Opaque(fh)
                          .U64(static_cast<uint64_t>(i) * chunk.size())
                          .U32(chunk.size())
                          .U32(nfs3::UNSTABLE)
                          .Opaque(chunk)
                          .str());
      replies[next_xid++];
    }
    return c->SendBytes(bytes);
  };
  const pid_t old = server_.pid();
  const pid_t successor = server_.SpawnTakeover();
  int old_status = -1;
  bool old_gone = false;
  int rounds_after = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (rounds_after < 3 && absl::Now() < give_up) {
    ASSERT_TRUE(send_round()) << server_.Log();
    drain(absl::Milliseconds(2));
    if (old_gone) {
      ++rounds_after;
    } else {
      old_gone = waitpid(old, &old_status, WNOHANG) == old;
    }
  }
  ASSERT_TRUE(old_gone) << server_.Log();
  EXPECT_TRUE(WIFEXITED(old_status) && WEXITSTATUS(old_status) == 0);
  server_.Adopt(successor);
  // Every reply still due arrives; a second reply to any call would be
  // counted here too.
  const absl::Time until = absl::Now() + absl::Seconds(20);
  auto missing = [&] {
    size_t n = 0;
    for (const auto& [xid, count] : replies) n += count == 0;
    return n;
  };
  while (missing() > 0 && absl::Now() < until) drain(absl::Milliseconds(100));
  drain(absl::Milliseconds(200));
  size_t twice = 0;
  for (const auto& [xid, count] : replies) twice += count > 1;
  EXPECT_EQ(missing(), 0u) << "of " << replies.size() << "\n" << server_.Log();
  EXPECT_EQ(twice, 0u);
  EXPECT_EQ(wrong, 0u);
  EXPECT_FALSE(c->WaitClosed(absl::Milliseconds(100)));
  EXPECT_NE(server_.Log().find("TCP connections"), std::string::npos) << server_.Log();
}

}  // namespace
}  // namespace nfs3d::e2e
