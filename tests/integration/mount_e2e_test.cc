// MOUNT against the real binary: export roots and sub-directories of an
// export can be mounted; files, missing paths and paths outside every export
// cannot. Also the e2e harness's retry on a port taken by a parallel test.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"
#include "xdr/decoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::e2e {
namespace {

class MountE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-mount-e2e-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export" / "a" / "b");
    std::ofstream(dir_ / "export" / "file") << "x";
    nfsd_.Configure(dir_, (dir_ / "export").string() + " 127.0.0.1(rw,insecure)\n");
    ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
  }
  void TearDown() override {
    nfsd_.Stop();
    fs::remove_all(dir_);
  }

  // MNT v3 of path: the status and, on success, the handle.
  uint32_t Mount(const std::string& path, std::string* fh) {
    auto client = RawClient::Open(nfsd_.mount_port());
    EXPECT_NE(client, nullptr);
    auto reply = client->Call(mount3::kProgram, 3, mount3::kMnt, Args().String(path).str());
    EXPECT_TRUE(reply.has_value());
    xdr::Decoder d(Span(reply->results));
    uint32_t status = d.U32();
    if (status == 0) {
      auto bytes = d.Opaque(64);
      fh->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    return status;
  }

  // GETATTR of fh: the fileid (0 on error).
  uint64_t FileId(const std::string& fh) {
    auto client = RawClient::Open(nfsd_.port());
    auto reply = client->Call(nfs3::kProgram, 3, nfs3::kGetattr, Args().Opaque(fh).str());
    xdr::Decoder d(Span(reply->results));
    if (d.U32() != 0) return 0;
    return DecodeFattr(d).fileid;
  }

  fs::path dir_;
  NfsdProcess nfsd_;
};

TEST_F(MountE2eTest, SubdirectoryOfAnExportMounts) {
  std::string fh;
  ASSERT_EQ(Mount((dir_ / "export" / "a" / "b").string(), &fh), mount3::MNT3_OK);
  struct stat st;
  ASSERT_EQ(stat((dir_ / "export" / "a" / "b").c_str(), &st), 0);
  EXPECT_EQ(FileId(fh), st.st_ino);
  // Trailing and doubled slashes name the same directory.
  std::string again;
  ASSERT_EQ(Mount((dir_ / "export").string() + "//a/b/", &again), mount3::MNT3_OK);
  EXPECT_EQ(again, fh);
}

TEST_F(MountE2eTest, BadPathsAreRefused) {
  std::string fh;
  EXPECT_EQ(Mount((dir_ / "export" / "missing").string(), &fh), mount3::MNT3ERR_NOENT);
  EXPECT_EQ(Mount((dir_ / "export" / "file").string(), &fh), mount3::MNT3ERR_NOTDIR);
  EXPECT_EQ(Mount(dir_.string(), &fh), mount3::MNT3ERR_NOENT);  // parent of the export
  EXPECT_EQ(Mount((dir_ / "exportx").string(), &fh), mount3::MNT3ERR_NOENT);
  EXPECT_EQ(Mount((dir_ / "export" / ".." / "export").string(), &fh), mount3::MNT3ERR_NOENT);
}

// The harness itself: a port taken between FreePort and nfs3d's bind (as by
// a test running in parallel) makes it start nfs3d again on new ports.
TEST(NfsdProcessTest, StartsAgainOnNewPortsWhenAPortIsTaken) {
  const fs::path dir = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-harness-", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "export");
  NfsdProcess nfsd;
  nfsd.Configure(dir, (dir / "export").string() + " 127.0.0.1(rw,insecure)\n");
  const uint16_t taken = nfsd.mount_port();
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(taken);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  EXPECT_TRUE(nfsd.Start()) << nfsd.Log();
  EXPECT_NE(nfsd.mount_port(), taken);
  EXPECT_NE(nfsd.Log().find("Address already in use"), std::string::npos);
  EXPECT_TRUE(nfsd.Stop());
  close(holder);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nfs3d::e2e
