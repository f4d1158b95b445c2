// CREATE, MKDIR, SYMLINK, MKNOD through the table, incl. root squash.
#include <sys/stat.h>

#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

TEST_F(Nfs3Test, CreateUncheckedWithMode) {
  n3::diropres3 r = client().Create(Root(kRwId), "f", n3::UNCHECKED, Mode(0640));
  ASSERT_EQ(r.status, n3::NFS3_OK);
  ASSERT_TRUE(r.obj);
  ASSERT_TRUE(r.obj_attributes);
  EXPECT_EQ(r.obj_attributes->mode, 0640u);
  EXPECT_EQ(r.obj_attributes->type, n3::NF3REG);
  EXPECT_TRUE(r.dir_wcc.after);
  struct stat st;
  ASSERT_EQ(stat(Path("rw/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_uid, 0u);  // no_root_squash keeps root
}

TEST_F(Nfs3Test, CreateGuardedOnExistingIsExist) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(client().Write(fh, 0, "data", n3::FILE_SYNC).status, n3::NFS3_OK);
  n3::diropres3 g = client().Create(Root(kRwId), "f", n3::GUARDED);
  EXPECT_EQ(g.status, n3::NFS3ERR_EXIST);
  EXPECT_TRUE(g.dir_wcc.after);  // wcc on failure too
  // UNCHECKED on an existing file succeeds and leaves its data alone.
  n3::diropres3 u = client().Create(Root(kRwId), "f", n3::UNCHECKED);
  ASSERT_EQ(u.status, n3::NFS3_OK);
  EXPECT_EQ(u.obj_attributes->size, 4u);
}

TEST_F(Nfs3Test, CreateExclusiveRetransmitSucceeds) {
  const uint64_t verf = 0x0102030405060708ull;
  n3::diropres3 first = client().Create(Root(kRwId), "x", n3::EXCLUSIVE, {}, verf);
  ASSERT_EQ(first.status, n3::NFS3_OK);
  ASSERT_TRUE(first.obj);
  n3::diropres3 again = client().Create(Root(kRwId), "x", n3::EXCLUSIVE, {}, verf);
  ASSERT_EQ(again.status, n3::NFS3_OK);
  ASSERT_TRUE(again.obj);
  EXPECT_EQ(client().Getattr(*again.obj).obj_attributes.fileid,
            client().Getattr(*first.obj).obj_attributes.fileid);
  // Same first half, different second half: a different create.
  n3::diropres3 other = client().Create(Root(kRwId), "x", n3::EXCLUSIVE, {}, verf + 1);
  EXPECT_EQ(other.status, n3::NFS3ERR_EXIST);
}

TEST_F(Nfs3Test, CreateAsUnprivilegedInRootDirIsAcces) {
  n3::diropres3 dir = client().Mkdir(Root(kRwId), "d", Mode(0755));
  ASSERT_EQ(dir.status, n3::NFS3_OK);
  client().caller.uid = 1000;
  client().caller.gid = 1000;
  n3::diropres3 r = client().Create(*dir.obj, "f", n3::UNCHECKED);
  EXPECT_EQ(r.status, n3::NFS3ERR_ACCES);
  EXPECT_FALSE(r.obj);
  // In the 0777 export root the same user may create, and owns the file.
  n3::diropres3 ok = client().Create(Root(kRwId), "mine", n3::UNCHECKED);
  ASSERT_EQ(ok.status, n3::NFS3_OK);
  EXPECT_EQ(ok.obj_attributes->uid, 1000u);
  EXPECT_EQ(ok.obj_attributes->gid, 1000u);
}

TEST_F(Nfs3Test, RootSquashMapsRootToNobody) {
  n3::diropres3 r = client().Create(Root(kSquashId), "f", n3::UNCHECKED);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.obj_attributes->uid, 65534u);
  EXPECT_EQ(r.obj_attributes->gid, 65534u);
  struct stat st;
  ASSERT_EQ(stat(Path("squash/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  // AUTH_NONE is anonymous too.
  client().caller.flavor = kAuthNone;
  n3::diropres3 anon = client().Create(Root(kSquashId), "g", n3::UNCHECKED);
  ASSERT_EQ(anon.status, n3::NFS3_OK);
  EXPECT_EQ(anon.obj_attributes->uid, 65534u);
}

TEST_F(Nfs3Test, CreateOnReadOnlyExportIsRofs) {
  n3::diropres3 r = client().Create(Root(kRoId), "f", n3::UNCHECKED);
  EXPECT_EQ(r.status, n3::NFS3ERR_ROFS);
  EXPECT_FALSE(r.obj);
}

TEST_F(Nfs3Test, MkdirAndExisting) {
  n3::diropres3 r = client().Mkdir(Root(kRwId), "d", Mode(0750));
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.obj_attributes->type, n3::NF3DIR);
  EXPECT_EQ(r.obj_attributes->mode, 0750u);
  n3::diropres3 again = client().Mkdir(Root(kRwId), "d");
  EXPECT_EQ(again.status, n3::NFS3ERR_EXIST);
  EXPECT_TRUE(again.dir_wcc.after);
  EXPECT_EQ(client().Mkdir(Root(kRwId), "..").status, n3::NFS3ERR_EXIST);
}

TEST_F(Nfs3Test, MknodFifoAndBadTypes) {
  n3::diropres3 fifo = client().Mknod(Root(kRwId), "fifo", n3::NF3FIFO, Mode(0600));
  ASSERT_EQ(fifo.status, n3::NFS3_OK);
  EXPECT_EQ(fifo.obj_attributes->type, n3::NF3FIFO);
  struct stat st;
  ASSERT_EQ(lstat(Path("rw/fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  for (n3::ftype3 t : {n3::NF3REG, n3::NF3DIR, n3::NF3LNK}) {
    EXPECT_EQ(client().Mknod(Root(kRwId), "bad", t).status, n3::NFS3ERR_BADTYPE) << t;
  }
}

TEST_F(Nfs3Test, SymlinkAttributes) {
  n3::diropres3 r = client().Symlink(Root(kRwId), "l", "/etc/passwd");
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.obj_attributes->type, n3::NF3LNK);
  EXPECT_EQ(r.obj_attributes->size, 11u);
  EXPECT_EQ(client().Symlink(Root(kRwId), "l", "x").status, n3::NFS3ERR_EXIST);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
