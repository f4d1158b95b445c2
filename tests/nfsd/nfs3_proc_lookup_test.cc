// LOOKUP, READLINK through the table.
#include <unistd.h>

#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

TEST_F(Nfs3Test, LookupFindsFileWithAttributes) {
  n3::nfs_fh3 created = MakeFile(Root(kRwId), "file");
  n3::LOOKUP3res r = client().Lookup(Root(kRwId), "file");
  ASSERT_EQ(r.status, n3::NFS3_OK);
  ASSERT_TRUE(r.obj_attributes);
  EXPECT_EQ(r.obj_attributes->type, n3::NF3REG);
  EXPECT_TRUE(r.dir_attributes);
  EXPECT_EQ(client().Getattr(r.object).obj_attributes.fileid,
            client().Getattr(created).obj_attributes.fileid);
}

TEST_F(Nfs3Test, LookupMissingGivesNoentWithDirAttributes) {
  n3::LOOKUP3res r = client().Lookup(Root(kRwId), "missing");
  EXPECT_EQ(r.status, n3::NFS3ERR_NOENT);
  ASSERT_TRUE(r.dir_attributes);
  EXPECT_EQ(r.dir_attributes->type, n3::NF3DIR);
}

TEST_F(Nfs3Test, LookupDotDotAtExportRootIsRoot) {
  n3::LOOKUP3res r = client().Lookup(Root(kRwId), "..");
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.obj_attributes->fileid, client().Getattr(Root(kRwId)).obj_attributes.fileid);
  n3::LOOKUP3res dot = client().Lookup(Root(kRwId), ".");
  ASSERT_EQ(dot.status, n3::NFS3_OK);
  EXPECT_EQ(dot.obj_attributes->fileid, r.obj_attributes->fileid);
}

TEST_F(Nfs3Test, LookupBadNamesAndNotDir) {
  n3::nfs_fh3 file = MakeFile(Root(kRwId), "file");
  EXPECT_EQ(client().Lookup(Root(kRwId), "a/b").status, n3::NFS3ERR_ACCES);
  EXPECT_EQ(client().Lookup(file, "x").status, n3::NFS3ERR_NOTDIR);
}

TEST_F(Nfs3Test, LookupInPrivateDirAsOtherUserIsAcces) {
  n3::diropres3 dir = client().Mkdir(Root(kRwId), "private", Mode(0700));
  ASSERT_EQ(dir.status, n3::NFS3_OK);
  MakeFile(*dir.obj, "secret");
  client().caller.uid = 1000;
  client().caller.gid = 1000;
  EXPECT_EQ(client().Lookup(*dir.obj, "secret").status, n3::NFS3ERR_ACCES);
}

TEST_F(Nfs3Test, ReadlinkReturnsTarget) {
  n3::diropres3 s = client().Symlink(Root(kRwId), "link", "some/target");
  ASSERT_EQ(s.status, n3::NFS3_OK);
  ASSERT_TRUE(s.obj);
  n3::READLINK3res r = client().Readlink(*s.obj);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.data, "some/target");
  ASSERT_TRUE(r.symlink_attributes);
  EXPECT_EQ(r.symlink_attributes->type, n3::NF3LNK);
  char buf[64] = {};
  ASSERT_GT(readlink(Path("rw/link").c_str(), buf, sizeof(buf) - 1), 0);
  EXPECT_STREQ(buf, "some/target");
}

TEST_F(Nfs3Test, ReadlinkOfRegularFileIsInval) {
  n3::nfs_fh3 file = MakeFile(Root(kRwId), "file");
  EXPECT_EQ(client().Readlink(file).status, n3::NFS3ERR_INVAL);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
