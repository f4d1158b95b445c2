// NULL, GETATTR, SETATTR, ACCESS through the table.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include "nfsd/nfs3_program.h"
#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

TEST_F(Nfs3Test, NullReturnsNothing) {
  std::string reply;
  EXPECT_EQ(client().Run(
                n3::kNull, [](xdr::Encoder&) {}, &reply),
            rpc::ProcResult::kSuccess);
  EXPECT_TRUE(reply.empty());
}

TEST_F(Nfs3Test, GarbageArgsAreRefused) {
  std::string reply;
  EXPECT_EQ(client().Run(
                n3::kGetattr, [](xdr::Encoder& e) { e.U32(200); }, &reply),
            rpc::ProcResult::kGarbageArgs);
  EXPECT_EQ(client().Run(
                n3::kRead, [](xdr::Encoder& e) { e.U32(1); }, &reply),
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

// A whole call message: RPC header with an AUTH_SYS credential, then args.
std::vector<uint8_t> CallMessage(uint32_t prog, uint32_t proc, const std::vector<uint32_t>& args) {
  std::vector<uint32_t> words = {7, 0, 2, prog, 3, proc, 1, 12, 0, 0, 0, 0, 0};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<uint8_t> bytes;
  for (uint32_t w : words) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(w >> shift));
  }
  return bytes;
}

TEST(InlineCallHandleTest, FindsTheHandleOfTheCallsThatMayRunInline) {
  // Handle of 8 bytes: 0x01020304 0x05060708.
  const std::vector<uint32_t> fh = {8, 0x01020304, 0x05060708};
  // READ and WRITE: over UDP (rpc/inline_calls.h IsPageCacheCall).
  for (uint32_t proc : {n3::kGetattr, n3::kLookup, n3::kAccess, n3::kRead, n3::kWrite}) {
    std::vector<uint32_t> args = fh;
    args.push_back(0);  // LOOKUP's name / ACCESS's mask: not read
    std::optional<vfs::FileHandle> found = InlineCallHandle(CallMessage(n3::kProgram, proc, args));
    ASSERT_TRUE(found.has_value()) << proc;
    EXPECT_EQ(found->len, 8);
    EXPECT_EQ(found->data[0], 1);
    EXPECT_EQ(found->data[7], 8);
  }
  EXPECT_FALSE(InlineCallHandle(CallMessage(n3::kProgram, n3::kCommit, fh)).has_value());
  EXPECT_FALSE(InlineCallHandle(CallMessage(100005, 1, fh)).has_value());          // MOUNT
  EXPECT_FALSE(InlineCallHandle(CallMessage(n3::kProgram, 1, {65})).has_value());  // too long
  std::vector<uint8_t> cut = CallMessage(n3::kProgram, 1, fh);
  cut.resize(cut.size() - 2);
  EXPECT_FALSE(InlineCallHandle(cut).has_value());
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
  const uint32_t all =
      n3::ACCESS3_READ | n3::ACCESS3_MODIFY | n3::ACCESS3_EXTEND | n3::ACCESS3_EXECUTE;
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
  n3::ACCESS3res r = client().Access(
      l.object, n3::ACCESS3_READ | n3::ACCESS3_MODIFY | n3::ACCESS3_EXTEND | n3::ACCESS3_DELETE);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.access, n3::ACCESS3_READ);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
