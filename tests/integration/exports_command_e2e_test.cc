// Exports changed at run time against the real binary: `nfs3d exports
// list|show|add|remove|check` on a running server (add serves at once,
// remove makes the removed export's handles stale and leaves the others
// alone, a change that does not parse is refused with the file untouched,
// the change is logged with who made it), and [paths] exports_poll: an
// edited file is in force without SIGHUP, a broken one refused and counted.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"
#include "xdr/decoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::e2e {
namespace {

class ExportsCommandE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-exports-cmd-", getpid());
    fs::remove_all(dir_);
    for (const char* sub : {"a", "b", "c"}) fs::create_directories(dir_ / sub);
  }
  void TearDown() override {
    nfsd_.Stop();
    fs::remove_all(dir_);
  }

  void StartServing(const std::vector<std::string>& subs, const std::string& extra = "") {
    std::string exports;
    for (const std::string& s : subs) exports += Line(s) + "\n";
    nfsd_.Configure(dir_, exports, extra);
    ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
  }

  std::string Path(const std::string& sub) { return (dir_ / sub).string(); }
  std::string Line(const std::string& sub) { return Path(sub) + " 127.0.0.1(rw,insecure)"; }

  // `nfs3d exports ARGS` on the server's configuration: exit status and output.
  int Command(const std::vector<std::string>& args, std::string* output = nullptr) {
    return nfsd_.Command("exports", args, output);
  }

  // MNT v3 of an export: the status, and the handle on success.
  uint32_t Mount(const std::string& sub, std::string* fh = nullptr) {
    auto client = RawClient::Open(nfsd_.mount_port());
    EXPECT_NE(client, nullptr);
    auto reply = client->Call(mount3::kProgram, 3, mount3::kMnt, Args().String(Path(sub)).str());
    EXPECT_TRUE(reply.has_value());
    if (!reply) return 999;
    xdr::Decoder d(Span(reply->results));
    uint32_t status = d.U32();
    if (status == 0 && fh) {
      auto bytes = d.Opaque(64);
      fh->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    return status;
  }

  // GETATTR of fh: the nfsstat3.
  uint32_t Getattr(const std::string& fh) {
    auto client = RawClient::Open(nfsd_.port());
    auto reply = client->Call(nfs3::kProgram, 3, nfs3::kGetattr, Args().Opaque(fh).str());
    EXPECT_TRUE(reply.has_value());
    return reply ? xdr::Decoder(Span(reply->results)).U32() : 999;
  }

  // Waits up to 10 s for MNT of sub to succeed (or, with !ok, to fail).
  bool MountBecomes(const std::string& sub, bool ok) {
    for (int i = 0; i < 100; ++i) {
      if ((Mount(sub) == mount3::MNT3_OK) == ok) return true;
      usleep(100000);
    }
    return false;
  }

  std::string ExportsFile() {
    std::ifstream in(dir_ / "exports");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
  NfsdProcess nfsd_;
};

TEST_F(ExportsCommandE2eTest, AddServesAtOnceAndRemoveUnexports) {
  StartServing({"a", "c"});
  std::string a_fh, c_fh;
  ASSERT_EQ(Mount("a", &a_fh), mount3::MNT3_OK);
  ASSERT_EQ(Mount("c", &c_fh), mount3::MNT3_OK);
  ASSERT_NE(Mount("b"), mount3::MNT3_OK);

  std::string out;
  ASSERT_EQ(Command({"add", Path("b"), "127.0.0.1(rw,insecure)"}, &out), 0) << out;
  EXPECT_NE(out.find("in force (nfs3d pid"), std::string::npos) << out;
  // In force when the command returns: no waiting.
  EXPECT_EQ(Mount("b"), mount3::MNT3_OK);

  ASSERT_EQ(Command({"remove", Path("c")}, &out), 0) << out;
  EXPECT_NE(Mount("c"), mount3::MNT3_OK);
  EXPECT_EQ(Getattr(c_fh), static_cast<uint32_t>(nfs3::NFS3ERR_STALE));
  EXPECT_EQ(Getattr(a_fh), static_cast<uint32_t>(nfs3::NFS3_OK));  // others untouched

  ASSERT_EQ(Command({"list"}, &out), 0) << out;
  EXPECT_NE(out.find(Path("a")), std::string::npos) << out;
  EXPECT_NE(out.find(Path("b")), std::string::npos) << out;
  EXPECT_EQ(out.find(Path("c")), std::string::npos) << out;
  EXPECT_NE(out.find("rw,"), std::string::npos) << out;  // options spelled out
  ASSERT_EQ(Command({"show", Path("b")}, &out), 0) << out;
  EXPECT_EQ(out.find(Path("a")), std::string::npos) << out;
  EXPECT_NE(Command({"show", Path("c")}, &out), 0) << out;
  ASSERT_EQ(Command({"check"}, &out), 0) << out;
  EXPECT_NE(out.find("2 exports, valid"), std::string::npos) << out;

  // Who made the last change: in the file, and in the server's log.
  EXPECT_NE(ExportsFile().find(absl::StrCat("# last change: ")), std::string::npos);
  const std::string log = nfsd_.Log();
  EXPECT_NE(log.find(absl::StrCat(": remove ", Path("c"))), std::string::npos) << log;
  EXPECT_NE(log.find(absl::StrCat(": add ", Path("b"))), std::string::npos) << log;
}

TEST_F(ExportsCommandE2eTest, ASecondServerThatCannotStartLeavesThePidFileToTheFirst) {
  StartServing({"a"});
  // The same configuration again: its ports are taken, so it exits.
  std::string out;
  EXPECT_NE(nfsd_.Command("--foreground", {}, &out), 0) << out;
  ASSERT_EQ(Command({"add", Path("b"), "127.0.0.1(rw,insecure)"}, &out), 0) << out;
  EXPECT_NE(out.find(absl::StrCat("in force (nfs3d pid ", nfsd_.pid())), std::string::npos) << out;
  EXPECT_EQ(Mount("b"), mount3::MNT3_OK);
}

TEST_F(ExportsCommandE2eTest, ChangesThatDoNotParseAreRefusedWithTheFileUntouched) {
  StartServing({"a"});
  const std::string before = ExportsFile();
  std::string out;
  EXPECT_EQ(Command({"add", Path("b"), "127.0.0.1(rw,bogus_option)"}, &out), 1) << out;
  EXPECT_NE(out.find("bogus_option"), std::string::npos) << out;
  EXPECT_EQ(Command({"add", "relative/path", "*(rw)"}, &out), 1) << out;
  EXPECT_EQ(Command({"remove", Path("b")}, &out), 1) << out;  // not exported
  EXPECT_EQ(Command({"frobnicate"}, &out), 2) << out;
  EXPECT_EQ(ExportsFile(), before);
  EXPECT_EQ(Mount("a"), mount3::MNT3_OK);
}

TEST_F(ExportsCommandE2eTest, AFollowedFileIsInForceWithoutSighup) {
  StartServing({"a"}, "\n[paths]\nexports_poll = 1\n");
  ASSERT_NE(Mount("b"), mount3::MNT3_OK);
  std::ofstream(dir_ / "exports") << Line("a") << "\n" << Line("b") << "\n";
  EXPECT_TRUE(MountBecomes("b", true)) << nfsd_.Log();

  // A broken file: refused, logged, and the exports in force stay.
  std::ofstream(dir_ / "exports") << Path("c") << " 127.0.0.1(rw,bogus_option)\n";
  EXPECT_TRUE(nfsd_.WaitForLog("refused, keeping the exports in force")) << nfsd_.Log();
  EXPECT_EQ(Mount("a"), mount3::MNT3_OK);
  EXPECT_EQ(Mount("b"), mount3::MNT3_OK);
  EXPECT_NE(Mount("c"), mount3::MNT3_OK);

  // The command on a followed file: the follower applies it.
  std::string out;
  ASSERT_EQ(Command({"add", Path("c"), "127.0.0.1(rw,insecure)"}, &out), 1) << out;  // file broken
  std::ofstream(dir_ / "exports") << Line("a") << "\n";
  EXPECT_TRUE(MountBecomes("b", false)) << nfsd_.Log();
  ASSERT_EQ(Command({"add", Path("c"), "127.0.0.1(rw,insecure)"}, &out), 0) << out;
  EXPECT_NE(out.find("within 1 s"), std::string::npos) << out;
  EXPECT_TRUE(MountBecomes("c", true)) << nfsd_.Log();
}

}  // namespace
}  // namespace nfs3d::e2e
