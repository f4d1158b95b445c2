#include "vfs/posix_permission.h"

#include "gtest/gtest.h"

namespace nfs3d::vfs {
namespace {

Attributes File(uint32_t mode, uint32_t uid = 100, uint32_t gid = 200) {
  Attributes a;
  a.type = FileType::kRegular;
  a.mode = mode;
  a.uid = uid;
  a.gid = gid;
  return a;
}

const Cred kRoot{0, 0, {}};
const Cred kOwner{100, 999, {}};
const Cred kMember{101, 999, {5, 200}};  // in the file's group through a supplementary group
const Cred kOther{102, 300, {301}};

TEST(PosixPermissionTest, ModeBitsPickOwnerGroupOrOther) {
  const Attributes a = File(0461);
  EXPECT_EQ(PermittedBits(kOwner, a, {}), kMayRead);
  EXPECT_EQ(PermittedBits(kMember, a, {}), kMayRead | kMayWrite);
  EXPECT_EQ(PermittedBits(kOther, a, {}), kMayExec);
  // The owner class applies even when it grants less than the others.
  EXPECT_EQ(PermittedBits(kOwner, File(0077), {}), 0u);
}

TEST(PosixPermissionTest, RootExecutesOnlyWhatSomeoneMay) {
  EXPECT_EQ(PermittedBits(kRoot, File(0000), {}), kMayRead | kMayWrite);
  EXPECT_EQ(PermittedBits(kRoot, File(0001), {}), kMayRead | kMayWrite | kMayExec);
  Attributes dir = File(0000);
  dir.type = FileType::kDirectory;
  EXPECT_EQ(PermittedBits(kRoot, dir, {}), kMayRead | kMayWrite | kMayExec);
}

TEST(PosixPermissionTest, IoHasOwnerOverrideAndReadIfExec) {
  EXPECT_TRUE(MayReadOrWrite(kOwner, File(0000), {}, true));
  EXPECT_TRUE(MayReadOrWrite(kRoot, File(0000), {}, false));
  // Write-only for others: writable, not readable.
  EXPECT_TRUE(MayReadOrWrite(kOther, File(0002), {}, true));
  EXPECT_FALSE(MayReadOrWrite(kOther, File(0002), {}, false));
  EXPECT_TRUE(MayReadOrWrite(kMember, File(0020), {}, true));
  EXPECT_FALSE(MayReadOrWrite(kMember, File(0020), {}, false));
  EXPECT_FALSE(MayReadOrWrite(kOther, File(0020), {}, true));
  EXPECT_TRUE(MayReadOrWrite(kOther, File(0001), {}, false));
  EXPECT_FALSE(MayReadOrWrite(kOther, File(0001), {}, true));
}

TEST(PosixPermissionTest, AclEntriesInPosix1eOrder) {
  // user::rw- user:102:rwx group::r-- group:301:-w- mask::rw- other::---
  const Acl acl = {{kAclUserObj, kAclUndefinedId, 6},  {kAclUser, 102, 7},
                   {kAclGroupObj, kAclUndefinedId, 4}, {kAclGroup, 301, 2},
                   {kAclMask, kAclUndefinedId, 6},     {kAclOther, kAclUndefinedId, 0}};
  const Attributes a = File(0660);  // group class bits = the mask
  EXPECT_EQ(PermittedBits(kOwner, a, acl), kMayRead | kMayWrite);
  EXPECT_EQ(PermittedBits(kOther, a, acl), kMayRead | kMayWrite);  // named user, masked
  EXPECT_EQ(PermittedBits(kMember, a, acl), kMayRead);             // owning group
  const Cred in_named_group{103, 301, {}};
  EXPECT_EQ(PermittedBits(in_named_group, a, acl), kMayWrite);
  const Cred in_both{104, 200, {301}};
  EXPECT_EQ(PermittedBits(in_both, a, acl), kMayRead | kMayWrite);
  const Cred nobody{105, 105, {}};
  EXPECT_EQ(PermittedBits(nobody, a, acl), 0u);
  // A matching group entry that grants nothing does not fall through to other.
  EXPECT_EQ(PermittedBits(in_named_group, File(0664), acl), kMayWrite);
  EXPECT_TRUE(MayReadOrWrite(in_named_group, a, acl, true));
  EXPECT_FALSE(MayReadOrWrite(in_named_group, a, acl, false));
}

TEST(PosixPermissionTest, AccessBitsByType) {
  EXPECT_EQ(AccessBitsFor(FileType::kRegular, 7), 0x01u | 0x04u | 0x08u | 0x20u);
  EXPECT_EQ(AccessBitsFor(FileType::kDirectory, 7), 0x01u | 0x02u | 0x04u | 0x08u | 0x10u);
  EXPECT_EQ(AccessBitsFor(FileType::kDirectory, 6), 0x01u);
  EXPECT_EQ(AccessBitsFor(FileType::kDirectory, 3), 0x02u | 0x04u | 0x08u | 0x10u);
}

TEST(PosixPermissionTest, WritersWithoutFsetidLoseSetuidSetgid) {
  EXPECT_EQ(ModeAfterWrite(kRoot, File(06777)), 06777u);
  EXPECT_EQ(ModeAfterWrite(kOwner, File(04755)), 0755u);
  EXPECT_EQ(ModeAfterWrite(kOther, File(06777)), 0777u);
  EXPECT_EQ(ModeAfterWrite(kMember, File(02767)), 02767u);  // no group-exec, in the group
  EXPECT_EQ(ModeAfterWrite(kOther, File(02767)), 0767u);    // not in the group
  EXPECT_EQ(ModeAfterWrite(kMember, File(02777)), 0777u);
  Attributes dir = File(02777);
  dir.type = FileType::kDirectory;
  EXPECT_EQ(ModeAfterWrite(kOther, dir), 02777u);
}

TEST(PosixPermissionTest, ChownClearsSetuidAlsoForRoot) {
  EXPECT_EQ(ModeAfterChown(kRoot, File(06755)), 0755u);
  EXPECT_EQ(ModeAfterChown(kRoot, File(02745)), 02745u);
  EXPECT_EQ(ModeAfterChown(kOwner, File(02745)), 0745u);  // not in group 200
  EXPECT_EQ(ModeAfterChown(kMember, File(02745)), 02745u);
  Attributes dir = File(06755);
  dir.type = FileType::kDirectory;
  EXPECT_EQ(ModeAfterChown(kRoot, dir), 06755u);
}

}  // namespace
}  // namespace nfs3d::vfs
