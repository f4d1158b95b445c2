// Error replies with a fake backend whose every operation fails with a chosen
// errno: each procedure maps it once, keeps the wcc/post-op attributes the
// backend reported, and never invents attributes.
#include <cerrno>

#include "gtest/gtest.h"

#include "conf/exports.h"
#include "nfsd/mount_program.h"
#include "nfsd/nfs3_program.h"
#include "nfsd/nfs_server.h"
#include "nfsd/nfsacl_program.h"
#include "tests/nfsd/nfs3_test_client.h"
#include "vfs/vfs_error.h"
#include "xdr/mount3_codec.h"
#include "xdr/nfsacl_codec.h"

namespace nfs3d::nfsd::testing {
namespace {

// Fails everything with err_; fills the out-parameters like a real backend
// would when `with_attrs_` is set.
class FailingBackend : public vfs::Backend {
 public:
  int err = EIO;
  bool with_attrs = true;

  int root_err = 0;                     // RootHandle fails with it when set (MNT)
  std::optional<vfs::ReadResult> read;  // Read succeeds with it when set

  absl::StatusOr<vfs::FileHandle> RootHandle(uint32_t) override {
    if (root_err != 0) return vfs::ErrnoError(root_err, "fake root");
    return Handle();
  }
  absl::StatusOr<uint32_t> ExportOf(const vfs::FileHandle& fh) override {
    if (fh.len != 8) return vfs::ErrnoError(vfs::kErrBadHandle, "fake");
    return 1u;
  }
  absl::StatusOr<vfs::Attributes> GetAttr(const vfs::Cred&, const vfs::FileHandle&) override {
    return Fail();
  }
  absl::Status SetAttr(const vfs::Cred&, const vfs::FileHandle&, const vfs::SetAttributes&,
                       std::optional<vfs::Time>, vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::StatusOr<vfs::LookupResult> Lookup(const vfs::Cred&, const vfs::FileHandle&,
                                           std::string_view,
                                           std::optional<vfs::Attributes>* dir) override {
    if (dir) FillAttrs(dir);
    return Fail();
  }
  absl::StatusOr<vfs::AccessResult> Access(const vfs::Cred&, const vfs::FileHandle&, uint32_t,
                                           std::optional<vfs::Attributes>* a) override {
    FillAttrs(a);
    return Fail();
  }
  absl::StatusOr<std::string> Readlink(const vfs::Cred&, const vfs::FileHandle&,
                                       std::optional<vfs::Attributes>* a) override {
    FillAttrs(a);
    return Fail();
  }
  absl::StatusOr<vfs::ReadResult> Read(const vfs::Cred&, const vfs::FileHandle&, uint64_t, uint32_t,
                                       uint8_t*) override {
    if (read) return *read;
    return Fail();
  }
  absl::StatusOr<vfs::WriteResult> Write(const vfs::Cred&, const vfs::FileHandle&, uint64_t,
                                         absl::Span<const uint8_t>, vfs::StableHow,
                                         vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::StatusOr<vfs::CreateResult> Create(const vfs::Cred&, const vfs::FileHandle&,
                                           std::string_view, vfs::CreateMode,
                                           const vfs::SetAttributes&, const vfs::Verifier&,
                                           vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::StatusOr<vfs::CreateResult> Mkdir(const vfs::Cred&, const vfs::FileHandle&,
                                          std::string_view, const vfs::SetAttributes&,
                                          vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::StatusOr<vfs::CreateResult> Symlink(const vfs::Cred&, const vfs::FileHandle&,
                                            std::string_view, std::string_view,
                                            const vfs::SetAttributes&, vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::StatusOr<vfs::CreateResult> Mknod(const vfs::Cred&, const vfs::FileHandle&,
                                          std::string_view, vfs::FileType, uint32_t, uint32_t,
                                          const vfs::SetAttributes&, vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::Status Remove(const vfs::Cred&, const vfs::FileHandle&, std::string_view,
                      vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::Status Rmdir(const vfs::Cred&, const vfs::FileHandle&, std::string_view,
                     vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::Status Rename(const vfs::Cred&, const vfs::FileHandle&, std::string_view,
                      const vfs::FileHandle&, std::string_view, vfs::Wcc* a, vfs::Wcc* b) override {
    FillWcc(a);
    FillWcc(b);
    return Fail();
  }
  absl::Status Link(const vfs::Cred&, const vfs::FileHandle&, const vfs::FileHandle&,
                    std::string_view, std::optional<vfs::Attributes>* a, vfs::Wcc* wcc) override {
    FillAttrs(a);
    FillWcc(wcc);
    return Fail();
  }
  absl::Status ReadDir(const vfs::Cred&, const vfs::FileHandle&, uint64_t, vfs::Verifier*,
                       const std::function<bool(const vfs::DirEntry&)>& emit, bool*,
                       std::optional<vfs::Attributes>* a) override {
    FillAttrs(a);
    emit(vfs::DirEntry{1, ".", 1});  // partial listing, then the failure
    return Fail();
  }
  absl::StatusOr<vfs::FsStat> StatFs(const vfs::Cred&, const vfs::FileHandle&,
                                     std::optional<vfs::Attributes>* a) override {
    FillAttrs(a);
    return Fail();
  }
  absl::StatusOr<vfs::PathConf> GetPathConf(const vfs::Cred&, const vfs::FileHandle&,
                                            std::optional<vfs::Attributes>* a) override {
    FillAttrs(a);
    return Fail();
  }
  absl::StatusOr<vfs::Verifier> Commit(const vfs::Cred&, const vfs::FileHandle&, uint64_t, uint32_t,
                                       vfs::Wcc* wcc) override {
    FillWcc(wcc);
    return Fail();
  }
  absl::StatusOr<vfs::AclPair> GetAcl(const vfs::Cred&, const vfs::FileHandle&,
                                      std::optional<vfs::Attributes>* a) override {
    FillAttrs(a);
    return Fail();
  }
  absl::Status SetAcl(const vfs::Cred&, const vfs::FileHandle&, const vfs::Acl*, const vfs::Acl*,
                      std::optional<vfs::Attributes>* a) override {
    FillAttrs(a);
    return Fail();
  }
  vfs::Verifier WriteVerifier() const override { return {}; }

  static vfs::FileHandle Handle() {
    vfs::FileHandle fh;
    fh.len = 8;
    return fh;
  }

 private:
  absl::Status Fail() const { return vfs::ErrnoError(err, "fake"); }
  void FillAttrs(std::optional<vfs::Attributes>* a) const {
    if (with_attrs) *a = vfs::Attributes{.type = vfs::FileType::kDirectory, .fileid = 42};
  }
  void FillWcc(vfs::Wcc* w) const {
    if (!with_attrs) return;
    w->before = vfs::WccAttr{7, {1, 0}, {2, 0}};
    FillAttrs(&w->after);
  }
};

class Nfs3ErrorPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto table = conf::ParseExports("/fake *(rw,no_root_squash,insecure,fsid=1)\n", "test");
    ASSERT_TRUE(table.ok()) << table.status();
    server_ = std::make_unique<NfsServer>(
        &backend_, std::make_shared<const conf::ExportTable>(std::move(*table)));
    program_ = Nfs3Program(server_.get());
    client_ = std::make_unique<Nfs3TestClient>(program_);
    fh_ = ToNfs(FailingBackend::Handle());
  }
  static n3::nfs_fh3 ToNfs(const vfs::FileHandle& fh) {
    n3::nfs_fh3 out;
    out.len = fh.len;
    std::memcpy(out.data, fh.data, fh.len);
    return out;
  }

  FailingBackend backend_;
  std::unique_ptr<NfsServer> server_;
  rpc::Program program_;
  std::unique_ptr<Nfs3TestClient> client_;
  n3::nfs_fh3 fh_;
};

TEST_F(Nfs3ErrorPathTest, FailuresCarryWccAndAttributes) {
  backend_.err = ENOSPC;
  Nfs3TestClient& c = *client_;
  n3::SETATTR3res sa = c.Setattr(fh_, {});
  EXPECT_EQ(sa.status, n3::NFS3ERR_NOSPC);
  EXPECT_TRUE(sa.obj_wcc.before && sa.obj_wcc.after);
  n3::LOOKUP3res l = c.Lookup(fh_, "x");
  EXPECT_EQ(l.status, n3::NFS3ERR_NOSPC);
  ASSERT_TRUE(l.dir_attributes);
  EXPECT_EQ(l.dir_attributes->fileid, 42u);
  n3::WRITE3res w = c.Write(fh_, 0, "x", n3::FILE_SYNC);
  EXPECT_EQ(w.status, n3::NFS3ERR_NOSPC);
  EXPECT_TRUE(w.file_wcc.before && w.file_wcc.after);
  n3::diropres3 cr = c.Create(fh_, "x", n3::GUARDED);
  EXPECT_EQ(cr.status, n3::NFS3ERR_NOSPC);
  EXPECT_TRUE(cr.dir_wcc.before && cr.dir_wcc.after);
  n3::RENAME3res rn = c.Rename(fh_, "a", fh_, "b");
  EXPECT_EQ(rn.status, n3::NFS3ERR_NOSPC);
  EXPECT_TRUE(rn.fromdir_wcc.after && rn.todir_wcc.after);
  n3::LINK3res ln = c.Link(fh_, fh_, "b");
  EXPECT_EQ(ln.status, n3::NFS3ERR_NOSPC);
  EXPECT_TRUE(ln.file_attributes && ln.linkdir_wcc.after);
  n3::READDIR3res rd = c.Readdir(fh_, 0, nullptr, 4096);
  EXPECT_EQ(rd.status, n3::NFS3ERR_NOSPC);
  EXPECT_TRUE(rd.dir_attributes);
  EXPECT_TRUE(rd.entries.empty());
}

TEST_F(Nfs3ErrorPathTest, CommitFailureIsReported) {
  backend_.err = EIO;
  n3::COMMIT3res r = client_->Commit(fh_, 0, 0);
  EXPECT_EQ(r.status, n3::NFS3ERR_IO);
  EXPECT_TRUE(r.file_wcc.after);
}

TEST_F(Nfs3ErrorPathTest, WithoutAttributesNothingIsInvented) {
  backend_.err = EAGAIN;
  backend_.with_attrs = false;
  Nfs3TestClient& c = *client_;
  n3::LOOKUP3res l = c.Lookup(fh_, "x");
  EXPECT_EQ(l.status, n3::NFS3ERR_JUKEBOX);
  EXPECT_FALSE(l.dir_attributes);
  n3::REMOVE3res rm = c.Remove(fh_, "x");
  EXPECT_EQ(rm.status, n3::NFS3ERR_JUKEBOX);
  EXPECT_FALSE(rm.dir_wcc.before);
  EXPECT_FALSE(rm.dir_wcc.after);
  ReadReply rd = c.Read(fh_, 0, 100);
  EXPECT_EQ(rd.status, n3::NFS3ERR_JUKEBOX);
  EXPECT_FALSE(rd.file_attributes);
  EXPECT_EQ(c.Getattr(fh_).status, n3::NFS3ERR_JUKEBOX);
  EXPECT_EQ(c.Fsinfo(fh_).status, n3::NFS3ERR_JUKEBOX);
}

// Issue 46's soak: a READ at the end of a file got nothing, and a WRITE beside
// it extended the file before the post-op attributes were taken. count 0
// without eof is an I/O error to the Linux client (EIO on a hard mount), so
// nothing read is the end of the file, as knfsd answers.
TEST_F(Nfs3ErrorPathTest, NothingReadIsTheEndEvenIfTheFileGrewSince) {
  backend_.read = vfs::ReadResult{.count = 0, .eof = false};
  backend_.read->attributes = vfs::Attributes{.type = vfs::FileType::kRegular, .size = 8192};
  ReadReply rd = client_->Read(fh_, 4096, 4096);
  ASSERT_EQ(rd.status, n3::NFS3_OK);
  EXPECT_EQ(rd.count, 0u);
  EXPECT_TRUE(rd.eof);
  // Bytes read short of the size are no end: the client asks for the rest.
  backend_.read->count = 100;
  rd = client_->Read(fh_, 0, 4096);
  ASSERT_EQ(rd.status, n3::NFS3_OK);
  EXPECT_EQ(rd.count, 100u);
  EXPECT_FALSE(rd.eof);
}

TEST_F(Nfs3ErrorPathTest, PseudoErrnos) {
  backend_.err = vfs::kErrBadCookie;
  EXPECT_EQ(client_->Readdir(fh_, 99, nullptr, 4096).status, n3::NFS3ERR_BAD_COOKIE);
  EXPECT_EQ(client_->Readdirplus(fh_, 99, nullptr, 4096, 8192).status, n3::NFS3ERR_BAD_COOKIE);
  backend_.err = vfs::kErrNotSync;
  EXPECT_EQ(client_->Setattr(fh_, {}, n3::nfstime3{1, 2}).status, n3::NFS3ERR_NOT_SYNC);
  backend_.err = ESTALE;
  EXPECT_EQ(client_->Getattr(fh_).status, n3::NFS3ERR_STALE);
  n3::nfs_fh3 short_fh = fh_;
  short_fh.len = 4;
  EXPECT_EQ(client_->Getattr(short_fh).status, n3::NFS3ERR_BADHANDLE);
}

// MOUNT has no JUKEBOX: while the file system asks to try later (a CephFS
// cluster that does not answer) MNT sends no reply, so the client's RPC
// layer sends it again and the mount waits, as a hard mount does, instead
// of failing at once with SERVERFAULT (mount.nfs: "Remote I/O error", seen
// when a client booted during a paused OSD). Other failures still answer.
TEST_F(Nfs3ErrorPathTest, MountDropsTheCallWhileTheFileSystemSaysTryLater) {
  MountService mount(server_.get());
  const rpc::Program program = MakeMountProgram(&mount);
  for (const rpc::ProgramVersion& version : program.versions) {
    rpc::Program one = program;
    one.versions = {version};
    Nfs3TestClient client(one);
    const auto mnt = [](xdr::Encoder& e) { Encode(e, mount3::DirpathArgs{"/fake"}); };
    std::string reply;
    backend_.root_err = vfs::kErrJukebox;
    EXPECT_EQ(client.Run(mount3::kMnt, mnt, &reply), rpc::ProcResult::kDrop) << version.version;
    backend_.root_err = EIO;
    ASSERT_EQ(client.Run(mount3::kMnt, mnt, &reply), rpc::ProcResult::kSuccess);
    xdr::Decoder d(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(reply.data()), reply.size()));
    EXPECT_EQ(d.U32(), static_cast<uint32_t>(mount3::MNT3ERR_SERVERFAULT)) << version.version;
    backend_.root_err = 0;
    ASSERT_EQ(client.Run(mount3::kMnt, mnt, &reply), rpc::ProcResult::kSuccess);
  }
}

// NFSACL too: Linux does not retry JUKEBOX on its NFSACL calls (errno 528
// reached `cp -p`), so GETACL and SETACL send no reply while the file system
// says "try later" (SETACL through the same table adapter); any other
// failure is answered.
TEST_F(Nfs3ErrorPathTest, NfsaclDropsTheCallWhileTheFileSystemSaysTryLater) {
  const rpc::Program program = NfsAclProgram(server_.get());  // the client keeps a reference
  Nfs3TestClient acl(program);
  const auto getacl = [this](xdr::Encoder& e) {
    Encode(e, nfsacl::GETACL3args{fh_, nfsacl::kAcl | nfsacl::kDfAcl});
  };
  std::string reply;
  backend_.err = vfs::kErrJukebox;
  EXPECT_EQ(acl.Run(nfsacl::kGetacl, getacl, &reply), rpc::ProcResult::kDrop);
  backend_.err = EIO;
  EXPECT_EQ(acl.Run(nfsacl::kGetacl, getacl, &reply), rpc::ProcResult::kSuccess);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
