// Hostile input against the nfs3d binary: oversized and zero-length TCP
// fragments, truncated datagrams, bogus credential lengths, names with '/',
// NUL, "." and "..", over-long names and paths, and a 1000-deep directory
// chain. Each gets a protocol-level answer (or a silent drop where RFC 5531
// allows nothing else), and after every test the server still answers NULL
// over TCP and UDP.
#include <arpa/inet.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

constexpr uint32_t kGarbageArgs = 4;
constexpr uint32_t kAuthError = 1;
constexpr uint32_t kAuthBadCred = 1;
constexpr uint32_t kAuthBadVerf = 3;

std::string Mark(uint32_t len, bool last) {
  uint32_t be = htonl((last ? 0x80000000u : 0) | len);
  return std::string(reinterpret_cast<const char*>(&be), 4);
}

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("hostile");
    server_.Configure(dir_, ExportLine(dir_));
    ASSERT_TRUE(server_.Start()) << server_.Log();
    tcp_ = Open(rpc::Transport::kTcp);
    udp_ = Open(rpc::Transport::kUdp);
    auto mnt = RawClient::Open(server_.mount_port(), {});
    root_ = Mount(*mnt, (dir_ / "export").string());
    ASSERT_FALSE(root_.empty());
  }

  void TearDown() override {
    // Whatever the test sent, the server is still up and serving.
    EXPECT_TRUE(server_.Alive());
    EXPECT_TRUE(server_.Answers(rpc::Transport::kTcp));
    EXPECT_TRUE(server_.Answers(rpc::Transport::kUdp));
    server_.Stop();
    std::string cmd = absl::StrCat("rm -rf '", dir_.string(), "'");  // deep trees too
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }

  std::unique_ptr<RawClient> Open(rpc::Transport t) {
    ClientOptions o;
    o.transport = t;
    return RawClient::Open(server_.port(), o);
  }

  // A whole call message with a hand-made credential and verifier.
  std::string CallWithAuth(uint32_t xid, const std::string& cred, const std::string& verf,
                           const std::string& args = "") {
    return Args().U32(xid).U32(0).U32(2).U32(nfs3::kProgram).U32(3).U32(nfs3::kGetattr).str() +
           cred + verf + args;
  }

  fs::path dir_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> tcp_, udp_;
  std::string root_;
};

TEST_F(HostileInputTest, OversizedRecordClosesTheConnection) {
  // One fragment header announcing 2 GiB - 1: refused before any allocation.
  for (bool last : {true, false}) {
    auto c = Open(rpc::Transport::kTcp);
    ASSERT_TRUE(c->SendBytes(Mark(0x7fffffffu, last)));
    EXPECT_TRUE(c->WaitClosed(absl::Seconds(5))) << "last=" << last;
  }
  // Fragments that only add up to too much (2 x 700 KiB > max_record_size).
  auto c = Open(rpc::Transport::kTcp);
  ASSERT_TRUE(c->SendBytes(Mark(700 << 10, false) + std::string(700 << 10, 'x')));
  c->SendBytes(Mark(700 << 10, true));
  EXPECT_TRUE(c->WaitClosed(absl::Seconds(5)));
  // Other connections are unaffected.
  EXPECT_EQ(Nfs(*tcp_, nfs3::kNull, "").accept_stat, 0u);
}

TEST_F(HostileInputTest, ZeroLengthFragments) {
  // Many empty non-last fragments, then a NULL call: answered.
  std::string burst;
  for (int i = 0; i < 10000; ++i) burst += Mark(0, false);
  const std::string call = tcp_->EncodeCall(0x2e70, nfs3::kProgram, 3, nfs3::kNull, "");
  ASSERT_TRUE(tcp_->SendBytes(burst + Mark(static_cast<uint32_t>(call.size()), true) + call));
  auto reply = tcp_->Receive(absl::Seconds(5));
  ASSERT_TRUE(reply.has_value());
  client::RpcReply r;
  ASSERT_TRUE(client::ParseReply(Span(*reply), &r));
  EXPECT_EQ(r.xid, 0x2e70u);
  EXPECT_EQ(r.accept_stat, 0u);
  // An empty record (a lone last fragment of length 0) is dropped; the
  // connection keeps working.
  ASSERT_TRUE(tcp_->SendBytes(Mark(0, true)));
  EXPECT_FALSE(tcp_->Receive(absl::Milliseconds(300)).has_value());
  EXPECT_EQ(Nfs(*tcp_, nfs3::kNull, "").accept_stat, 0u);
  // The same over UDP: an empty datagram.
  ASSERT_TRUE(udp_->SendBytes(""));
  EXPECT_EQ(Nfs(*udp_, nfs3::kNull, "").accept_stat, 0u);
}

TEST_F(HostileInputTest, TruncatedCallsAreDroppedOrGarbageArgs) {
  const std::string args = Args().Opaque(root_).String("name").str();
  const std::string call = udp_->EncodeCall(0x7c00, nfs3::kProgram, 3, nfs3::kLookup, args);
  const size_t header = call.size() - args.size();
  for (rpc::Transport t : {rpc::Transport::kUdp, rpc::Transport::kTcp}) {
    auto c = Open(t);
    for (size_t len = 0; len < call.size(); ++len) {
      ASSERT_TRUE(c->SendMessage(call.substr(0, len)));
      auto reply = c->Receive(absl::Milliseconds(len < header ? 50 : 2000));
      if (len < header) {
        // Cut inside the header: nothing trustworthy to answer, or an auth
        // error once the credential is cut.
        if (reply) {
          client::RpcReply r;
          ASSERT_TRUE(client::ParseReply(Span(*reply), &r)) << len;
          EXPECT_EQ(r.reply_stat, 1u) << len;
          EXPECT_EQ(r.reject_stat, kAuthError) << len;
        }
        continue;
      }
      ASSERT_TRUE(reply.has_value()) << "no reply to a call cut at " << len;
      client::RpcReply r;
      ASSERT_TRUE(client::ParseReply(Span(*reply), &r));
      EXPECT_EQ(r.accept_stat, kGarbageArgs) << len;
    }
    EXPECT_EQ(Nfs(*c, nfs3::kNull, "").accept_stat, 0u);
  }
}

TEST_F(HostileInputTest, BogusCredentialLengths) {
  const std::string verf = Args().U32(0).U32(0).str();
  std::string sys_body = Args().U32(0).String("m").U32(0).U32(0).U32(0).str();
  struct Case {
    const char* what;
    std::string cred;
    std::string verf;
    uint32_t auth_stat;
  };
  std::vector<Case> cases = {
      {"length 2^32-1", Args().U32(1).U32(0xffffffffu).str(), verf, kAuthBadCred},
      {"length 401", Args().U32(1).U32(401).Raw(std::string(404, '\0')).str(), verf, kAuthBadCred},
      // A message cut inside the credential is a truncated message: it may
      // be dropped like any other (0 = no reply expected).
      {"length past the end", Args().U32(1).U32(200).Raw(std::string(8, '\0')).str(), "", 0},
      {"machine name longer than the body",
       Args().U32(1).Opaque(Args().U32(0).U32(0xfffffff0u).str()).str(), verf, kAuthBadCred},
      {"17 groups",
       Args()
           .U32(1)
           .Opaque(Args().U32(0).String("m").U32(0).U32(0).U32(17).Raw(std::string(68, '\0')).str())
           .str(),
       verf, kAuthBadCred},
      {"group count 2^32-1",
       Args().U32(1).Opaque(Args().U32(0).String("m").U32(0).U32(0).U32(0xffffffffu).str()).str(),
       verf, kAuthBadCred},
      {"trailing bytes in the body", Args().U32(1).Opaque(sys_body + "xxxx").str(), verf,
       kAuthBadCred},
      {"AUTH_NONE with a body", Args().U32(0).String("abcd").str(), verf, kAuthBadCred},
      {"unknown flavor", Args().U32(390003).U32(0).str(), verf, kAuthBadCred},
      {"verifier length 2^32-1", Args().U32(1).Opaque(sys_body).str(),
       Args().U32(0).U32(0xffffffffu).str(), kAuthBadVerf},
  };
  uint32_t xid = 0xa0000000u;
  for (rpc::Transport t : {rpc::Transport::kUdp, rpc::Transport::kTcp}) {
    auto c = Open(t);
    for (const Case& k : cases) {
      ASSERT_TRUE(c->SendMessage(CallWithAuth(++xid, k.cred, k.verf, Args().Opaque(root_).str())));
      auto reply = c->Receive(absl::Seconds(k.auth_stat == 0 ? 0.3 : 2));
      if (k.auth_stat == 0 && !reply) continue;
      ASSERT_TRUE(reply.has_value()) << k.what;
      client::RpcReply r;
      ASSERT_TRUE(client::ParseReply(Span(*reply), &r)) << k.what;
      EXPECT_EQ(r.xid, xid) << k.what;
      EXPECT_EQ(r.reply_stat, 1u) << k.what;
      EXPECT_EQ(r.reject_stat, kAuthError) << k.what;
      if (k.auth_stat != 0) {
        EXPECT_EQ(r.auth_stat, k.auth_stat) << k.what;
      }
    }
    EXPECT_EQ(Nfs(*c, nfs3::kNull, "").accept_stat, 0u);
  }
}

TEST_F(HostileInputTest, BadNamesGetProtocolErrors) {
  std::ofstream(dir_ / "export/file") << "x";
  fs::create_directories(dir_ / "export/dir");
  const std::string slash = "dir/../file", nul = std::string("fi\0le", 5), empty;
  for (const std::string& bad : {slash, nul, empty}) {
    EXPECT_EQ(Lookup(*tcp_, root_, bad).status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kCreate, CreateArgs(root_, bad)).status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kMkdir, MkdirArgs(root_, bad)).status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kRemove, DirOp(root_, bad)).status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kRename,
                  Args().Opaque(root_).String("file").Opaque(root_).String(bad).str())
                  .status,
              nfs3::NFS3ERR_ACCES);
  }
  for (const std::string dot : {".", ".."}) {
    EXPECT_EQ(Nfs(*tcp_, nfs3::kCreate, CreateArgs(root_, dot)).status, nfs3::NFS3ERR_EXIST);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kMkdir, MkdirArgs(root_, dot)).status, nfs3::NFS3ERR_EXIST);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kSymlink,
                  Args().Opaque(root_).String(dot).ModeOnly(0777).String("/").str())
                  .status,
              nfs3::NFS3ERR_EXIST);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kRemove, DirOp(root_, dot)).status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(
        Nfs(*tcp_, nfs3::kRename, Args().Opaque(root_).String(dot).Opaque(root_).String("x").str())
            .status,
        nfs3::NFS3ERR_INVAL);
    EXPECT_EQ(Nfs(*tcp_, nfs3::kRename,
                  Args().Opaque(root_).String("file").Opaque(root_).String(dot).str())
                  .status,
              nfs3::NFS3ERR_INVAL);
  }
  EXPECT_EQ(Nfs(*tcp_, nfs3::kRmdir, DirOp(root_, ".")).status, nfs3::NFS3ERR_INVAL);
  EXPECT_EQ(Nfs(*tcp_, nfs3::kRmdir, DirOp(root_, "..")).status, nfs3::NFS3ERR_NOTEMPTY);
  // Nothing changed.
  EXPECT_TRUE(fs::exists(dir_ / "export/file"));
  EXPECT_TRUE(fs::exists(dir_ / "export/dir"));
  EXPECT_TRUE(fs::exists(dir_ / "export"));
}

TEST_F(HostileInputTest, OverlongNamesAndPaths) {
  // 256..4096 bytes: NAMETOOLONG; beyond the decoder's 4096: GARBAGE_ARGS.
  for (size_t len : {256u, 1000u, 4096u}) {
    std::string name(len, 'n');
    EXPECT_EQ(Lookup(*tcp_, root_, name).status, nfs3::NFS3ERR_NAMETOOLONG) << len;
    EXPECT_EQ(Nfs(*tcp_, nfs3::kCreate, CreateArgs(root_, name)).status, nfs3::NFS3ERR_NAMETOOLONG)
        << len;
  }
  NfsReply huge = Nfs(*tcp_, nfs3::kLookup, DirOp(root_, std::string(5000, 'n')));
  ASSERT_TRUE(huge.ok);
  EXPECT_EQ(huge.accept_stat, kGarbageArgs);
  // A 255-byte name is fine.
  EXPECT_EQ(Nfs(*tcp_, nfs3::kCreate, CreateArgs(root_, std::string(255, 'n'))).status,
            nfs3::NFS3_OK);
  // Symlink targets: PATH_MAX (4096, no room for the NUL) is too long for
  // the kernel; beyond it the decoder refuses.
  auto symlink = [&](const std::string& name, const std::string& target) {
    return Nfs(*tcp_, nfs3::kSymlink,
               Args().Opaque(root_).String(name).ModeOnly(0777).String(target).str());
  };
  EXPECT_EQ(symlink("l4095", std::string(4095, 't')).status, nfs3::NFS3_OK);
  EXPECT_EQ(symlink("l4096", std::string(4096, 't')).status, nfs3::NFS3ERR_NAMETOOLONG);
  EXPECT_EQ(symlink("l5000", std::string(5000, 't')).accept_stat, kGarbageArgs);
  // MOUNT paths: longer than MNTPATHLEN (1024) does not decode; unknown
  // paths are NOENT.
  auto mnt = RawClient::Open(server_.mount_port(), {});
  uint32_t status = 0;
  Mount(*mnt, "/" + std::string(1023, 'p'), &status);
  EXPECT_EQ(status, mount3::MNT3ERR_NOENT);
  NfsReply long_mnt = ToNfsReply(mnt->Call(mount3::kProgram, 3, mount3::kMnt,
                                           Args().String("/" + std::string(5000, 'p')).str()));
  ASSERT_TRUE(long_mnt.ok);
  EXPECT_EQ(long_mnt.accept_stat, kGarbageArgs);
  Mount(*mnt, (dir_ / "export").string() + "/../export", &status);
  EXPECT_EQ(status, mount3::MNT3ERR_NOENT);
}

TEST_F(HostileInputTest, ThousandNestedDirectories) {
  // 1000 levels of 8-character names: the deepest path (~9000 bytes) is far
  // beyond PATH_MAX; nfs3d works with handles, so every level still works.
  constexpr int kDepth = 1000;
  std::vector<std::string> handles = {root_};
  for (int i = 0; i < kDepth; ++i) {
    NfsReply r = Nfs(*tcp_, nfs3::kMkdir, MkdirArgs(handles.back(), "level___"));
    ASSERT_EQ(r.status, nfs3::NFS3_OK) << "depth " << i;
    handles.push_back(NewHandle(r));
  }
  // The LOOKUP chain from the root gives the same handles.
  std::string cur = root_;
  for (int i = 1; i <= kDepth; ++i) {
    LookupResult l = Lookup(*tcp_, cur, "level___");
    ASSERT_EQ(l.status, nfs3::NFS3_OK) << "depth " << i;
    ASSERT_EQ(l.fh, handles[i]) << "depth " << i;
    cur = l.fh;
  }
  // At the bottom: a file can be made, written and read.
  NfsReply c = Nfs(*tcp_, nfs3::kCreate, CreateArgs(cur, "deep"));
  ASSERT_EQ(c.status, nfs3::NFS3_OK);
  std::string file = NewHandle(c);
  NfsReply w = Nfs(*tcp_, nfs3::kWrite,
                   Args().Opaque(file).U64(0).U32(4).U32(nfs3::FILE_SYNC).String("deep").str());
  EXPECT_EQ(w.status, nfs3::NFS3_OK);
  NfsReply rd = Nfs(*tcp_, nfs3::kRead, Args().Opaque(file).U64(0).U32(4).str());
  EXPECT_EQ(rd.status, nfs3::NFS3_OK);
  EXPECT_NE(rd.results.find("deep"), std::string::npos);
  // ".." from the bottom is the level above, and walking ".." all the way up
  // ends at the root and stays there.
  LookupResult up = Lookup(*tcp_, cur, "..");
  ASSERT_EQ(up.status, nfs3::NFS3_OK);
  EXPECT_EQ(up.fh, handles[kDepth - 1]);
  for (int i = kDepth - 1; i >= 0; --i) {
    up = Lookup(*tcp_, up.fh, "..");
    ASSERT_EQ(up.status, nfs3::NFS3_OK) << i;
  }
  EXPECT_EQ(up.fh, root_);
  // READDIRPLUS at the bottom, and RMDIR of a non-empty level.
  NfsReply rdp =
      Nfs(*tcp_, nfs3::kReaddirplus, Args().Opaque(cur).U64(0).U64(0).U32(4096).U32(65536).str());
  EXPECT_EQ(rdp.status, nfs3::NFS3_OK);
  EXPECT_EQ(Nfs(*tcp_, nfs3::kRmdir, DirOp(handles[kDepth - 1], "level___")).status,
            nfs3::NFS3ERR_NOTEMPTY);
}

}  // namespace
}  // namespace nfs3d::e2e
