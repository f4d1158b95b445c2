// The RQUOTA program (v1 and v2) through its real table against a
// PosixBackend, with the quotas of one export kept by a stand-in backend
// (QuotaKeeper): the kernels this runs on may have no quota support at all
// (CONFIG_QUOTA off: ext4 and XFS refuse quota mounts), so the figures
// quotactl would give are set here. The other export's file system really is
// asked (PosixBackend::GetQuota) and keeps none. Checked: who may ask about
// whom, the figures and their units, SETQUOTA refused, arguments that do not
// decode.
#include "nfsd/rquota_program.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

#include "conf/exports.h"
#include "nfsd/nfs_server.h"
#include "tests/nfsd/nfs3_test_client.h"
#include "vfs/backend_router.h"
#include "vfs/posix/posix_backend.h"
#include "xdr/rquota_codec.h"

namespace nfs3d::nfsd::testing {
namespace {

namespace rq = nfs3d::rquota;

constexpr uint32_t kUser = 1234;

// Routes everything to the POSIX backend, but answers GetQuota for export 1
// from a table, as a file system with quotas would.
class QuotaKeeper : public vfs::BackendRouter {
 public:
  explicit QuotaKeeper(vfs::Backend* posix) : BackendRouter(posix) {}
  std::map<std::pair<vfs::QuotaKind, uint32_t>, vfs::Quota> quotas;
  absl::StatusOr<std::optional<vfs::Quota>> GetQuota(uint32_t export_id, vfs::QuotaKind kind,
                                                     uint32_t id) override {
    if (export_id != 1) return BackendRouter::GetQuota(export_id, kind, id);
    auto it = quotas.find({kind, id});
    return it == quotas.end() ? std::optional<vfs::Quota>(vfs::Quota{}) : it->second;
  }
};

class RquotaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (PosixBackend: open_by_handle_at)";
    char tmpl[] = "/tmp/nfs3d-rquota-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"state", "quota", "plain"}) {
      ASSERT_EQ(mkdir((root_ + "/" + d).c_str(), 0755), 0) << d;
    }
    vfs::PosixBackendOptions options;
    options.state_dir = Path("state");
    auto backend = vfs::PosixBackend::Create(options);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    keeper_ = std::make_unique<QuotaKeeper>(backend_.get());
    vfs::Quota user;
    user.bytes_hard = 2048 << 10;
    user.bytes_soft = 1024 << 10;
    user.bytes_used = (100 << 10) + 1;  // rounds up to 101 blocks
    user.files_hard = 100;
    user.files_soft = 50;
    user.files_used = 1;
    keeper_->quotas[{vfs::QuotaKind::kUser, kUser}] = user;
    vfs::Quota over;  // over its soft limit, in the grace period
    over.bytes_soft = 1 << 20;
    over.bytes_used = 2 << 20;
    over.bytes_grace_left = 3600;
    keeper_->quotas[{vfs::QuotaKind::kUser, kUser + 1}] = over;
    vfs::Quota huge;  // more 1 KiB blocks than 32 bits count
    huge.bytes_hard = uint64_t{16} << 40;
    huge.bytes_used = uint64_t{5} << 40;
    keeper_->quotas[{vfs::QuotaKind::kUser, kUser + 2}] = huge;
    vfs::Quota group;
    group.bytes_hard = 4096 << 10;
    keeper_->quotas[{vfs::QuotaKind::kGroup, kUser}] = group;
    const std::string text = Path("quota") + " 127.0.0.1(rw,no_root_squash,fsid=1)\n" +
                             Path("plain") + " 127.0.0.1(rw,no_root_squash,fsid=2)\n";
    auto table = conf::ParseExports(text, "test-exports");
    ASSERT_TRUE(table.ok()) << table.status();
    for (const conf::Export& e : table->exports) {
      ASSERT_TRUE(backend_->AddExport(e.export_id, e.path).ok()) << e.path;
    }
    server_ = std::make_unique<NfsServer>(
        keeper_.get(), std::make_shared<const conf::ExportTable>(std::move(*table)),
        TransferSettings());
    const rpc::Program both = MakeRquotaProgram(server_.get());
    ASSERT_EQ(both.versions.size(), 2u);
    v1_ = both;
    v1_.versions = {both.versions[0]};
    v2_ = both;
    v2_.versions = {both.versions[1]};
    v1_client_ = std::make_unique<Nfs3TestClient>(v1_);
    v2_client_ = std::make_unique<Nfs3TestClient>(v2_);
  }

  void TearDown() override {
    v1_client_.reset();
    v2_client_.reset();
    server_.reset();
    keeper_.reset();
    backend_.reset();
    if (root_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  rq::GetQuotaRes Ask(int version, const std::string& path, uint32_t type, uint32_t id) {
    Nfs3TestClient& client = version == 1 ? *v1_client_ : *v2_client_;
    std::string reply;
    EXPECT_EQ(client.Run(
                  rq::kGetQuota,
                  [&](xdr::Encoder& e) {
                    rq::GetQuotaArgs args{path, type, static_cast<int32_t>(id)};
                    if (version == 1) {
                      Encode(e, rq::GetQuotaArgsV1{args});
                    } else {
                      Encode(e, rq::GetQuotaArgsV2{args});
                    }
                  },
                  &reply),
              rpc::ProcResult::kSuccess);
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    rq::GetQuotaRes res;
    EXPECT_TRUE(xdr::Decode(d, &res));
    EXPECT_EQ(d.remaining(), 0u);
    return res;
  }

  void As(uint32_t uid, uint32_t gid, std::vector<uint32_t> gids = {}) {
    for (Nfs3TestClient* c : {v1_client_.get(), v2_client_.get()}) {
      c->caller.uid = uid;
      c->caller.gid = gid;
      c->caller.gids = gids;
    }
  }

  std::string root_;
  std::unique_ptr<vfs::PosixBackend> backend_;
  std::unique_ptr<QuotaKeeper> keeper_;
  std::unique_ptr<NfsServer> server_;
  rpc::Program v1_, v2_;
  std::unique_ptr<Nfs3TestClient> v1_client_, v2_client_;
};

TEST_F(RquotaTest, RootSeesAUsersLimitsAndUsage) {
  rq::GetQuotaRes r = Ask(2, Path("quota"), rq::kUserQuota, kUser);
  ASSERT_EQ(r.status, rq::Q_OK);
  EXPECT_EQ(r.rquota.bsize, 1024);
  EXPECT_TRUE(r.rquota.active);
  EXPECT_EQ(r.rquota.bhardlimit, 2048u);
  EXPECT_EQ(r.rquota.bsoftlimit, 1024u);
  EXPECT_EQ(r.rquota.curblocks, 101u);
  EXPECT_EQ(r.rquota.fhardlimit, 100u);
  EXPECT_EQ(r.rquota.fsoftlimit, 50u);
  EXPECT_EQ(r.rquota.curfiles, 1u);
  EXPECT_EQ(r.rquota.btimeleft, 0u);  // under the soft limit
  // Version 1 asks about a user by uid; a path below the export is its.
  rq::GetQuotaRes v1 = Ask(1, Path("quota/sub/dir"), rq::kUserQuota, kUser);
  ASSERT_EQ(v1.status, rq::Q_OK);
  EXPECT_EQ(v1.rquota.bhardlimit, 2048u);
  rq::GetQuotaRes group = Ask(2, Path("quota"), rq::kGroupQuota, kUser);
  ASSERT_EQ(group.status, rq::Q_OK);
  EXPECT_EQ(group.rquota.bhardlimit, 4096u);
  rq::GetQuotaRes over = Ask(2, Path("quota"), rq::kUserQuota, kUser + 1);
  ASSERT_EQ(over.status, rq::Q_OK);
  EXPECT_EQ(over.rquota.btimeleft, 3600u);
  EXPECT_EQ(over.rquota.curblocks, 2048u);
  // 5 TiB in 1 KiB blocks do not fit 32 bits: the block size doubles until
  // they do, as rpc.rquotad does.
  rq::GetQuotaRes huge = Ask(2, Path("quota"), rq::kUserQuota, kUser + 2);
  ASSERT_EQ(huge.status, rq::Q_OK);
  EXPECT_EQ(huge.rquota.bsize, 8192);  // 16 TiB / 4 KiB is one more than 32 bits hold
  EXPECT_EQ(uint64_t{huge.rquota.curblocks} * 8192, uint64_t{5} << 40);
  EXPECT_EQ(uint64_t{huge.rquota.bhardlimit} * 8192, uint64_t{16} << 40);
}

TEST_F(RquotaTest, AUserMayAskAboutItselfAndItsGroupsOnly) {
  As(kUser, kUser, {kUser, 20});
  EXPECT_EQ(Ask(1, Path("quota"), rq::kUserQuota, kUser).status, rq::Q_OK);
  EXPECT_EQ(Ask(2, Path("quota"), rq::kUserQuota, kUser + 1).status, rq::Q_EPERM);
  EXPECT_EQ(Ask(2, Path("quota"), rq::kGroupQuota, kUser).status, rq::Q_OK);
  EXPECT_EQ(Ask(2, Path("quota"), rq::kGroupQuota, 20).status, rq::Q_OK);
  EXPECT_EQ(Ask(2, Path("quota"), rq::kGroupQuota, 21).status, rq::Q_EPERM);
}

TEST_F(RquotaTest, NoQuotaWhereTheFileSystemKeepsNone) {
  EXPECT_EQ(Ask(2, Path("plain"), rq::kUserQuota, kUser).status, rq::Q_NOQUOTA);
  EXPECT_EQ(Ask(2, "/not/exported", rq::kUserQuota, kUser).status, rq::Q_NOQUOTA);
}

TEST_F(RquotaTest, AnUnlistedClientIsRefused) {
  // The test client calls from loopback: export to another host only.
  auto reparsed = conf::ParseExports(Path("quota") + " 10.9.9.9(rw,fsid=1)\n", "t");
  ASSERT_TRUE(reparsed.ok());
  server_->SetExports(std::make_shared<const conf::ExportTable>(std::move(*reparsed)));
  EXPECT_EQ(Ask(2, Path("quota"), rq::kUserQuota, kUser).status, rq::Q_EPERM);
}

TEST_F(RquotaTest, SetQuotaIsRefused) {
  for (int version : {1, 2}) {
    Nfs3TestClient& client = version == 1 ? *v1_client_ : *v2_client_;
    std::string reply;
    const std::string path = Path("quota");  // the arguments borrow it
    ASSERT_EQ(client.Run(
                  rq::kSetQuota,
                  [&](xdr::Encoder& e) {
                    rq::SetQuotaArgs args;
                    args.path = path;
                    args.id = kUser;
                    if (version == 1) {
                      Encode(e, rq::SetQuotaArgsV1{args});
                    } else {
                      Encode(e, rq::SetQuotaArgsV2{args});
                    }
                  },
                  &reply),
              rpc::ProcResult::kSuccess);
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    rq::GetQuotaRes res;
    ASSERT_TRUE(xdr::Decode(d, &res));
    EXPECT_EQ(res.status, rq::Q_EPERM);
  }
}

TEST_F(RquotaTest, ArgumentsThatDoNotDecodeAreGarbage) {
  std::string reply;
  EXPECT_EQ(v2_client_->Run(
                rq::kGetQuota, [](xdr::Encoder& e) { e.U32(4); }, &reply),
            rpc::ProcResult::kGarbageArgs);
  // Version 2 with a quota type that is neither user nor group.
  EXPECT_EQ(v2_client_->Run(
                rq::kGetQuota,
                [](xdr::Encoder& e) {
                  Encode(e, rq::GetQuotaArgsV2{{"/x", rq::kUserQuota, 1}});
                },
                &reply),
            rpc::ProcResult::kSuccess);
  EXPECT_EQ(v2_client_->Run(
                rq::kGetQuota,
                [](xdr::Encoder& e) {
                  e.U32(2);
                  e.U32(0x2f780000);  // "/x" padded
                  e.U32(7);           // type
                  e.U32(1);
                },
                &reply),
            rpc::ProcResult::kGarbageArgs);
  // A path over RQ_PATHLEN.
  EXPECT_EQ(v2_client_->Run(
                rq::kGetQuota, [](xdr::Encoder& e) { e.U32(rq::kPathLen + 1); }, &reply),
            rpc::ProcResult::kGarbageArgs);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
