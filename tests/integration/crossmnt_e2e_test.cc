// File systems mounted below an export, and the options about file systems,
// against the real binary: a tmpfs on a directory of an export is entered
// with `crossmnt` (its own fsid, handles that survive a restart, ".." back
// into the export), an export with `nohide` mounted inside another export is
// entered from it, without either option the client sees the directory the
// mount covers, as with knfsd; `mountpoint` refuses MNT of a directory that
// is no mount point (until one is mounted), `fsid=` is the fsid clients see.
// Needs root (mounts tmpfs).
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

class CrossmntE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to mount tmpfs";
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-crossmnt-e2e-", getpid());
    fs::remove_all(dir_);
    for (const char* d : {"cross/sub", "plain/sub", "parent/child"}) {
      fs::create_directories(dir_ / d);
      std::ofstream(dir_ / d / "covered") << "under the mount";
      struct stat st;
      ASSERT_EQ(stat((dir_ / d).c_str(), &st), 0);
      covered_ino_[d] = st.st_ino;
      ASSERT_EQ(mount("tmpfs", (dir_ / d).c_str(), "tmpfs", 0, "size=1m"), 0) << d;
      mounted_.push_back(dir_ / d);
      std::ofstream(dir_ / d / "onsub") << "on the tmpfs";
    }
    fs::create_directories(dir_ / "unmounted");
    nfsd_.Configure(dir_, Line("cross", "crossmnt") + Line("plain", "fsid=77") +
                              Line("parent", "") + Line("parent/child", "nohide,mountpoint") +
                              Line("unmounted", "mp"));
    ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
  }
  void TearDown() override {
    nfsd_.Stop();
    for (const fs::path& p : mounted_) umount2(p.c_str(), MNT_DETACH);
    fs::remove_all(dir_);
  }

  std::string Line(const std::string& rel, const std::string& opts) {
    return (dir_ / rel).string() + " 127.0.0.1(rw,insecure,no_root_squash" +
           (opts.empty() ? "" : "," + opts) + ")\n";
  }
  std::string Root(const std::string& rel) {
    auto c = RawClient::Open(nfsd_.mount_port());
    return Mount(*c, (dir_ / rel).string());
  }

  // READDIR of dir (one call): the names.
  std::vector<std::string> Names(RawClient& c, const std::string& dir) {
    NfsReply r = Nfs(c, nfs3::kReaddir, Args().Opaque(dir).U64(0).U64(0).U32(8192).str());
    std::vector<std::string> names;
    if (!r.ok || r.status != 0) return names;
    xdr::Decoder d(Span(r.results));
    d.U32();
    DecodePostOpAttr(d);
    d.U64();  // cookie verifier
    while (d.ok() && d.Bool()) {
      d.U64();
      names.push_back(std::string(d.String(255)));
      d.U64();
    }
    return names;
  }

  fs::path dir_;
  std::map<std::string, ino_t> covered_ino_;  // the directories the mounts cover
  std::vector<fs::path> mounted_;
  NfsdProcess nfsd_;
};

TEST_F(CrossmntE2eTest, CrossmntEntersTheSubmountAndItsHandlesSurviveARestart) {
  std::string root = Root("cross");
  ASSERT_FALSE(root.empty()) << nfsd_.Log();
  auto c = RawClient::Open(nfsd_.port());
  LookupResult sub = Lookup(*c, root, "sub");
  ASSERT_EQ(sub.status, 0u) << nfsd_.Log();
  uint32_t status = 0;
  std::optional<Fattr> root_attr = Getattr(*c, root, &status);
  ASSERT_TRUE(root_attr.has_value());
  EXPECT_NE(sub.attr.fsid, root_attr->fsid);  // the client sees another file system
  LookupResult file = Lookup(*c, sub.fh, "onsub");
  ASSERT_EQ(file.status, 0u);
  EXPECT_EQ(file.attr.size, 12u);  // "on the tmpfs", not the covered file
  EXPECT_EQ(Lookup(*c, sub.fh, "covered").status, nfs3::NFS3ERR_NOENT);
  LookupResult up = Lookup(*c, sub.fh, "..");
  ASSERT_EQ(up.status, 0u);
  EXPECT_EQ(up.attr.fileid, root_attr->fileid);

  ASSERT_TRUE(nfsd_.Stop()) << nfsd_.Log();
  ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
  c = RawClient::Open(nfsd_.port());
  std::optional<Fattr> again = Getattr(*c, file.fh, &status);
  ASSERT_EQ(status, 0u) << "submount handle went stale across a restart\n" << nfsd_.Log();
  EXPECT_EQ(again->fileid, file.attr.fileid);
  EXPECT_EQ(Getattr(*c, sub.fh, &status)->fsid, sub.attr.fsid);
}

TEST_F(CrossmntE2eTest, NohideExportIsEnteredFromItsParent) {
  std::string parent = Root("parent");
  std::string child = Root("parent/child");
  ASSERT_FALSE(parent.empty());
  ASSERT_FALSE(child.empty());
  auto c = RawClient::Open(nfsd_.port());
  LookupResult entered = Lookup(*c, parent, "child");
  ASSERT_EQ(entered.status, 0u) << nfsd_.Log();
  EXPECT_EQ(entered.fh, child);
  EXPECT_EQ(Lookup(*c, entered.fh, "onsub").status, 0u);
}

TEST_F(CrossmntE2eTest, MountpointOptionRefusesADirectoryThatIsNoMountPoint) {
  auto c = RawClient::Open(nfsd_.mount_port());
  uint32_t status = 0;
  EXPECT_EQ(Mount(*c, (dir_ / "unmounted").string(), &status), "");
  EXPECT_EQ(status, mount3::MNT3ERR_NOENT);
  EXPECT_NE(Mount(*c, (dir_ / "parent/child").string(), &status), "");  // a tmpfs: served
  // Mounted later: served from then on, the mounted file system and not the
  // directory nfs3d found there when it started.
  ASSERT_EQ(mount("tmpfs", (dir_ / "unmounted").c_str(), "tmpfs", 0, "size=1m"), 0);
  mounted_.push_back(dir_ / "unmounted");
  std::string root = Mount(*c, (dir_ / "unmounted").string(), &status);
  ASSERT_NE(root, "") << nfsd_.Log();
  struct stat st;
  ASSERT_EQ(stat((dir_ / "unmounted").c_str(), &st), 0);
  auto nfs = RawClient::Open(nfsd_.port());
  EXPECT_EQ(Getattr(*nfs, root, &status)->fileid, st.st_ino);
  std::ofstream(dir_ / "unmounted" / "on-disk") << "x";
  EXPECT_EQ(Lookup(*nfs, root, "on-disk").status, 0u);
}

TEST_F(CrossmntE2eTest, FsidIsWhatClientsSee) {
  auto c = RawClient::Open(nfsd_.port());
  uint32_t status = 0;
  std::optional<Fattr> attr = Getattr(*c, Root("plain"), &status);
  ASSERT_TRUE(attr.has_value());
  EXPECT_EQ(attr->fsid, 77u);
}

TEST_F(CrossmntE2eTest, WithoutTheOptionsTheCoveredDirectoryIsSeen) {
  std::string plain = Root("plain");
  ASSERT_FALSE(plain.empty());
  auto c = RawClient::Open(nfsd_.port());
  LookupResult sub = Lookup(*c, plain, "sub");
  ASSERT_EQ(sub.status, 0u) << nfsd_.Log();
  EXPECT_EQ(sub.attr.fileid, covered_ino_["plain/sub"]);
  uint32_t status = 0;
  EXPECT_EQ(sub.attr.fsid, 77u);  // the export's file system (fsid=77)
  LookupResult covered = Lookup(*c, sub.fh, "covered");
  ASSERT_EQ(covered.status, 0u);
  EXPECT_EQ(covered.attr.size, 15u);  // "under the mount"
  EXPECT_EQ(Lookup(*c, sub.fh, "onsub").status, nfs3::NFS3ERR_NOENT);
  std::vector<std::string> names = Names(*c, sub.fh);
  EXPECT_NE(std::find(names.begin(), names.end(), "covered"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "onsub"), names.end());
  // The handle works after a restart too (open_by_handle_at reaches it).
  ASSERT_TRUE(nfsd_.Stop());
  ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
  c = RawClient::Open(nfsd_.port());
  EXPECT_EQ(Getattr(*c, sub.fh, &status)->fileid, covered_ino_["plain/sub"]);
  names = Names(*c, sub.fh);
  EXPECT_NE(std::find(names.begin(), names.end(), "covered"), names.end());
  EXPECT_EQ(Lookup(*c, sub.fh, "covered").status, 0u);
}

}  // namespace
}  // namespace nfs3d::e2e
