// Duplicate request cache, end to end against the nfs3d binary: every
// non-idempotent procedure sent twice with the same xid — over UDP from the
// same socket, and over TCP after the connection was closed and a new one
// opened from another port — gets a byte-identical reply, and the file system
// shows the operation ran once; also over a second TCP connection open beside
// the first (nconnect). The same xid with other arguments, or from another
// UDP socket, is a new call.
#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

class DrcE2eTest : public ::testing::TestWithParam<rpc::Transport> {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("drc");
    server_.Configure(dir_, ExportLine(dir_));
    ASSERT_TRUE(server_.Start()) << server_.Log();
    client_ = Open();
    ASSERT_NE(client_, nullptr);
    root_ = Mount(*client_, (dir_ / "export").string());
    ASSERT_FALSE(root_.empty());
  }

  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  std::unique_ptr<RawClient> Open() {
    ClientOptions o;
    o.transport = GetParam();
    return RawClient::Open(server_.port(), o);
  }

  // Sends the call, then retransmits it with the same xid — over TCP on a
  // fresh connection, after closing the first — and returns both raw replies.
  std::pair<std::string, std::string> Twice(uint32_t xid, uint32_t proc, const std::string& args) {
    auto first = client_->Call(xid, nfs3::kProgram, 3, proc, args);
    EXPECT_TRUE(first.has_value()) << "proc " << proc;
    if (GetParam() == rpc::Transport::kTcp) {
      uint16_t old_port = client_->local_port();
      client_.reset();  // close, as a client whose connection broke
      client_ = Open();
      EXPECT_NE(client_->local_port(), old_port);
    }
    auto second = client_->Call(xid, nfs3::kProgram, 3, proc, args);
    EXPECT_TRUE(second.has_value()) << "proc " << proc;
    return {first ? first->raw : "", second ? second->raw : ""};
  }

  uint32_t Status(const std::string& raw) {
    client::RpcReply r;
    if (!client::ParseReply(Span(raw), &r) || r.results.size() < 4) return 0xffffffffu;
    xdr::Decoder d(Span(r.results));
    return d.U32();
  }

  fs::path Path(const std::string& name) { return dir_ / "export" / name; }

  fs::path dir_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> client_;
  std::string root_;
};

TEST_P(DrcE2eTest, EveryNonIdempotentProcedureRunsOnce) {
  uint32_t xid = 0x5eed0000u + static_cast<uint32_t>(GetParam()) * 0x100;

  // CREATE GUARDED: a second run would fail with EXIST.
  auto [c1, c2] = Twice(++xid, nfs3::kCreate, CreateArgs(root_, "file"));
  EXPECT_EQ(Status(c1), nfs3::NFS3_OK);
  EXPECT_EQ(c1, c2);
  EXPECT_TRUE(fs::is_regular_file(Path("file")));
  // The same arguments under a new xid really run again: EXIST.
  EXPECT_EQ(Nfs(*client_, nfs3::kCreate, CreateArgs(root_, "file")).status, nfs3::NFS3ERR_EXIST);

  // MKDIR: a second run would fail with EXIST.
  auto [m1, m2] = Twice(++xid, nfs3::kMkdir, MkdirArgs(root_, "dir"));
  EXPECT_EQ(Status(m1), nfs3::NFS3_OK);
  EXPECT_EQ(m1, m2);
  EXPECT_TRUE(fs::is_directory(Path("dir")));

  // LINK: a second run would fail with EXIST; the link count shows one link.
  LookupResult file = Lookup(*client_, root_, "file");
  ASSERT_EQ(file.status, nfs3::NFS3_OK);
  auto [l1, l2] =
      Twice(++xid, nfs3::kLink, Args().Opaque(file.fh).Opaque(root_).String("link").str());
  EXPECT_EQ(Status(l1), nfs3::NFS3_OK);
  EXPECT_EQ(l1, l2);
  struct stat st;
  ASSERT_EQ(stat(Path("file").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 2u);

  // RENAME: a second run would fail with NOENT.
  auto [r1, r2] = Twice(++xid, nfs3::kRename,
                        Args().Opaque(root_).String("file").Opaque(root_).String("renamed").str());
  EXPECT_EQ(Status(r1), nfs3::NFS3_OK);
  EXPECT_EQ(r1, r2);
  EXPECT_FALSE(fs::exists(Path("file")));
  EXPECT_TRUE(fs::exists(Path("renamed")));

  // REMOVE: a second run would fail with NOENT.
  auto [d1, d2] = Twice(++xid, nfs3::kRemove, DirOp(root_, "renamed"));
  EXPECT_EQ(Status(d1), nfs3::NFS3_OK);
  EXPECT_EQ(d1, d2);
  EXPECT_FALSE(fs::exists(Path("renamed")));
  ASSERT_EQ(stat(Path("link").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);

  // The counters reach the log at shutdown: five hits.
  ASSERT_TRUE(server_.Stop());
  EXPECT_NE(server_.Log().find("drc: 5 hits, 0 in-progress drops"), std::string::npos)
      << server_.Log();
}

TEST_P(DrcE2eTest, SameXidWithOtherArgumentsIsANewCall) {
  std::ofstream(Path("a")) << "a";
  std::ofstream(Path("b")) << "b";
  const uint32_t xid = 0xabcd0001u;
  auto first = client_->Call(xid, nfs3::kProgram, 3, nfs3::kRemove, DirOp(root_, "a"));
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(fs::exists(Path("a")));
  auto second = client_->Call(xid, nfs3::kProgram, 3, nfs3::kRemove, DirOp(root_, "b"));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(ToNfsReply(second).status, nfs3::NFS3_OK);
  EXPECT_FALSE(fs::exists(Path("b"))) << "the second REMOVE was answered from the cache";
  // And a third call with the first arguments again is not answered with the
  // first reply either (its entry was replaced): the file is gone, NOENT.
  auto third = client_->Call(xid, nfs3::kProgram, 3, nfs3::kRemove, DirOp(root_, "a"));
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(ToNfsReply(third).status, nfs3::NFS3ERR_NOENT);
}

TEST_P(DrcE2eTest, AnotherClientsRetransmissionIsNotAHit) {
  const uint32_t xid = 0xabcd0002u;
  auto mine = client_->Call(xid, nfs3::kProgram, 3, nfs3::kMkdir, MkdirArgs(root_, "d"));
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(ToNfsReply(mine).status, nfs3::NFS3_OK);
  // Same xid and arguments from another address (127.0.0.2 is not even
  // allowed by the export): never the first client's cached reply.
  ClientOptions o;
  o.transport = GetParam();
  o.local_ip = "127.0.0.2";
  auto other = RawClient::Open(server_.port(), o);
  ASSERT_NE(other, nullptr);
  auto theirs = other->Call(xid, nfs3::kProgram, 3, nfs3::kMkdir, MkdirArgs(root_, "d"));
  ASSERT_TRUE(theirs.has_value());
  EXPECT_NE(theirs->raw, mine->raw);
  EXPECT_EQ(ToNfsReply(theirs).status, nfs3::NFS3ERR_ACCES);
  if (GetParam() == rpc::Transport::kUdp) {
    // Over UDP the port is part of the client's identity too.
    auto third = RawClient::Open(server_.port(), ClientOptions{rpc::Transport::kUdp});
    auto again = third->Call(xid, nfs3::kProgram, 3, nfs3::kMkdir, MkdirArgs(root_, "d"));
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(ToNfsReply(again).status, nfs3::NFS3ERR_EXIST);
  }
}

// nconnect: a Linux mount spreads its calls over several connections from
// one address, all open at once. A retransmission on a connection other than
// the original's (still open) is caught too.
TEST_P(DrcE2eTest, RetransmissionOnAnotherOpenConnectionIsAHit) {
  if (GetParam() != rpc::Transport::kTcp) GTEST_SKIP() << "TCP only";
  std::unique_ptr<RawClient> second = Open();
  ASSERT_NE(second, nullptr);
  ASSERT_NE(second->local_port(), client_->local_port());
  const uint32_t xid = 0xabcd0003u;
  auto first = client_->Call(xid, nfs3::kProgram, 3, nfs3::kMkdir, MkdirArgs(root_, "n"));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(ToNfsReply(first).status, nfs3::NFS3_OK);
  auto again = second->Call(xid, nfs3::kProgram, 3, nfs3::kMkdir, MkdirArgs(root_, "n"));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->raw, first->raw);  // replayed, not NFS3ERR_EXIST
}

INSTANTIATE_TEST_SUITE_P(Transports, DrcE2eTest,
                         ::testing::Values(rpc::Transport::kUdp, rpc::Transport::kTcp),
                         [](const auto& info) {
                           return info.param == rpc::Transport::kUdp ? "Udp" : "Tcp";
                         });

}  // namespace
}  // namespace nfs3d::e2e
