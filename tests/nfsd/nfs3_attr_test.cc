#include "nfsd/nfs3_attr.h"

#include "gtest/gtest.h"

#include "nfsd/nfs3_names.h"

namespace nfs3d::nfsd {
namespace {

TEST(Nfs3AttrTest, FattrFromAttributes) {
  vfs::Attributes a;
  a.type = vfs::FileType::kChar;
  a.mode = 0104755;  // stray type bits must not leak
  a.nlink = 0;
  a.uid = 7;
  a.gid = 8;
  a.size = 1234;
  a.used = 4096;
  a.rdev_major = 4;
  a.rdev_minor = 64;
  a.fsid = 99;
  a.fileid = 12345;
  a.mtime = {10, 20};
  nfs3::fattr3 f = ToFattr3(a);
  EXPECT_EQ(f.type, nfs3::NF3CHR);
  EXPECT_EQ(f.mode, 04755u);
  EXPECT_EQ(f.nlink, 1u);
  EXPECT_EQ(f.rdev.specdata1, 4u);
  EXPECT_EQ(f.rdev.specdata2, 64u);
  EXPECT_EQ(f.fileid, 12345u);
  EXPECT_EQ(f.mtime.seconds, 10u);
  EXPECT_EQ(f.mtime.nseconds, 20u);
}

TEST(Nfs3AttrTest, WccKeepsAbsence) {
  vfs::Wcc w;
  nfs3::wcc_data d = ToWccData(w);
  EXPECT_FALSE(d.before);
  EXPECT_FALSE(d.after);
  w.before = vfs::WccAttr{5, {1, 2}, {3, 4}};
  w.after = vfs::Attributes{};
  d = ToWccData(w);
  ASSERT_TRUE(d.before);
  EXPECT_EQ(d.before->size, 5u);
  EXPECT_EQ(d.before->ctime.seconds, 3u);
  EXPECT_TRUE(d.after);
}

TEST(Nfs3AttrTest, SetAttributes) {
  nfs3::sattr3 s;
  s.mode = 0100644;
  s.size = 0;
  s.atime_how = nfs3::SET_TO_SERVER_TIME;
  s.mtime_how = nfs3::SET_TO_CLIENT_TIME;
  s.mtime = {100, 5};
  vfs::SetAttributes a = ToSetAttributes(s);
  EXPECT_EQ(a.mode, 0644u);
  EXPECT_EQ(a.size, 0u);
  EXPECT_FALSE(a.uid);
  EXPECT_EQ(a.atime_how, vfs::SetTime::kServerTime);
  EXPECT_EQ(a.mtime_how, vfs::SetTime::kClientTime);
  EXPECT_EQ(a.mtime.seconds, 100u);
}

TEST(Nfs3AttrTest, HandleRoundTrip) {
  nfs3::nfs_fh3 fh;
  fh.len = 3;
  fh.data[0] = 1;
  fh.data[2] = 9;
  vfs::FileHandle v = ToVfsHandle(fh);
  EXPECT_EQ(v.len, 3);
  nfs3::nfs_fh3 back = ToNfsHandle(v);
  EXPECT_EQ(back.len, 3);
  EXPECT_EQ(back.data[2], 9);
}

TEST(Nfs3NamesTest, Rules) {
  EXPECT_EQ(CheckName("a", NameUse::kCreate), nfs3::NFS3_OK);
  EXPECT_EQ(CheckName("", NameUse::kLookup), nfs3::NFS3ERR_ACCES);
  EXPECT_EQ(CheckName("a/b", NameUse::kLookup), nfs3::NFS3ERR_ACCES);
  EXPECT_EQ(CheckName(std::string_view("a\0b", 3), NameUse::kLookup), nfs3::NFS3ERR_ACCES);
  EXPECT_EQ(CheckName(std::string(256, 'x'), NameUse::kLookup), nfs3::NFS3ERR_NAMETOOLONG);
  EXPECT_EQ(CheckName("..", NameUse::kLookup), nfs3::NFS3_OK);
  EXPECT_EQ(CheckName(".", NameUse::kCreate), nfs3::NFS3ERR_EXIST);
  EXPECT_EQ(CheckName(".", NameUse::kRmdir), nfs3::NFS3ERR_INVAL);
  EXPECT_EQ(CheckName("..", NameUse::kRmdir), nfs3::NFS3ERR_NOTEMPTY);
  EXPECT_EQ(CheckName("..", NameUse::kRename), nfs3::NFS3ERR_INVAL);
}

}  // namespace
}  // namespace nfs3d::nfsd
