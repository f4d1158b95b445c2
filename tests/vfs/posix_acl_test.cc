#include "vfs/posix_acl.h"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

Acl UserRw() {
  return {{kAclUserObj, kAclUndefinedId, 6},
          {kAclUser, 1234, 6},
          {kAclGroupObj, kAclUndefinedId, 4},
          {kAclMask, kAclUndefinedId, 6},
          {kAclOther, kAclUndefinedId, 0}};
}

TEST(PosixAclTest, XattrFormat) {
  std::string value = EncodeAclXattr(AclFromMode(0750));
  // Version 2, then (tag, perm, id) little-endian.
  EXPECT_EQ(value, std::string("\x02\0\0\0"
                               "\x01\0\x07\0\xff\xff\xff\xff"
                               "\x04\0\x05\0\xff\xff\xff\xff"
                               "\x20\0\0\0\xff\xff\xff\xff",
                               28));
  EXPECT_EQ(DecodeAclXattr(value), AclFromMode(0750));
  EXPECT_EQ(DecodeAclXattr(EncodeAclXattr(UserRw())), UserRw());
  EXPECT_FALSE(DecodeAclXattr(std::string("\x01\0\0\0", 4)).has_value());  // version
  EXPECT_FALSE(DecodeAclXattr(value.substr(0, 10)).has_value());           // torn entry
  EXPECT_FALSE(DecodeAclXattr("").has_value());
}

TEST(PosixAclTest, Canonicalize) {
  Acl acl = {{kAclOther, 5, 0}, {kAclGroup, 9, 1}, {kAclGroup, 3, 2}, {kAclUserObj, 1, 7}};
  CanonicalizeAcl(&acl);
  EXPECT_EQ(acl, (Acl{{kAclUserObj, kAclUndefinedId, 7},
                      {kAclGroup, 3, 2},
                      {kAclGroup, 9, 1},
                      {kAclOther, kAclUndefinedId, 0}}));
}

TEST(PosixAclTest, ReadAndWriteOnTheFileSystem) {
  test_support::TempDir dir("nfs3d-acl-test");
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.path() + "/f";
  std::ofstream(file) << "x";
  chmod(file.c_str(), 0600);
  absl::StatusOr<Acl> none = ReadAclXattr(file, kAclAccessXattr);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  absl::Status set = WriteAclXattr(file, kAclAccessXattr, UserRw());
  if (ErrnoOf(set) == EOPNOTSUPP) GTEST_SKIP() << "no POSIX ACLs in /tmp";
  ASSERT_TRUE(set.ok()) << set;
  EXPECT_EQ(ReadAclXattr(file, kAclAccessXattr).value(), UserRw());
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);  // the mask is the group bits
  ASSERT_TRUE(WriteAclXattr(file, kAclAccessXattr, {}).ok());
  EXPECT_TRUE(ReadAclXattr(file, kAclAccessXattr)->empty());
  EXPECT_TRUE(WriteAclXattr(file, kAclAccessXattr, {}).ok());  // removing twice is fine
  EXPECT_EQ(ErrnoOf(ReadAclXattr(dir.path() + "/missing", kAclAccessXattr).status()), ENOENT);
}

}  // namespace
}  // namespace nfs3d::vfs
