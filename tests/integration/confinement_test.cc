// Confinement, end to end against the nfs3d binary, each check asserting the
// exact error: forged handles (bit flips, truncation, another server's or a
// rotated secret, an export that left the table), ".." at export roots,
// symlinks handed to the client and never followed, sub-directory exports,
// `secure` (AUTH_ERROR/AUTH_TOOWEAK on NFS, MNT3ERR_ACCES on MOUNT) and the
// exports' client lists on MOUNT and on every NFS call.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

constexpr uint32_t kAuthError = 1;
constexpr uint32_t kAuthTooWeak = 5;

class ConfinementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-conf-", getpid());
    fs::remove_all(dir_);
    for (const char* sub : {"top", "tree/sub", "tree/sibling", "secure", "other"}) {
      fs::create_directories(dir_ / sub);
    }
    std::ofstream(dir_ / "tree/sibling/secret") << "secret";
    std::ofstream(dir_ / "tree/sub/file") << "data";
    server_.Configure(dir_, Exports());
    ASSERT_TRUE(server_.Start()) << server_.Log();
    nfs_ = Client(rpc::Transport::kTcp);
    mnt_ = RawClient::Open(server_.mount_port(), {});
    ASSERT_NE(nfs_, nullptr);
    ASSERT_NE(mnt_, nullptr);
  }

  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "nfs3d's log:\n%s\n", server_.Log().c_str());
    server_.Stop();
    fs::remove_all(dir_);
  }

  std::string Exports() {
    return absl::StrCat(P("top"), " 127.0.0.1(rw,insecure,no_root_squash)\n",  //
                        P("tree/sub"), " 127.0.0.1(rw,insecure,no_root_squash)\n", P("secure"),
                        " 127.0.0.1(rw,secure,no_root_squash)\n", P("other"),
                        " 127.0.0.3(rw,insecure,no_root_squash)\n");
  }
  std::string P(const std::string& sub) { return (dir_ / sub).string(); }

  std::unique_ptr<RawClient> Client(rpc::Transport t, const std::string& ip = "127.0.0.1",
                                    bool reserved = false) {
    ClientOptions o;
    o.transport = t;
    o.local_ip = ip;
    o.reserved_port = reserved;
    return RawClient::Open(server_.port(), o);
  }

  std::string MountRoot(const std::string& sub) {
    uint32_t status = 0;
    std::string fh = Mount(*mnt_, P(sub), &status);
    EXPECT_EQ(status, mount3::MNT3_OK) << sub;
    return fh;
  }

  uint32_t GetattrStatus(const std::string& fh) {
    uint32_t status;
    Getattr(*nfs_, fh, &status);
    return status;
  }

  // MKDIR name in dir over NFS; the new directory's handle, used once so
  // the server has it cached.
  std::string MakeDir(const std::string& dir, const std::string& name) {
    NfsReply mk = Nfs(*nfs_, nfs3::kMkdir, MkdirArgs(dir, name));
    EXPECT_EQ(mk.status, nfs3::NFS3_OK) << name;
    std::string fh = NewHandle(mk);
    EXPECT_EQ(GetattrStatus(fh), nfs3::NFS3_OK) << name;
    return fh;
  }

  // Makes tree/sub/moving through the "tree/sub" export, then moves it to
  // tree/sibling/moved (with a file x in it) behind the server's back.
  // Returns the directory's handle.
  std::string MoveNewDirectoryOutOfSub() {
    std::string moving = MakeDir(MountRoot("tree/sub"), "moving");
    fs::rename(dir_ / "tree/sub/moving", dir_ / "tree/sibling/moved");
    std::ofstream(dir_ / "tree/sibling/moved/x") << "x";
    return moving;
  }

  fs::path dir_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> nfs_, mnt_;
};

TEST_F(ConfinementTest, EveryBitFlipIsBadHandle) {
  LookupResult file = Lookup(*nfs_, MountRoot("top"), ".");
  ASSERT_EQ(file.status, nfs3::NFS3_OK);
  const std::string& fh = file.fh;
  ASSERT_EQ(GetattrStatus(fh), nfs3::NFS3_OK);
  for (size_t byte = 0; byte < fh.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string forged = fh;
      forged[byte] = static_cast<char>(forged[byte] ^ (1 << bit));
      ASSERT_EQ(GetattrStatus(forged), nfs3::NFS3ERR_BADHANDLE)
          << "byte " << byte << " bit " << bit;
    }
  }
  // Truncated, extended, empty: BADHANDLE too.
  EXPECT_EQ(GetattrStatus(fh.substr(0, fh.size() - 1)), nfs3::NFS3ERR_BADHANDLE);
  EXPECT_EQ(GetattrStatus(fh + std::string(1, '\0')), nfs3::NFS3ERR_BADHANDLE);
  EXPECT_EQ(GetattrStatus(""), nfs3::NFS3ERR_BADHANDLE);
  EXPECT_EQ(GetattrStatus(std::string(64, '\0')), nfs3::NFS3ERR_BADHANDLE);
  // Longer than NFS3_FHSIZE does not even decode.
  NfsReply too_long = Nfs(*nfs_, nfs3::kGetattr, Args().Opaque(std::string(65, 'x')).str());
  ASSERT_TRUE(too_long.ok);
  EXPECT_EQ(too_long.accept_stat, 4u);  // GARBAGE_ARGS
}

TEST_F(ConfinementTest, HandleFromBeforeASecretRotationIsBadHandle) {
  std::string root = MountRoot("top");
  ASSERT_EQ(GetattrStatus(root), nfs3::NFS3_OK);
  // A new secret: the state directory is gone (as on another server).
  server_.Stop();
  fs::remove_all(dir_ / "state");
  fs::create_directories(dir_ / "state");
  ASSERT_TRUE(server_.Start()) << server_.Log();
  nfs_ = Client(rpc::Transport::kTcp);
  mnt_ = RawClient::Open(server_.mount_port(), {});
  EXPECT_EQ(GetattrStatus(root), nfs3::NFS3ERR_BADHANDLE);
  EXPECT_EQ(Lookup(*nfs_, root, "x").status, nfs3::NFS3ERR_BADHANDLE);
  // The same export mounted again works with its new handle.
  EXPECT_EQ(GetattrStatus(MountRoot("top")), nfs3::NFS3_OK);
}

TEST_F(ConfinementTest, HandleOfAnExportThatLeftTheTableIsStale) {
  std::string top = MountRoot("top");
  std::string sub = MountRoot("tree/sub");
  ASSERT_EQ(GetattrStatus(top), nfs3::NFS3_OK);
  // Reload without "top".
  std::ofstream(dir_ / "exports") << P("tree/sub") << " 127.0.0.1(rw,insecure)\n";
  kill(server_.pid(), SIGHUP);
  for (int i = 0; i < 50 && GetattrStatus(top) == nfs3::NFS3_OK; ++i) usleep(100000);
  EXPECT_EQ(GetattrStatus(top), nfs3::NFS3ERR_STALE);
  EXPECT_EQ(GetattrStatus(sub), nfs3::NFS3_OK);
  uint32_t status = 0;
  Mount(*mnt_, P("top"), &status);
  EXPECT_EQ(status, mount3::MNT3ERR_NOENT);
}

TEST_F(ConfinementTest, DotDotAtExportRootsStaysAtTheRoot) {
  for (const char* sub : {"top", "tree/sub"}) {
    std::string root = MountRoot(sub);
    uint32_t status;
    auto root_attr = Getattr(*nfs_, root, &status);
    ASSERT_TRUE(root_attr.has_value());
    LookupResult up = Lookup(*nfs_, root, "..");
    ASSERT_EQ(up.status, nfs3::NFS3_OK) << sub;
    EXPECT_EQ(up.attr.fileid, root_attr->fileid) << sub;
    EXPECT_EQ(up.fh, root) << sub;
    // And again from there, and from a directory below the root.
    LookupResult up2 = Lookup(*nfs_, up.fh, "..");
    EXPECT_EQ(up2.attr.fileid, root_attr->fileid) << sub;
    NfsReply mk = Nfs(*nfs_, nfs3::kMkdir, MkdirArgs(root, "d"));
    ASSERT_EQ(mk.status, nfs3::NFS3_OK);
    LookupResult from_d = Lookup(*nfs_, NewHandle(mk), "..");
    EXPECT_EQ(from_d.attr.fileid, root_attr->fileid) << sub;
    LookupResult dot = Lookup(*nfs_, root, ".");
    EXPECT_EQ(dot.attr.fileid, root_attr->fileid) << sub;
  }
}

TEST_F(ConfinementTest, SymlinksAreReturnedNeverFollowed) {
  fs::create_symlink("/", dir_ / "top/escape");
  fs::create_symlink("/etc", dir_ / "top/etc_link");
  fs::create_symlink("../../tree/sibling", dir_ / "tree/sub/up");
  std::string root = MountRoot("top");
  uint32_t status;
  for (const auto& [name, target] :
       {std::pair<std::string, std::string>{"escape", "/"}, {"etc_link", "/etc"}}) {
    LookupResult link = Lookup(*nfs_, root, name);
    ASSERT_EQ(link.status, nfs3::NFS3_OK) << name;
    EXPECT_EQ(link.attr.type, static_cast<uint32_t>(nfs3::NF3LNK)) << name;
    auto attr = Getattr(*nfs_, link.fh, &status);
    ASSERT_TRUE(attr.has_value());
    EXPECT_EQ(attr->type, static_cast<uint32_t>(nfs3::NF3LNK));
    struct stat st;
    ASSERT_EQ(lstat((dir_ / "top" / name).c_str(), &st), 0);
    EXPECT_EQ(attr->fileid, st.st_ino);  // the link's own inode, not the target's
    NfsReply rl = Nfs(*nfs_, nfs3::kReadlink, Args().Opaque(link.fh).str());
    ASSERT_EQ(rl.status, nfs3::NFS3_OK);
    xdr::Decoder d(Span(rl.results));
    d.U32();
    DecodePostOpAttr(d);
    EXPECT_EQ(std::string(d.String(4096)), target);
    // Used as a directory, the link is not one.
    EXPECT_EQ(Lookup(*nfs_, link.fh, "passwd").status, nfs3::NFS3ERR_NOTDIR) << name;
    EXPECT_EQ(Lookup(*nfs_, link.fh, "..").status, nfs3::NFS3ERR_NOTDIR) << name;
    EXPECT_EQ(Nfs(*nfs_, nfs3::kCreate, CreateArgs(link.fh, "planted")).status,
              nfs3::NFS3ERR_NOTDIR);
    EXPECT_EQ(Nfs(*nfs_, nfs3::kMkdir, MkdirArgs(link.fh, "planted")).status, nfs3::NFS3ERR_NOTDIR);
    NfsReply rd = Nfs(*nfs_, nfs3::kReaddir, Args().Opaque(link.fh).U64(0).U64(0).U32(4096).str());
    EXPECT_EQ(rd.status, nfs3::NFS3ERR_NOTDIR);
    // Names in the link's place are not resolved through it either.
    EXPECT_EQ(Nfs(*nfs_, nfs3::kMkdir, MkdirArgs(root, name)).status, nfs3::NFS3ERR_EXIST);
  }
  EXPECT_FALSE(fs::exists("/planted"));
  // A symlink in a sub-directory export pointing at a sibling: returned as a
  // link, READ on it is refused, nothing of the sibling is reachable.
  std::string sub = MountRoot("tree/sub");
  LookupResult up = Lookup(*nfs_, sub, "up");
  ASSERT_EQ(up.status, nfs3::NFS3_OK);
  EXPECT_EQ(up.attr.type, static_cast<uint32_t>(nfs3::NF3LNK));
  EXPECT_EQ(Lookup(*nfs_, up.fh, "secret").status, nfs3::NFS3ERR_NOTDIR);
  NfsReply read = Nfs(*nfs_, nfs3::kRead, Args().Opaque(up.fh).U64(0).U32(100).str());
  EXPECT_EQ(read.status, nfs3::NFS3ERR_INVAL);
}

TEST_F(ConfinementTest, SubDirectoryExportDoesNotExposeSiblings) {
  std::string sub = MountRoot("tree/sub");
  // Nothing above the export root is reachable by name.
  LookupResult up = Lookup(*nfs_, sub, "..");
  ASSERT_EQ(up.status, nfs3::NFS3_OK);
  EXPECT_EQ(up.fh, sub);
  EXPECT_EQ(Lookup(*nfs_, up.fh, "sibling").status, nfs3::NFS3ERR_NOENT);
  // Guessing: every handle in the sub export with its kernel handle bytes
  // (inode/generation) changed — by bit flips or by taking another real
  // object's bytes under the sub export's id — fails the MAC.
  LookupResult file = Lookup(*nfs_, sub, "file");
  ASSERT_EQ(file.status, nfs3::NFS3_OK);
  std::string top = MountRoot("top");
  std::string hybrid = file.fh;
  // Bytes 1..4 are the export id; put the "top" export's id on the sub handle.
  for (int i = 1; i <= 4; ++i) hybrid[i] = top[i];
  EXPECT_EQ(GetattrStatus(hybrid), nfs3::NFS3ERR_BADHANDLE);
  for (uint8_t delta : {1, 2, 3, 0x80}) {
    std::string guess = file.fh;
    guess[10] = static_cast<char>(static_cast<uint8_t>(guess[10]) + delta);  // inode bytes
    EXPECT_EQ(GetattrStatus(guess), nfs3::NFS3ERR_BADHANDLE) << delta;
  }
}

// A directory moved out of the sub export behind the server's back: its
// (authentic) handle no longer reaches it once the server decodes the handle
// afresh (here: after a restart, which empties the handle cache).
TEST_F(ConfinementTest, DirectoryMovedOutOfSubExportIsStale) {
  std::string moving = MoveNewDirectoryOutOfSub();
  server_.Stop();
  ASSERT_TRUE(server_.Start()) << server_.Log();
  nfs_ = Client(rpc::Transport::kTcp);
  EXPECT_EQ(GetattrStatus(moving), nfs3::NFS3ERR_STALE);
  EXPECT_EQ(Lookup(*nfs_, moving, "..").status, nfs3::NFS3ERR_STALE);
  EXPECT_EQ(Lookup(*nfs_, moving, "x").status, nfs3::NFS3ERR_STALE);
}

// The same while the directory's handle is still in the backend's handle
// cache: a cache hit re-checks directories of sub-directory exports, so the
// moved directory is no way into the sibling tree.
TEST_F(ConfinementTest, DirectoryMovedOutWhileCachedIsStale) {
  std::string moving = MoveNewDirectoryOutOfSub();
  EXPECT_EQ(GetattrStatus(moving), nfs3::NFS3ERR_STALE);
  EXPECT_EQ(Lookup(*nfs_, moving, "x").status, nfs3::NFS3ERR_STALE);
}

// A cached directory whose ancestor (not itself) moves out of the export.
TEST_F(ConfinementTest, DirectoryWhoseParentMovedOutIsStale) {
  std::string outer = MakeDir(MountRoot("tree/sub"), "outer");
  std::string inner_fh = MakeDir(outer, "inner");
  fs::rename(dir_ / "tree/sub/outer", dir_ / "tree/sibling/outer");
  EXPECT_EQ(GetattrStatus(inner_fh), nfs3::NFS3ERR_STALE);
  // Moved back in, it is reachable again.
  fs::rename(dir_ / "tree/sibling/outer", dir_ / "tree/sub/outer");
  EXPECT_EQ(GetattrStatus(inner_fh), nfs3::NFS3_OK);
}

TEST_F(ConfinementTest, SecureExportRefusesUnprivilegedPorts) {
  // MOUNT from an unprivileged port: MNT3ERR_ACCES (as Linux mountd).
  uint32_t status = 0;
  EXPECT_EQ(Mount(*mnt_, P("secure"), &status), "");
  EXPECT_EQ(status, mount3::MNT3ERR_ACCES);
  ClientOptions priv;
  priv.reserved_port = true;
  auto mnt_priv = RawClient::Open(server_.mount_port(), priv);
  ASSERT_NE(mnt_priv, nullptr);
  std::string root = Mount(*mnt_priv, P("secure"), &status);
  ASSERT_EQ(status, mount3::MNT3_OK);

  for (rpc::Transport t : {rpc::Transport::kTcp, rpc::Transport::kUdp}) {
    SCOPED_TRACE(t == rpc::Transport::kTcp ? "tcp" : "udp");
    auto unpriv = Client(t);
    ASSERT_GE(unpriv->local_port(), 1024);
    for (uint32_t proc : {nfs3::kGetattr, nfs3::kFsinfo}) {
      NfsReply r = Nfs(*unpriv, proc, Args().Opaque(root).str());
      ASSERT_TRUE(r.ok) << "procedure " << proc << ": " << unpriv->last_failure();
      EXPECT_EQ(r.reply_stat, 1u);  // MSG_DENIED
      EXPECT_EQ(r.reject_stat, kAuthError);
      EXPECT_EQ(r.auth_stat, kAuthTooWeak);
    }
    // A modifying call is refused the same way and does nothing.
    NfsReply c = Nfs(*unpriv, nfs3::kCreate, CreateArgs(root, "nope"));
    EXPECT_EQ(c.reply_stat, 1u);
    EXPECT_EQ(c.auth_stat, kAuthTooWeak);
    EXPECT_FALSE(fs::exists(dir_ / "secure/nope"));
    // From a reserved port everything works.
    auto privileged = Client(t, "127.0.0.1", /*reserved=*/true);
    ASSERT_NE(privileged, nullptr);
    uint32_t st;
    EXPECT_TRUE(Getattr(*privileged, root, &st).has_value());
    EXPECT_EQ(st, nfs3::NFS3_OK);
  }
  // An `insecure` export in the same server takes unprivileged ports.
  EXPECT_EQ(GetattrStatus(MountRoot("top")), nfs3::NFS3_OK);
}

TEST_F(ConfinementTest, ClientListIsEnforcedOnMountAndEveryCall) {
  std::string top = MountRoot("top");
  LookupResult file = Lookup(*nfs_, MountRoot("tree/sub"), "file");
  ASSERT_EQ(file.status, nfs3::NFS3_OK);
  // 127.0.0.2 is in no client list.
  ClientOptions stranger;
  stranger.local_ip = "127.0.0.2";
  auto mnt = RawClient::Open(server_.mount_port(), stranger);
  ASSERT_NE(mnt, nullptr);
  uint32_t status = 0;
  EXPECT_EQ(Mount(*mnt, P("top"), &status), "");
  EXPECT_EQ(status, mount3::MNT3ERR_ACCES);
  // The export for 127.0.0.3 only is refused to 127.0.0.1.
  Mount(*mnt_, P("other"), &status);
  EXPECT_EQ(status, mount3::MNT3ERR_ACCES);

  for (rpc::Transport t : {rpc::Transport::kTcp, rpc::Transport::kUdp}) {
    auto c = Client(t, "127.0.0.2");
    ASSERT_NE(c, nullptr);
    uint32_t st;
    Getattr(*c, top, &st);
    EXPECT_EQ(st, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Lookup(*c, top, "x").status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*c, nfs3::kRead, Args().Opaque(file.fh).U64(0).U32(10).str()).status,
              nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*c, nfs3::kCreate, CreateArgs(top, "planted")).status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*c, nfs3::kRemove, DirOp(top, "x")).status, nfs3::NFS3ERR_ACCES);
    EXPECT_EQ(Nfs(*c, nfs3::kFsstat, Args().Opaque(top).str()).status, nfs3::NFS3ERR_ACCES);
    // NULL needs no export and still answers.
    NfsReply null = Nfs(*c, nfs3::kNull, "");
    EXPECT_TRUE(null.ok);
    EXPECT_EQ(null.accept_stat, 0u);
  }
  EXPECT_FALSE(fs::exists(dir_ / "top/planted"));
}

}  // namespace
}  // namespace nfs3d::e2e
