// CephFS exports that are mounts of their own: sub-directory exports rooted
// at their directory, exports with a cephx user of their own (a user whose
// MDS caps allow only that directory), and RQUOTA figures from the exported
// directory's quota. On the test cluster (cephfs_test_fixture.h).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "tests/vfs/cephfs/cephfs_test_fixture.h"
#include "tests/vfs/cephfs/native_client.h"
#include "vfs/cephfs/cephfs_backend.h"
#include "vfs/file_handle_codec.h"
#include "vfs/state_dir.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

constexpr uint32_t kRootExport = 7;
constexpr uint32_t kSubExport = 70;
const Cred kRoot = kCephRoot;

// Runs the ceph command line as client.admin; its output goes to `out`.
bool CephCli(const std::string& args, const std::string& out = "/dev/null") {
  const std::string cmd = "ceph -c '" + ClusterDir() + "/ceph.conf' -k '" + ClusterDir() +
                          "/keyring' -n client.admin --connect-timeout 20 " + args + " >'" + out +
                          "' 2>/dev/null";
  return std::system(cmd.c_str()) == 0;
}

class CephfsExportMountsTest : public CephfsTestBase {
 protected:
  CephfsExportMountsTest()
      : CephfsTestBase("nfs3d-cephfs-mounts", kRootExport, /*session_check_seconds=*/0) {}

  void TearDown() override {
    CephfsTestBase::TearDown();
    for (const std::string& user : users_) CephCli("auth rm client." + user);
  }

  // A cephx user whose MDS caps allow only `path` (ceph fs authorize);
  // returns its keyring file.
  std::string MakeUser(const std::string& id, const std::string& path) {
    const std::string keyring = state_.string() + "/" + id + ".keyring";
    EXPECT_TRUE(CephCli("fs authorize cephfs client." + id + " " + path + " rw", keyring)) << id;
    users_.push_back(id);
    return keyring;
  }

  FileHandle Mkdir(const FileHandle& parent, const std::string& name) {
    Wcc wcc;
    SetAttributes mode;
    mode.mode = 0777;
    auto made = backend_->Mkdir(kRoot, parent, name, mode, &wcc);
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? made->handle : FileHandle{};
  }

  // A handle of export `export_id` for inode `ino`, signed with this head's
  // key: what a client holding an old handle (or the key) could present.
  FileHandle HandleFor(uint32_t export_id, uint64_t ino) {
    auto dir = StateDir::Open(StateDirPath());
    EXPECT_TRUE(dir.ok());
    auto secret = (*dir)->LoadOrCreateSecret();
    EXPECT_TRUE(secret.ok());
    uint8_t body[16] = {};
    for (int i = 7; i >= 0; --i, ino >>= 8) body[i] = static_cast<uint8_t>(ino);
    for (int i = 8; i < 16; ++i) body[i] = 0xff;
    body[15] = 0xfe;  // CEPH_NOSNAP: not in a snapshot
    auto fh = HandleCodec(*secret).Encode(export_id, kCephHandleType, {body, sizeof(body)});
    EXPECT_TRUE(fh.ok());
    return fh.ok() ? *fh : FileHandle{};
  }

  std::vector<std::string> users_;
};

// A sub-directory export is a mount rooted at its directory: ".." of its
// root is its root, and a handle of a directory outside it (moved out, or
// made for another export) is stale, also after a restart.
TEST_F(CephfsExportMountsTest, SubdirectoryExportIsConfined) {
  FileHandle inside = Mkdir(dir_, "inside");
  Mkdir(inside, "deep");
  FileHandle outside = Mkdir(dir_, "outside");
  ASSERT_TRUE(backend_->AddExport(kSubExport, dir_path_ + "/inside").ok());
  ASSERT_OK_AND_ASSIGN(root, backend_->RootHandle(kSubExport));
  ASSERT_OK_AND_ASSIGN(up, backend_->Lookup(kRoot, root, "..", nullptr));
  EXPECT_EQ(up.handle, root);
  ASSERT_OK_AND_ASSIGN(deep, backend_->Lookup(kRoot, root, "deep", nullptr));
  ASSERT_OK_AND_ASSIGN(deep_attrs, backend_->GetAttr(kRoot, deep.handle));
  ASSERT_OK_AND_ASSIGN(outside_attrs, backend_->GetAttr(kRoot, outside));
  // Across exports: EXDEV, as on POSIX.
  Wcc from, to;
  EXPECT_EQ(ErrnoOf(backend_->Rename(kRoot, root, "deep", dir_, "deep", &from, &to)), EXDEV);

  // Moved out of the export through the file system's root export.
  ASSERT_TRUE(backend_->Rename(kRoot, inside, "deep", outside, "deep", &from, &to).ok());
  backend_ = Open();  // a restarted head: nothing cached
  ASSERT_NE(backend_, nullptr);
  ASSERT_TRUE(backend_->AddExport(kSubExport, dir_path_ + "/inside").ok());
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, deep.handle).status()), ESTALE);
  // Another directory outside, with a handle of this export.
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, HandleFor(kSubExport, outside_attrs.fileid)).status()),
            ESTALE);
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, HandleFor(kSubExport, deep_attrs.fileid)).status()),
            ESTALE);
  // Inside it, handles keep working after the restart.
  ASSERT_OK_AND_ASSIGN(root_again, backend_->RootHandle(kSubExport));
  EXPECT_EQ(root_again, root);
  Mkdir(inside, "later");
  ASSERT_OK_AND_ASSIGN(later, backend_->Lookup(kRoot, root, "later", nullptr));
  EXPECT_TRUE(backend_->GetAttr(kRoot, later.handle).ok());
}

// An export names its own cephx user whose MDS caps allow only its
// directory: it serves that directory, the MDS refuses anything outside it,
// and a user whose caps do not allow the path is refused at AddExport (the
// daemon's start or reload) with the user and path in the message.
TEST_F(CephfsExportMountsTest, ExportWithItsOwnCephxUser) {
  Mkdir(dir_, "sub");
  FileHandle outside = Mkdir(dir_, "outside");
  const std::string sub = dir_path_ + "/sub";
  const std::string me = "nfs3d-sub-" + std::to_string(getpid());
  const std::string keyring = MakeUser(me, sub);
  ASSERT_TRUE(backend_->AddExport(kSubExport, sub, 0, CephUser{me, keyring}).ok());
  ASSERT_OK_AND_ASSIGN(root, backend_->RootHandle(kSubExport));
  Wcc wcc;
  SetAttributes attrs;
  attrs.mode = 0644;
  ASSERT_OK_AND_ASSIGN(
      file, backend_->Create(kRoot, root, "through-sub", CreateMode::kGuarded, attrs, {}, &wcc));
  const std::string text = "written as " + me;
  ASSERT_TRUE(backend_
                  ->Write(kRoot, file.handle, 0,
                          {reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                          StableHow::kFileSync, &wcc)
                  .ok());
  // It is in the file system's sub directory.
  ASSERT_OK_AND_ASSIGN(sub_dir, backend_->Lookup(kRoot, dir_, "sub", nullptr));
  ASSERT_OK_AND_ASSIGN(seen, backend_->Lookup(kRoot, sub_dir.handle, "through-sub", nullptr));
  EXPECT_EQ(seen.attributes.size, text.size());
  ASSERT_OK_AND_ASSIGN(up, backend_->Lookup(kRoot, root, "..", nullptr));
  EXPECT_EQ(up.handle, root);
  // A file and a directory outside, presented with this export's id.
  FileHandle out_file;
  {
    ASSERT_OK_AND_ASSIGN(
        f, backend_->Create(kRoot, outside, "secret", CreateMode::kGuarded, attrs, {}, &wcc));
    out_file = f.handle;
  }
  ASSERT_OK_AND_ASSIGN(out_dir_attrs, backend_->GetAttr(kRoot, outside));
  ASSERT_OK_AND_ASSIGN(out_file_attrs, backend_->GetAttr(kRoot, out_file));
  for (uint64_t ino : {out_dir_attrs.fileid, out_file_attrs.fileid}) {
    EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, HandleFor(kSubExport, ino)).status()), ESTALE)
        << ino;
  }

  // A user whose caps allow another path only.
  const std::string other = "nfs3d-other-" + std::to_string(getpid());
  const std::string other_keyring = MakeUser(other, dir_path_ + "/outside");
  absl::Status refused =
      backend_->AddExport(kSubExport + 1, sub, 0, CephUser{other, other_keyring});
  ASSERT_FALSE(refused.ok());
  const std::string message(refused.message());
  EXPECT_NE(message.find("client." + other), std::string::npos) << message;
  EXPECT_NE(message.find(sub), std::string::npos) << message;
  EXPECT_NE(message.find("caps"), std::string::npos) << message;
  EXPECT_EQ(ErrnoOf(backend_->RootHandle(kSubExport + 1).status()), ESTALE);
  // A keyring that does not exist names the user too.
  absl::Status no_key =
      backend_->AddExport(kSubExport + 2, sub, 0, CephUser{me, state_.string() + "/none"});
  ASSERT_FALSE(no_key.ok());
  EXPECT_NE(std::string(no_key.message()).find("client." + me), std::string::npos) << no_key;
}

// RQUOTA on a CephFS export: the exported directory's limits and recursive
// usage, the same for every user and group; none without limits.
TEST_F(CephfsExportMountsTest, GetQuotaReportsTheExportedDirectorysQuota) {
  FileHandle q = Mkdir(dir_, "q");
  ASSERT_TRUE(backend_->AddExport(kSubExport, dir_path_ + "/q").ok());
  ASSERT_OK_AND_ASSIGN(none, backend_->GetQuota(kSubExport, QuotaKind::kUser, 1000));
  EXPECT_FALSE(none.has_value());

  ASSERT_OK_AND_ASSIGN(native, ::nfs3d::test_support::NativeClient::Mount(ClusterDir()));
  constexpr uint64_t kMaxBytes = 32 << 20, kMaxFiles = 500;
  ASSERT_TRUE(
      native->SetXattr(dir_path_ + "/q", "ceph.quota.max_bytes", std::to_string(kMaxBytes)).ok());
  ASSERT_TRUE(
      native->SetXattr(dir_path_ + "/q", "ceph.quota.max_files", std::to_string(kMaxFiles)).ok());
  Wcc wcc;
  SetAttributes attrs;
  attrs.mode = 0644;
  ASSERT_OK_AND_ASSIGN(file,
                       backend_->Create(kRoot, q, "data", CreateMode::kGuarded, attrs, {}, &wcc));
  std::vector<uint8_t> data(1 << 20, 'q');
  ASSERT_TRUE(backend_->Write(kRoot, file.handle, 0, data, StableHow::kFileSync, &wcc).ok());
  // Recursive statistics reach the directory a moment later.
  Quota quota;
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK_AND_ASSIGN(now, backend_->GetQuota(kSubExport, QuotaKind::kUser, 1000));
    ASSERT_TRUE(now.has_value());
    quota = *now;
    if (quota.bytes_used >= data.size()) break;
    usleep(100 * 1000);
  }
  EXPECT_EQ(quota.bytes_hard, kMaxBytes);
  EXPECT_EQ(quota.bytes_soft, 0u);
  EXPECT_EQ(quota.bytes_used, data.size());
  EXPECT_EQ(quota.files_hard, kMaxFiles);
  EXPECT_GE(quota.files_used, 1u);
  EXPECT_LE(quota.files_used, 2u);
  // Any user or group gets the same figures.
  ASSERT_OK_AND_ASSIGN(group, backend_->GetQuota(kSubExport, QuotaKind::kGroup, 4242));
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(group->bytes_hard, kMaxBytes);
  EXPECT_EQ(group->bytes_used, quota.bytes_used);
  // Only one limit set: usage of both is still reported.
  ASSERT_TRUE(native->SetXattr(dir_path_ + "/q", "ceph.quota.max_files", "0").ok());
  ASSERT_OK_AND_ASSIGN(bytes_only, backend_->GetQuota(kSubExport, QuotaKind::kUser, 0));
  ASSERT_TRUE(bytes_only.has_value());
  EXPECT_EQ(bytes_only->files_hard, 0u);
  EXPECT_GE(bytes_only->files_used, 1u);
  // The root export of this test's file system has no quota.
  ASSERT_OK_AND_ASSIGN(at_root, backend_->GetQuota(kRootExport, QuotaKind::kUser, 0));
  EXPECT_FALSE(at_root.has_value());
  ASSERT_TRUE(native->SetXattr(dir_path_ + "/q", "ceph.quota.max_bytes", "0").ok());
}

}  // namespace
}  // namespace nfs3d::vfs
