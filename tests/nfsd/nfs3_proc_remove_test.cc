// REMOVE, RMDIR, RENAME, LINK through the table.
#include <sys/stat.h>
#include <unistd.h>

#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

TEST_F(Nfs3Test, RemoveAndMissing) {
  MakeFile(Root(kRwId), "f");
  n3::REMOVE3res r = client().Remove(Root(kRwId), "f");
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_TRUE(r.dir_wcc.after);
  EXPECT_NE(access(Path("rw/f").c_str(), F_OK), 0);
  n3::REMOVE3res again = client().Remove(Root(kRwId), "f");
  EXPECT_EQ(again.status, n3::NFS3ERR_NOENT);
  EXPECT_TRUE(again.dir_wcc.after);
  EXPECT_EQ(client().Remove(Root(kRwId), "..").status, n3::NFS3ERR_ACCES);
}

TEST_F(Nfs3Test, RemoveOnReadOnlyExportIsRofs) {
  ASSERT_EQ(mkdir(Path("ro/d").c_str(), 0755), 0);
  EXPECT_EQ(client().Remove(Root(kRoId), "d").status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Rmdir(Root(kRoId), "d").status, n3::NFS3ERR_ROFS);
}

TEST_F(Nfs3Test, RmdirEmptyAndNotEmpty) {
  n3::diropres3 d = client().Mkdir(Root(kRwId), "d");
  ASSERT_EQ(d.status, n3::NFS3_OK);
  MakeFile(*d.obj, "f");
  n3::REMOVE3res full = client().Rmdir(Root(kRwId), "d");
  EXPECT_EQ(full.status, n3::NFS3ERR_NOTEMPTY);
  EXPECT_TRUE(full.dir_wcc.after);
  ASSERT_EQ(client().Remove(*d.obj, "f").status, n3::NFS3_OK);
  EXPECT_EQ(client().Rmdir(Root(kRwId), "d").status, n3::NFS3_OK);
  EXPECT_EQ(client().Rmdir(Root(kRwId), "d").status, n3::NFS3ERR_NOENT);
  EXPECT_EQ(client().Rmdir(Root(kRwId), ".").status, n3::NFS3ERR_INVAL);
}

TEST_F(Nfs3Test, RenameWithinAndAcrossDirectories) {
  MakeFile(Root(kRwId), "a");
  n3::diropres3 d = client().Mkdir(Root(kRwId), "d");
  ASSERT_EQ(d.status, n3::NFS3_OK);
  n3::RENAME3res r = client().Rename(Root(kRwId), "a", *d.obj, "b");
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_TRUE(r.fromdir_wcc.after);
  EXPECT_TRUE(r.todir_wcc.after);
  EXPECT_EQ(access(Path("rw/d/b").c_str(), F_OK), 0);
  EXPECT_EQ(client().Rename(Root(kRwId), "a", *d.obj, "c").status, n3::NFS3ERR_NOENT);
}

TEST_F(Nfs3Test, RenameAndLinkAcrossExportsAreXdev) {
  n3::nfs_fh3 f = MakeFile(Root(kRwId), "a");
  EXPECT_EQ(client().Rename(Root(kRwId), "a", Root(kSquashId), "a").status, n3::NFS3ERR_XDEV);
  EXPECT_EQ(client().Link(f, Root(kSquashId), "a").status, n3::NFS3ERR_XDEV);
}

TEST_F(Nfs3Test, LinkAddsName) {
  n3::nfs_fh3 f = MakeFile(Root(kRwId), "a");
  n3::LINK3res r = client().Link(f, Root(kRwId), "b");
  ASSERT_EQ(r.status, n3::NFS3_OK);
  ASSERT_TRUE(r.file_attributes);
  EXPECT_EQ(r.file_attributes->nlink, 2u);
  EXPECT_TRUE(r.linkdir_wcc.after);
  n3::LINK3res again = client().Link(f, Root(kRwId), "b");
  EXPECT_EQ(again.status, n3::NFS3ERR_EXIST);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
