// NFSACL v3 through its real table against a PosixBackend (tests/nfsd's
// fixture): ACLs set by SETACL land in system.posix_acl_* and the kernel
// enforces them; GETACL reads them back as the Linux client expects them;
// `no_acl` answers as a server without ACLs.
#include "nfsd/nfsacl_program.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include "tests/nfsd/nfs3_fixture.h"
#include "xdr/nfs3_client_codec.h"
#include "xdr/nfsacl_codec.h"

namespace nfs3d::nfsd::testing {
namespace {

namespace na = nfs3d::nfsacl;

struct GetaclReply {
  n3::nfsstat3 status = n3::NFS3_OK;
  n3::post_op_attr attr;
  uint32_t mask = 0;
  na::acl access;
  na::acl default_acl;
};

class NfsAclTest : public Nfs3Test {
 protected:
  void SetUp() override {
    Nfs3Test::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    acl_program_ = NfsAclProgram(server_.get());
    acl_client_ = std::make_unique<Nfs3TestClient>(acl_program_);
    // An ext4/xfs/tmpfs temp dir keeps ACLs; anything else cannot run this.
    if (setxattr(Path("rw").c_str(), "system.posix_acl_default", "", 0, 0) != 0 &&
        errno == EOPNOTSUPP) {
      GTEST_SKIP() << "no POSIX ACLs on " << root_;
    }
  }

  GetaclReply Getacl(const n3::nfs_fh3& fh, uint32_t mask) {
    std::string reply;
    EXPECT_EQ(acl_client_->Run(
                  na::kGetacl,
                  [&](xdr::Encoder& e) {
                    Encode(e, na::GETACL3args{fh, mask});
                  },
                  &reply),
              rpc::ProcResult::kSuccess);
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    GetaclReply r;
    r.status = static_cast<n3::nfsstat3>(d.U32());
    EXPECT_TRUE(xdr::Decode(d, &r.attr));
    if (r.status == n3::NFS3_OK) {
      r.mask = d.U32();
      EXPECT_TRUE(xdr::Decode(d, &r.access));
      EXPECT_TRUE(xdr::Decode(d, &r.default_acl));
    }
    EXPECT_TRUE(d.ok());
    EXPECT_EQ(d.remaining(), 0u);
    return r;
  }

  n3::nfsstat3 Setacl(const na::SETACL3args& args) {
    std::string reply;
    EXPECT_EQ(acl_client_->Run(
                  na::kSetacl, [&](xdr::Encoder& e) { Encode(e, args); }, &reply),
              rpc::ProcResult::kSuccess);
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(reply.data()), reply.size());
    auto status = static_cast<n3::nfsstat3>(d.U32());
    n3::post_op_attr attr;
    EXPECT_TRUE(xdr::Decode(d, &attr));
    EXPECT_TRUE(attr.has_value());
    EXPECT_EQ(d.remaining(), 0u);
    return status;
  }

  // "u::rw-,u:1234:rw-,g::r--,m::rw-,o::---" as the Linux client sends it.
  static na::acl UserRwAcl(uint32_t flag = 0) {
    na::acl a;
    a.entries = {{vfs::kAclUserObj | flag, 0, 6},
                 {vfs::kAclUser | flag, 1234, 6},
                 {vfs::kAclGroupObj | flag, 0, 4},
                 {vfs::kAclMask | flag, 0, 6},
                 {vfs::kAclOther | flag, 0, 0}};
    a.count = 5;
    return a;
  }

  rpc::Program acl_program_;
  std::unique_ptr<Nfs3TestClient> acl_client_;
};

TEST_F(NfsAclTest, FileWithoutAclShowsTheModeWithASolarisMask) {
  n3::nfs_fh3 f = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(chmod(Path("rw/f").c_str(), 0640), 0);
  GetaclReply r = Getacl(f, na::kAcl | na::kDfAcl);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.mask, na::kAcl | na::kDfAcl);
  ASSERT_TRUE(r.attr.has_value());
  ASSERT_EQ(r.access.count, 4u);
  EXPECT_EQ(r.access.entries, (std::vector<na::aclent>{{vfs::kAclUserObj, r.attr->uid, 6},
                                                       {vfs::kAclGroupObj, r.attr->gid, 4},
                                                       {vfs::kAclMask, 0, 4},
                                                       {vfs::kAclOther, 0, 0}}));
  EXPECT_EQ(r.default_acl.count, 0u);
  // Only the counts when only they are asked for.
  r = Getacl(f, na::kAclCnt | na::kDfAclCnt);
  EXPECT_EQ(r.access.count, 4u);
  EXPECT_TRUE(r.access.entries.empty());
}

TEST_F(NfsAclTest, SetaclIsStoredAndEnforcedByTheKernel) {
  n3::nfs_fh3 f = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(chmod(Path("rw/f").c_str(), 0600), 0);
  na::SETACL3args args{f, na::kAcl, UserRwAcl(), {}};
  ASSERT_EQ(Setacl(args), n3::NFS3_OK);
  // On disk: the attribute, and the mode's group bits are the mask.
  EXPECT_GT(getxattr(Path("rw/f").c_str(), "system.posix_acl_access", nullptr, 0), 0);
  struct stat st;
  ASSERT_EQ(stat(Path("rw/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  GetaclReply r = Getacl(f, na::kAcl);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  ASSERT_EQ(r.access.count, 5u);
  EXPECT_EQ(r.access.entries[1], (na::aclent{vfs::kAclUser, 1234, 6}));
  // uid 1234 may write through the ACL; uid 1235 may not.
  client().caller.uid = 1234;
  client().caller.gid = 1234;
  EXPECT_EQ(client().Write(f, 0, "hi", n3::FILE_SYNC).status, n3::NFS3_OK);
  client().caller.uid = 1235;
  client().caller.gid = 1235;
  EXPECT_EQ(client().Write(f, 0, "no", n3::FILE_SYNC).status, n3::NFS3ERR_ACCES);
  // Only the owner (or root) may change it.
  acl_client_->caller.uid = 1234;
  EXPECT_EQ(Setacl(args), n3::NFS3ERR_PERM);
}

TEST_F(NfsAclTest, DefaultAclOfADirectory) {
  n3::diropres3 d = client().Mkdir(Root(kRwId), "d", Mode(0755));
  ASSERT_EQ(d.status, n3::NFS3_OK);
  na::acl minimal;
  minimal.entries = {{vfs::kAclUserObj, 0, 7},
                     {vfs::kAclGroupObj, 0, 5},
                     {vfs::kAclMask, 0, 5},
                     {vfs::kAclOther, 0, 5}};
  minimal.count = 4;
  ASSERT_EQ(Setacl({*d.obj, na::kAcl | na::kDfAcl, minimal, UserRwAcl(na::kDefaultFlag)}),
            n3::NFS3_OK);
  // A minimal access ACL is no attribute at all, only mode bits.
  EXPECT_LT(getxattr(Path("rw/d").c_str(), "system.posix_acl_access", nullptr, 0), 0);
  GetaclReply r = Getacl(*d.obj, na::kAcl | na::kDfAcl);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  ASSERT_EQ(r.default_acl.count, 5u);
  for (const na::aclent& e : r.default_acl.entries) EXPECT_TRUE(e.type & na::kDefaultFlag);
  // The kernel gives a file created in it the inherited ACL.
  n3::nfs_fh3 f = MakeFile(*d.obj, "inherits");
  r = Getacl(f, na::kAcl);
  ASSERT_EQ(r.access.count, 5u);
  EXPECT_EQ(r.access.entries[1], (na::aclent{vfs::kAclUser, 1234, 6}));
  // An empty default ACL removes it.
  ASSERT_EQ(Setacl({*d.obj, na::kDfAcl, {}, {}}), n3::NFS3_OK);
  EXPECT_EQ(Getacl(*d.obj, na::kDfAcl).default_acl.count, 0u);
}

TEST_F(NfsAclTest, BadAclsAreRefused) {
  n3::nfs_fh3 f = MakeFile(Root(kRwId), "f");
  na::acl bad = UserRwAcl();
  bad.entries[1].type = 0x40;  // no such tag
  EXPECT_EQ(Setacl({f, na::kAcl, bad, {}}), n3::NFS3ERR_INVAL);
  bad = UserRwAcl();
  bad.entries[1].perm = 010;
  EXPECT_EQ(Setacl({f, na::kAcl, bad, {}}), n3::NFS3ERR_INVAL);
  bad = UserRwAcl();
  bad.entries.erase(bad.entries.begin() + 3);  // named user without a mask
  bad.count = 4;
  EXPECT_EQ(Setacl({f, na::kAcl, bad, {}}), n3::NFS3ERR_INVAL);
  EXPECT_EQ(Setacl({f, na::kDfAcl, {}, UserRwAcl(na::kDefaultFlag)}), n3::NFS3ERR_ACCES);
  EXPECT_EQ(Getacl(f, 0x10).status, n3::NFS3ERR_INVAL);
  // A count that disagrees with the entries of an ACL being set: GARBAGE_ARGS.
  std::string reply;
  na::acl short_acl = UserRwAcl();
  short_acl.count = 6;
  EXPECT_EQ(acl_client_->Run(
                na::kSetacl,
                [&](xdr::Encoder& e) {
                  Encode(e, na::SETACL3args{f, na::kAcl, short_acl, {}});
                },
                &reply),
            rpc::ProcResult::kGarbageArgs);
}

TEST_F(NfsAclTest, ReadOnlyExportRefusesSetacl) {
  ASSERT_EQ(mkdir(Path("ro/d").c_str(), 0755), 0);
  EXPECT_EQ(Setacl({Root(kRoId), na::kAcl, UserRwAcl(), {}}), n3::NFS3ERR_ROFS);
  EXPECT_EQ(Getacl(Root(kRoId), na::kAcl).status, n3::NFS3_OK);
}

TEST_F(NfsAclTest, NoAclAnswersAsAServerWithoutAcls) {
  n3::nfs_fh3 f = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(Setacl({f, na::kAcl, UserRwAcl(), {}}), n3::NFS3_OK);
  auto table =
      conf::ParseExports(Path("rw") + " 127.0.0.1(rw,no_root_squash,fsid=1,no_acl)\n", "test");
  ASSERT_TRUE(table.ok()) << table.status();
  server_->SetExports(std::make_shared<const conf::ExportTable>(std::move(*table)));
  GetaclReply r = Getacl(f, na::kAcl | na::kDfAcl);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.access.count, 4u);  // the mode bits only
  EXPECT_EQ(r.access.entries[2], (na::aclent{vfs::kAclMask, 0, 6}));
  EXPECT_EQ(Setacl({f, na::kAcl, UserRwAcl(), {}}), n3::NFS3ERR_NOTSUPP);
}

TEST(NfsAclWireTest, MinimalAclRoundTrip) {
  vfs::Acl minimal = vfs::AclFromMode(0754);
  na::acl wire = ToWireAcl(minimal, true, false, 10, 20);
  ASSERT_EQ(wire.count, 4u);
  EXPECT_EQ(wire.entries[0], (na::aclent{vfs::kAclUserObj, 10, 7}));
  EXPECT_EQ(wire.entries[1], (na::aclent{vfs::kAclGroupObj, 20, 5}));
  absl::StatusOr<vfs::Acl> back = FromWireAcl(wire);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, minimal);
  // Unsorted entries, as Solaris sends them, come back sorted.
  na::acl unsorted;
  unsorted.entries = {{vfs::kAclOther, 0, 0},
                      {vfs::kAclGroup, 7, 1},
                      {vfs::kAclUserObj, 3, 6},
                      {vfs::kAclMask, 0, 0x17},
                      {vfs::kAclGroupObj, 4, 4}};
  unsorted.count = 5;
  back = FromWireAcl(unsorted);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)[0], (vfs::AclEntry{vfs::kAclUserObj, vfs::kAclUndefinedId, 6}));
  EXPECT_EQ((*back)[3], (vfs::AclEntry{vfs::kAclMask, vfs::kAclUndefinedId, 7}));
  EXPECT_TRUE(ToWireAcl({}, true, true, 0, 0).entries.empty());
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
