// The MOUNT program (v3 and v1) through its real table against a PosixBackend
// on a temp directory: every procedure, the exports a client may or may not
// mount, the flavor list of MNT v3 and arguments that do not decode.
#include "nfsd/mount_program.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "gtest/gtest.h"

#include "conf/exports.h"
#include "nfsd/nfs_server.h"
#include "tests/nfsd/nfs3_test_client.h"
#include "vfs/posix/posix_backend.h"
#include "xdr/mount3_codec.h"

namespace nfs3d::nfsd::testing {
namespace {

namespace m3 = nfs3d::mount3;

class MountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // PosixBackend needs open_by_handle_at (CAP_DAC_READ_SEARCH).
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    char tmpl[] = "/tmp/nfs3d-mount-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"state", "rw", "rw/sub", "other", "krb"}) {
      ASSERT_EQ(mkdir((root_ + "/" + d).c_str(), 0755), 0) << d;
    }
    ASSERT_EQ(close(creat((root_ + "/rw/file").c_str(), 0644)), 0);
    vfs::PosixBackendOptions options;
    options.state_dir = root_ + "/state";
    auto backend = vfs::PosixBackend::Create(options);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    const std::string text = root_ + "/rw 127.0.0.1(rw,no_root_squash,fsid=1)\n" + root_ +
                             "/other 10.0.0.0/8(rw,fsid=2)\n" + root_ +
                             "/krb *(rw,sec=krb5p:sys:krb5,fsid=3)\n";
    auto table = conf::ParseExports(text, "test-exports");
    ASSERT_TRUE(table.ok()) << table.status();
    for (const conf::Export& e : table->exports) {
      ASSERT_TRUE(backend_->AddExport(e.export_id, e.path).ok()) << e.path;
    }
    server_ = std::make_unique<NfsServer>(
        backend_.get(), std::make_shared<const conf::ExportTable>(std::move(*table)),
        TransferSettings());
    service_ = std::make_unique<MountService>(server_.get());
    const rpc::Program both = MakeMountProgram(service_.get());
    ASSERT_EQ(both.versions.size(), 2u);
    // The test client runs a program's first version: one program per version.
    v1_ = both;
    v1_.versions = {both.versions[0]};
    v3_ = both;
    v3_.versions = {both.versions[1]};
    ASSERT_EQ(v1_.versions[0].version, m3::kVersion1);
    ASSERT_EQ(v3_.versions[0].version, m3::kVersion3);
    v1_client_ = std::make_unique<Nfs3TestClient>(v1_);
    v3_client_ = std::make_unique<Nfs3TestClient>(v3_);
  }

  void TearDown() override {
    v1_client_.reset();
    v3_client_.reset();
    service_.reset();
    server_.reset();
    backend_.reset();
    if (root_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  // Runs `proc` of MOUNT v3 with `args` and decodes its result as Res.
  template <typename Res>
  Res Call3(uint32_t proc, const std::function<void(xdr::Encoder&)>& args) {
    std::string reply;
    EXPECT_EQ(v3_client_->Run(proc, args, &reply), rpc::ProcResult::kSuccess);
    return DecodeAll<Res>(reply);
  }

  template <typename Res>
  static Res DecodeAll(const std::string& reply) {
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    Res res;
    EXPECT_TRUE(xdr::Decode(d, &res));
    EXPECT_TRUE(d.ok());
    EXPECT_EQ(d.remaining(), 0u);
    return res;
  }

  static std::function<void(xdr::Encoder&)> Dir(const std::string& path) {
    return [path](xdr::Encoder& e) { Encode(e, m3::DirpathArgs{path}); };
  }
  static void NoArgs(xdr::Encoder&) {}

  m3::MountRes3 Mnt(const std::string& path) { return Call3<m3::MountRes3>(m3::kMnt, Dir(path)); }

  m3::MountList Dump() { return Call3<m3::MountList>(m3::kDump, NoArgs); }

  std::string root_;
  std::unique_ptr<vfs::PosixBackend> backend_;
  std::unique_ptr<NfsServer> server_;
  std::unique_ptr<MountService> service_;
  rpc::Program v1_;
  rpc::Program v3_;
  std::unique_ptr<Nfs3TestClient> v1_client_;
  std::unique_ptr<Nfs3TestClient> v3_client_;
};

TEST_F(MountTest, NullAnswersEmpty) {
  std::string reply;
  EXPECT_EQ(v3_client_->Run(m3::kNull, NoArgs, &reply), rpc::ProcResult::kSuccess);
  EXPECT_TRUE(reply.empty());
  EXPECT_EQ(v1_client_->Run(m3::kNull, NoArgs, &reply), rpc::ProcResult::kSuccess);
  EXPECT_TRUE(reply.empty());
}

TEST_F(MountTest, MntOfAnExportGivesItsRootHandle) {
  m3::MountRes3 res = Mnt(Path("rw"));
  ASSERT_EQ(res.status, m3::MNT3_OK);
  absl::StatusOr<vfs::FileHandle> root = backend_->RootHandle(1);
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_EQ(res.fhandle.len, root->len);
  EXPECT_EQ(std::memcmp(res.fhandle.data, root->data, root->len), 0);
  // No sec= option: AUTH_SYS, then AUTH_NONE.
  EXPECT_EQ(res.auth_flavors, (std::vector<uint32_t>{kAuthSys, kAuthNone}));
}

TEST_F(MountTest, MntOfASubdirectoryWalksToIt) {
  m3::MountRes3 sub = Mnt(Path("rw/sub"));
  ASSERT_EQ(sub.status, m3::MNT3_OK);
  absl::StatusOr<vfs::FileHandle> root = backend_->RootHandle(1);
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE(sub.fhandle.len == root->len &&
               std::memcmp(sub.fhandle.data, root->data, root->len) == 0);
  // A trailing slash and doubled slashes name the same directory.
  EXPECT_EQ(Mnt(Path("rw//sub/")).status, m3::MNT3_OK);
}

TEST_F(MountTest, MntRefusals) {
  EXPECT_EQ(Mnt(Path("nowhere")).status, m3::MNT3ERR_NOENT);  // not exported
  EXPECT_EQ(Mnt(Path("rw/missing")).status, m3::MNT3ERR_NOENT);
  EXPECT_EQ(Mnt(Path("rw/file")).status, m3::MNT3ERR_NOTDIR);
  EXPECT_EQ(Mnt("relative/path").status, m3::MNT3ERR_NOENT);
  // Exported to 10.0.0.0/8 only; the test client calls from 127.0.0.1.
  EXPECT_EQ(Mnt(Path("other")).status, m3::MNT3ERR_ACCES);
  // Exports are secure by default: an unprivileged source port is refused.
  v3_client_->caller.port = 40000;
  EXPECT_EQ(Mnt(Path("rw")).status, m3::MNT3ERR_ACCES);
  // Nothing refused was recorded.
  EXPECT_TRUE(Dump().entries.empty());
}

TEST_F(MountTest, MntListsTheExportFlavorsInItsOrder) {
  m3::MountRes3 res = Mnt(Path("krb"));
  ASSERT_EQ(res.status, m3::MNT3_OK);
  // RFC 2623: Kerberos as its pseudo-flavors.
  EXPECT_EQ(res.auth_flavors, (std::vector<uint32_t>{kKrb5p, kAuthSys, kKrb5}));
}

TEST_F(MountTest, MntV1RefusesHandlesLongerThanItsFixedSize) {
  std::string reply;
  ASSERT_EQ(v1_client_->Run(m3::kMnt, Dir(Path("rw")), &reply), rpc::ProcResult::kSuccess);
  m3::MountRes1 res = DecodeAll<m3::MountRes1>(reply);
  absl::StatusOr<vfs::FileHandle> root = backend_->RootHandle(1);
  ASSERT_TRUE(root.ok());
  if (root->len > m3::kFhSizeV1) {
    EXPECT_EQ(res.status, m3::MNT3ERR_NOTSUPP);
  } else {
    EXPECT_EQ(res.status, m3::MNT3_OK);
  }
  // A refusal for a missing export is the same in v1.
  ASSERT_EQ(v1_client_->Run(m3::kMnt, Dir(Path("nowhere")), &reply), rpc::ProcResult::kSuccess);
  EXPECT_EQ(DecodeAll<m3::MountRes1>(reply).status, m3::MNT3ERR_NOENT);
}

TEST_F(MountTest, DumpListsMountsUntilUnmounted) {
  ASSERT_EQ(Mnt(Path("rw")).status, m3::MNT3_OK);
  ASSERT_EQ(Mnt(Path("rw/sub")).status, m3::MNT3_OK);
  m3::MountList list = Dump();
  ASSERT_EQ(list.entries.size(), 2u);
  EXPECT_EQ(list.entries[0].hostname, "127.0.0.1");
  EXPECT_EQ(list.entries[0].directory, Path("rw"));
  EXPECT_EQ(list.entries[1].directory, Path("rw/sub"));

  std::string reply;
  ASSERT_EQ(v3_client_->Run(m3::kUmnt, Dir(Path("rw")), &reply), rpc::ProcResult::kSuccess);
  EXPECT_TRUE(reply.empty());
  list = Dump();
  ASSERT_EQ(list.entries.size(), 1u);
  EXPECT_EQ(list.entries[0].directory, Path("rw/sub"));
  // Unmounting what is not mounted is harmless.
  ASSERT_EQ(v3_client_->Run(m3::kUmnt, Dir(Path("rw")), &reply), rpc::ProcResult::kSuccess);
  EXPECT_EQ(Dump().entries.size(), 1u);
}

TEST_F(MountTest, UmntAllForgetsOnlyTheCaller) {
  ASSERT_EQ(Mnt(Path("rw")).status, m3::MNT3_OK);
  service_->AddMount("192.0.2.7", Path("rw"));
  std::string reply;
  ASSERT_EQ(v3_client_->Run(m3::kUmntAll, NoArgs, &reply), rpc::ProcResult::kSuccess);
  EXPECT_TRUE(reply.empty());
  m3::MountList list = Dump();
  ASSERT_EQ(list.entries.size(), 1u);
  EXPECT_EQ(list.entries[0].hostname, "192.0.2.7");
}

TEST_F(MountTest, ExportListsEveryExportWithItsClients) {
  for (Nfs3TestClient* client : {v3_client_.get(), v1_client_.get()}) {
    std::string reply;
    ASSERT_EQ(client->Run(m3::kExport, NoArgs, &reply), rpc::ProcResult::kSuccess);
    m3::ExportList list = DecodeAll<m3::ExportList>(reply);
    ASSERT_EQ(list.entries.size(), 3u);
    EXPECT_EQ(list.entries[0].dir, Path("rw"));
    EXPECT_EQ(list.entries[0].groups, (std::vector<std::string>{"127.0.0.1"}));
    EXPECT_EQ(list.entries[1].dir, Path("other"));
    EXPECT_EQ(list.entries[1].groups, (std::vector<std::string>{"10.0.0.0/8"}));
    EXPECT_EQ(list.entries[2].dir, Path("krb"));
    EXPECT_EQ(list.entries[2].groups, (std::vector<std::string>{"*"}));
  }
}

TEST_F(MountTest, GarbageArgumentsAreRefused) {
  std::string reply;
  // A dirpath longer than MNTPATHLEN.
  const std::string long_path = "/" + std::string(m3::kMntPathLen + 1, 'a');
  EXPECT_EQ(v3_client_->Run(m3::kMnt, Dir(long_path), &reply), rpc::ProcResult::kGarbageArgs);
  // A length that promises more bytes than follow.
  auto truncated = [](xdr::Encoder& e) { e.U32(64); };
  EXPECT_EQ(v3_client_->Run(m3::kMnt, truncated, &reply), rpc::ProcResult::kGarbageArgs);
  EXPECT_EQ(v3_client_->Run(m3::kUmnt, truncated, &reply), rpc::ProcResult::kGarbageArgs);
  EXPECT_EQ(v1_client_->Run(m3::kMnt, NoArgs, &reply), rpc::ProcResult::kGarbageArgs);
  EXPECT_TRUE(Dump().entries.empty());
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
