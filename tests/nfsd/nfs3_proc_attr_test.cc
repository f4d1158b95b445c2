// NULL, GETATTR, SETATTR, ACCESS through the table.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

TEST_F(Nfs3Test, NullReturnsNothing) {
  std::string reply;
  EXPECT_EQ(client().Run(n3::kNull, [](xdr::Encoder&) {}, &reply), rpc::ProcResult::kSuccess);
  EXPECT_TRUE(reply.empty());
}

TEST_F(Nfs3Test, GarbageArgsAreRefused) {
  std::string reply;
  EXPECT_EQ(client().Run(n3::kGetattr, [](xdr::Encoder& e) { e.U32(200); }, &reply),
            rpc::ProcResult::kGarbageArgs);
  EXPECT_EQ(client().Run(n3::kRead, [](xdr::Encoder& e) { e.U32(1); }, &reply),
            rpc::ProcResult::kGarbageArgs);
}

TEST_F(Nfs3Test, GetattrOfRoot) {
  n3::GETATTR3res r = client().Getattr(Root(kRwId));
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.obj_attributes.type, n3::NF3DIR);
  EXPECT_EQ(r.obj_attributes.mode, 0777u);
  EXPECT_GE(r.obj_attributes.nlink, 2u);
  struct stat st;
  ASSERT_EQ(stat(Path("rw").c_str(), &st), 0);
  EXPECT_EQ(r.obj_attributes.fileid, st.st_ino);
}

TEST_F(Nfs3Test, SetattrModeSizeAndWcc) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  n3::sattr3 s;
  s.mode = 0640;
  s.size = 1000;
  n3::SETATTR3res r = client().Setattr(fh, s);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  ASSERT_TRUE(r.obj_wcc.after);
  EXPECT_EQ(r.obj_wcc.after->mode, 0640u);
  EXPECT_EQ(r.obj_wcc.after->size, 1000u);
  if (r.obj_wcc.before) {
    EXPECT_EQ(r.obj_wcc.before->size, 0u);
  }
  struct stat st;
  ASSERT_EQ(stat(Path("rw/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_size, 1000);
}

TEST_F(Nfs3Test, SetattrGuardMismatchIsNotSync) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  n3::GETATTR3res before = client().Getattr(fh);
  ASSERT_EQ(before.status, n3::NFS3_OK);
  n3::nfstime3 wrong = before.obj_attributes.ctime;
  wrong.seconds += 1;
  n3::SETATTR3res r = client().Setattr(fh, Mode(0600), wrong);
  EXPECT_EQ(r.status, n3::NFS3ERR_NOT_SYNC);
  n3::SETATTR3res ok = client().Setattr(fh, Mode(0600), before.obj_attributes.ctime);
  EXPECT_EQ(ok.status, n3::NFS3_OK);
}

TEST_F(Nfs3Test, SetattrAsOtherUserIsRefused) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  client().caller.uid = 1000;
  client().caller.gid = 1000;
  n3::SETATTR3res r = client().Setattr(fh, Mode(0777));
  EXPECT_EQ(r.status, n3::NFS3ERR_PERM);
}

TEST_F(Nfs3Test, AccessReflectsCallerAndExport) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(client().Setattr(fh, Mode(0644)).status, n3::NFS3_OK);
  const uint32_t all = n3::ACCESS3_READ | n3::ACCESS3_MODIFY | n3::ACCESS3_EXTEND |
                       n3::ACCESS3_EXECUTE;
  n3::ACCESS3res owner = client().Access(fh, all);
  ASSERT_EQ(owner.status, n3::NFS3_OK);
  EXPECT_TRUE(owner.obj_attributes);
  EXPECT_TRUE(owner.access & n3::ACCESS3_READ);
  EXPECT_TRUE(owner.access & n3::ACCESS3_MODIFY);

  client().caller.uid = 1000;
  client().caller.gid = 1000;
  n3::ACCESS3res other = client().Access(fh, all);
  ASSERT_EQ(other.status, n3::NFS3_OK);
  EXPECT_TRUE(other.access & n3::ACCESS3_READ);
  EXPECT_FALSE(other.access & n3::ACCESS3_MODIFY);
  EXPECT_FALSE(other.access & n3::ACCESS3_EXECUTE);
}

TEST_F(Nfs3Test, AccessOnReadOnlyExportDeniesChanges) {
  ASSERT_EQ(close(creat(Path("ro/f").c_str(), 0666)), 0);
  n3::LOOKUP3res l = client().Lookup(Root(kRoId), "f");
  ASSERT_EQ(l.status, n3::NFS3_OK);
  n3::ACCESS3res r = client().Access(l.object, n3::ACCESS3_READ | n3::ACCESS3_MODIFY |
                                                   n3::ACCESS3_EXTEND | n3::ACCESS3_DELETE);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.access, n3::ACCESS3_READ);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
