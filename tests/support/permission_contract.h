// The permission rules every backend must keep, written from POSIX (and
// POSIX.1e ACLs, acl(5) "ACCESS CHECK ALGORITHM"), not from what any backend
// does: the same checks run on the POSIX and the CephFS backend. What the
// Linux client does with each call is what is checked: it opens a file after
// an ACCESS call, reads and writes it with READ/WRITE, truncates it with
// SETATTR, and sets a new object's ACLs with SETACL right after creating it.
//
// Every function takes a backend and a fresh, empty directory of mode 0777
// owned by root, and reports with gtest EXPECT/ADD_FAILURE and SCOPED_TRACE.
#ifndef NFS3D_TESTS_SUPPORT_PERMISSION_CONTRACT_H_
#define NFS3D_TESTS_SUPPORT_PERMISSION_CONTRACT_H_

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

#include "vfs/backend.h"
#include "vfs/posix_acl.h"
#include "vfs/vfs_error.h"

namespace nfs3d::test_support {
namespace permission_contract {

// ACCESS3 bits (RFC 1813 §3.3.4).
inline constexpr uint32_t kAccessRead = 0x01, kAccessLookup = 0x02, kAccessModify = 0x04,
                          kAccessExtend = 0x08, kAccessDelete = 0x10, kAccessExecute = 0x20;
inline constexpr uint32_t kAccessAll = 0x3f;

// The files of the matrix belong to kOwner:kGroup.
inline constexpr uint32_t kOwner = 2000, kGroup = 2000;
// A named user and a named group that the ACL cases give entries to.
inline constexpr uint32_t kNamedUser = 3002, kNamedGroup = 4000;

struct Caller {
  const char* role;
  vfs::Cred cred;
};

// Who asks: each class of the POSIX check, group membership by primary and
// by supplementary group.
inline const std::vector<Caller>& Callers() {
  static const std::vector<Caller> callers = {
      {"root", {0, 0, {}}},
      {"owner", {kOwner, kGroup, {kGroup}}},
      {"owner, other primary group", {kOwner, 2999, {}}},
      {"group member by primary gid", {3000, kGroup, {}}},
      {"group member by supplementary gid", {3001, 3001, {3001, 7, kGroup}}},
      {"named user", {kNamedUser, 3002, {}}},
      {"named group member", {3003, 3003, {kNamedGroup}}},
      {"named group and owning group member", {3005, kGroup, {kNamedGroup}}},
      {"other", {3004, 3004, {3004}}},
  };
  return callers;
}

inline bool InGroup(const vfs::Cred& cred, uint32_t gid) {
  if (cred.gid == gid) return true;
  for (uint32_t g : cred.groups) {
    if (g == gid) return true;
  }
  return false;
}

// The rwx bits (4/2/1) POSIX grants `cred` on an object owned by uid:gid with
// access ACL `acl` (the three entries of the mode bits when it has none). Root
// is handled by the callers (it is not a class of its own).
inline uint32_t GrantedBits(const vfs::Cred& cred, uint32_t uid, uint32_t gid,
                            const vfs::Acl& acl) {
  uint32_t mask = 7, user_obj = 0, other = 0;
  std::optional<uint32_t> named_user;
  bool group_matched = false;
  uint32_t group_bits = 0;
  for (const vfs::AclEntry& e : acl) {
    if (e.tag == vfs::kAclMask) mask = e.perm;
  }
  for (const vfs::AclEntry& e : acl) {
    switch (e.tag) {
      case vfs::kAclUserObj:
        user_obj = e.perm;
        break;
      case vfs::kAclUser:
        if (e.id == cred.uid) named_user = e.perm;
        break;
      case vfs::kAclGroupObj:
        if (InGroup(cred, gid)) group_matched = true, group_bits |= e.perm;
        break;
      case vfs::kAclGroup:
        if (InGroup(cred, e.id)) group_matched = true, group_bits |= e.perm;
        break;
      case vfs::kAclOther:
        other = e.perm;
        break;
      default:
        break;
    }
  }
  if (cred.uid == uid) return user_obj;
  if (named_user) return *named_user & mask;
  // A caller in any group entry is judged by the group class only, even when
  // "other" would grant more. Without named entries the mask is the group
  // bits themselves.
  if (group_matched) return group_bits & mask;
  return other;
}

// What the calls of one caller on one regular file must give.
struct Expected {
  uint32_t access;  // ACCESS bits granted for kAccessAll
  bool read;        // READ
  bool write;       // WRITE, and SETATTR of the size
};

// `mode`: the file's permission bits (for root's execute and, with an ACL,
// as the kernel keeps them).
inline Expected ExpectedForFile(const vfs::Cred& cred, uint32_t mode, const vfs::Acl& acl) {
  if (cred.uid == 0) {
    // Root reads and writes anything; it may execute what anyone may.
    const bool x = (mode & 0111) != 0;
    return {kAccessRead | kAccessModify | kAccessExtend | (x ? kAccessExecute : 0u), true, true};
  }
  const uint32_t bits = GrantedBits(cred, kOwner, kGroup, acl);
  Expected e{};
  if (bits & 4) e.access |= kAccessRead;
  if (bits & 2) e.access |= kAccessModify | kAccessExtend;
  if (bits & 1) e.access |= kAccessExecute;
  const bool owner = cred.uid == kOwner;
  // READ and WRITE, as knfsd: the owner may always do I/O on its file (the
  // Linux client writes a file it created read-only), and a file that may be
  // executed may be read (the client reads a program to run it).
  e.read = owner || (bits & 4) || (bits & 1);
  e.write = owner || (bits & 2);
  return e;
}

// Helpers ---------------------------------------------------------------------

inline std::string ModeString(uint32_t mode) { return absl::StrFormat("%04o", mode); }

inline std::string AclString(const vfs::Acl& acl) {
  std::string out;
  for (const vfs::AclEntry& e : acl) {
    absl::StrAppend(&out, out.empty() ? "" : ",", absl::Hex(e.tag), ":",
                    e.id == vfs::kAclUndefinedId ? std::string() : absl::StrCat(e.id), ":", e.perm);
  }
  return out;
}

inline const vfs::Cred kRootCred{0, 0, {}};

inline std::optional<vfs::FileHandle> MakeFile(vfs::Backend& backend, const vfs::FileHandle& dir,
                                               const std::string& name, const std::string& data) {
  vfs::SetAttributes attrs;
  attrs.mode = 0600;
  vfs::Wcc wcc;
  auto created = backend.Create(kRootCred, dir, name, vfs::CreateMode::kGuarded, attrs, {}, &wcc);
  EXPECT_TRUE(created.ok()) << name << ": " << created.status();
  if (!created.ok()) return std::nullopt;
  if (!data.empty()) {
    auto written = backend.Write(
        kRootCred, created->handle, 0,
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(data.data()), data.size()),
        vfs::StableHow::kFileSync, &wcc);
    EXPECT_TRUE(written.ok()) << name << ": " << written.status();
  }
  return created->handle;
}

inline std::optional<vfs::FileHandle> MakeDir(vfs::Backend& backend, const vfs::Cred& cred,
                                              const vfs::FileHandle& dir, const std::string& name,
                                              uint32_t mode) {
  vfs::SetAttributes attrs;
  attrs.mode = mode;
  vfs::Wcc wcc;
  auto made = backend.Mkdir(cred, dir, name, attrs, &wcc);
  EXPECT_TRUE(made.ok()) << name << ": " << made.status();
  if (!made.ok()) return std::nullopt;
  return made->handle;
}

// SETATTR as root: owner, group and mode (mode last: a chown clears S_ISUID).
inline void Own(vfs::Backend& backend, const vfs::FileHandle& fh, uint32_t uid, uint32_t gid,
                uint32_t mode) {
  vfs::SetAttributes owner;
  owner.uid = uid;
  owner.gid = gid;
  vfs::Wcc wcc;
  EXPECT_TRUE(backend.SetAttr(kRootCred, fh, owner, std::nullopt, &wcc).ok());
  vfs::SetAttributes bits;
  bits.mode = mode;
  EXPECT_TRUE(backend.SetAttr(kRootCred, fh, bits, std::nullopt, &wcc).ok());
}

inline absl::Status WriteAs(vfs::Backend& backend, const vfs::Cred& cred, const vfs::FileHandle& fh,
                            const std::string& data) {
  vfs::Wcc wcc;
  auto written = backend.Write(
      cred, fh, 0, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(data.data()), data.size()),
      vfs::StableHow::kUnstable, &wcc);
  return written.status();
}

inline absl::Status ReadAs(vfs::Backend& backend, const vfs::Cred& cred,
                           const vfs::FileHandle& fh) {
  uint8_t buf[16];
  return backend.Read(cred, fh, 0, sizeof(buf), buf).status();
}

// A truncation as the Linux client sends it for open(O_TRUNC) and
// truncate(2): the size and mtime = the server's time.
inline absl::Status TruncateAs(vfs::Backend& backend, const vfs::Cred& cred,
                               const vfs::FileHandle& fh, uint64_t size) {
  vfs::SetAttributes attrs;
  attrs.size = size;
  attrs.mtime_how = vfs::SetTime::kServerTime;
  vfs::Wcc wcc;
  return backend.SetAttr(cred, fh, attrs, std::nullopt, &wcc);
}

// touch(1): both times to the server's clock (client_time false), or to
// times the client names (utimes(2) with times).
inline absl::Status SetTimesAs(vfs::Backend& backend, const vfs::Cred& cred,
                               const vfs::FileHandle& fh, bool client_time) {
  vfs::SetAttributes attrs;
  attrs.atime_how = attrs.mtime_how =
      client_time ? vfs::SetTime::kClientTime : vfs::SetTime::kServerTime;
  attrs.atime = attrs.mtime = vfs::Time{1700000000, 0};
  vfs::Wcc wcc;
  return backend.SetAttr(cred, fh, attrs, std::nullopt, &wcc);
}

inline uint32_t ModeOf(vfs::Backend& backend, const vfs::FileHandle& fh) {
  auto attrs = backend.GetAttr(kRootCred, fh);
  EXPECT_TRUE(attrs.ok()) << attrs.status();
  return attrs.ok() ? attrs->mode : 0;
}

// Checks every caller's ACCESS, READ, WRITE and truncation of one file
// against the POSIX rules; `acl` is the file's access ACL.
inline void CheckFileForEveryCaller(vfs::Backend& backend, const vfs::FileHandle& fh, uint32_t mode,
                                    const vfs::Acl& acl) {
  const std::string content = "data";
  for (const Caller& caller : Callers()) {
    SCOPED_TRACE(absl::StrCat(caller.role, " (uid ", caller.cred.uid, ")"));
    const Expected want = ExpectedForFile(caller.cred, mode, acl);
    auto access = backend.Access(caller.cred, fh, kAccessAll, nullptr);
    ASSERT_TRUE(access.ok()) << access.status();
    EXPECT_EQ(access->granted, want.access)
        << absl::StrFormat("ACCESS granted 0x%x, POSIX grants 0x%x", access->granted, want.access);
    absl::Status read_status = ReadAs(backend, caller.cred, fh);
    EXPECT_EQ(read_status.ok(), want.read) << "READ: " << read_status;
    if (!want.read) {
      EXPECT_EQ(vfs::ErrnoOf(read_status), EACCES) << read_status;
    }
    absl::Status write_status = WriteAs(backend, caller.cred, fh, content);
    EXPECT_EQ(write_status.ok(), want.write) << "WRITE: " << write_status;
    if (!want.write) {
      EXPECT_EQ(vfs::ErrnoOf(write_status), EACCES) << write_status;
    }
    absl::Status truncate = TruncateAs(backend, caller.cred, fh, content.size());
    EXPECT_EQ(truncate.ok(), want.write) << "SETATTR size: " << truncate;
    // Times: to now for whoever may write, to the client's times for the
    // owner only (EPERM), as utimensat(2) rules.
    const bool owner = caller.cred.uid == 0 || caller.cred.uid == kOwner;
    absl::Status touch = SetTimesAs(backend, caller.cred, fh, /*client_time=*/false);
    EXPECT_EQ(touch.ok(), owner || (want.access & kAccessModify) != 0)
        << "SETATTR times to server time: " << touch;
    if (!touch.ok()) {
      EXPECT_EQ(vfs::ErrnoOf(touch), EACCES) << touch;
    }
    absl::Status utimes = SetTimesAs(backend, caller.cred, fh, /*client_time=*/true);
    EXPECT_EQ(utimes.ok(), owner) << "SETATTR times to client times: " << utimes;
    if (!utimes.ok()) {
      EXPECT_EQ(vfs::ErrnoOf(utimes), EPERM) << utimes;
    }
    // Nothing the calls did may change the permission bits.
    EXPECT_EQ(ModeOf(backend, fh), mode) << "mode changed";
  }
}

// The modes of the matrix: each bit alone, each class alone, and the cases
// where a class is denied what a later class would grant.
inline const std::vector<uint32_t>& MatrixModes() {
  static const std::vector<uint32_t> modes = {
      0000, 0400, 0200, 0100, 0040, 0020, 0010, 0004, 0002, 0001, 0700, 0070,
      0007, 0077, 0707, 0770, 0666, 0644, 0640, 0604, 0555, 0333, 0111, 0777,
  };
  return modes;
}

}  // namespace permission_contract

// Mode bits alone: every mode of MatrixModes() for every caller.
inline void CheckModeBitsMatrix(vfs::Backend& backend, const vfs::FileHandle& scratch) {
  using namespace permission_contract;
  for (uint32_t mode : MatrixModes()) {
    SCOPED_TRACE(absl::StrCat("mode ", ModeString(mode)));
    std::optional<vfs::FileHandle> fh = MakeFile(backend, scratch, "m" + ModeString(mode), "data");
    ASSERT_TRUE(fh.has_value());
    Own(backend, *fh, kOwner, kGroup, mode);
    ASSERT_EQ(ModeOf(backend, *fh), mode);
    CheckFileForEveryCaller(backend, *fh, mode, vfs::AclFromMode(mode));
  }
}

// Access ACLs: named user and named group entries, the mask limiting them,
// and a caller in a group entry that grants nothing.
inline void CheckAclMatrix(vfs::Backend& backend, const vfs::FileHandle& scratch) {
  using namespace permission_contract;
  using vfs::AclEntry;
  struct Case {
    const char* name;
    uint32_t mode;  // the mode bits the ACL leaves (group bits = mask)
    vfs::Acl acl;
  };
  const std::vector<Case> cases = {
      {"named user rw, named group w",
       0660,
       {{vfs::kAclUserObj, vfs::kAclUndefinedId, 6},
        {vfs::kAclUser, kNamedUser, 6},
        {vfs::kAclGroupObj, vfs::kAclUndefinedId, 4},
        {vfs::kAclGroup, kNamedGroup, 2},
        {vfs::kAclMask, vfs::kAclUndefinedId, 6},
        {vfs::kAclOther, vfs::kAclUndefinedId, 0}}},
      {"mask r limits the named entries",
       0640,
       {{vfs::kAclUserObj, vfs::kAclUndefinedId, 6},
        {vfs::kAclUser, kNamedUser, 7},
        {vfs::kAclGroupObj, vfs::kAclUndefinedId, 0},
        {vfs::kAclGroup, kNamedGroup, 6},
        {vfs::kAclMask, vfs::kAclUndefinedId, 4},
        {vfs::kAclOther, vfs::kAclUndefinedId, 0}}},
      {"owning group none, other rw: group members denied",
       0616,
       {{vfs::kAclUserObj, vfs::kAclUndefinedId, 6},
        {vfs::kAclUser, kNamedUser, 0},
        {vfs::kAclGroupObj, vfs::kAclUndefinedId, 0},
        {vfs::kAclGroup, kNamedGroup, 1},
        {vfs::kAclMask, vfs::kAclUndefinedId, 1},
        {vfs::kAclOther, vfs::kAclUndefinedId, 6}}},
      {"write-only through the named group",
       0620,
       {{vfs::kAclUserObj, vfs::kAclUndefinedId, 6},
        {vfs::kAclGroupObj, vfs::kAclUndefinedId, 0},
        {vfs::kAclGroup, kNamedGroup, 2},
        {vfs::kAclMask, vfs::kAclUndefinedId, 2},
        {vfs::kAclOther, vfs::kAclUndefinedId, 0}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(absl::StrCat("ACL case \"", c.name, "\": ", AclString(c.acl)));
    std::optional<vfs::FileHandle> fh = MakeFile(backend, scratch, absl::StrCat("acl", i), "data");
    ASSERT_TRUE(fh.has_value());
    Own(backend, *fh, kOwner, kGroup, 0600);
    absl::Status set = backend.SetAcl(kRootCred, *fh, &c.acl, nullptr, nullptr);
    ASSERT_TRUE(set.ok()) << "SETACL: " << set;
    auto acls = backend.GetAcl(kRootCred, *fh, nullptr);
    ASSERT_TRUE(acls.ok()) << acls.status();
    EXPECT_EQ(AclString(acls->access), AclString(c.acl));
    ASSERT_EQ(ModeOf(backend, *fh), c.mode);
    CheckFileForEveryCaller(backend, *fh, c.mode, c.acl);
  }
}

// A new object in a set-group-ID directory gets the directory's group, and
// a new directory keeps S_ISGID, also when its creator is not in the group
// and also after the SETACL with which the Linux client gives a new object
// the ACLs inherited from a default ACL.
inline void CheckSetgidInheritance(vfs::Backend& backend, const vfs::FileHandle& scratch) {
  using namespace permission_contract;
  const vfs::Cred outsider{3004, 3004, {3004}};  // not in kGroup
  const vfs::Cred member{3001, 3001, {3001, kGroup}};
  const vfs::Acl default_acl = {{vfs::kAclUserObj, vfs::kAclUndefinedId, 7},
                                {vfs::kAclUser, kNamedUser, 7},
                                {vfs::kAclGroupObj, vfs::kAclUndefinedId, 7},
                                {vfs::kAclMask, vfs::kAclUndefinedId, 7},
                                {vfs::kAclOther, vfs::kAclUndefinedId, 5}};
  for (bool with_default_acl : {false, true}) {
    for (const vfs::Cred& creator : {outsider, member}) {
      const std::string parent_name =
          absl::StrCat("sgid", with_default_acl ? "-acl-" : "-", creator.uid);
      SCOPED_TRACE(absl::StrCat(parent_name, with_default_acl ? " (default ACL)" : "",
                                ", creator uid ", creator.uid));
      std::optional<vfs::FileHandle> parent =
          MakeDir(backend, kRootCred, scratch, parent_name, 0777);
      ASSERT_TRUE(parent.has_value());
      Own(backend, *parent, 0, kGroup, 02777);
      ASSERT_EQ(ModeOf(backend, *parent), 02777u);
      if (with_default_acl) {
        absl::Status set = backend.SetAcl(kRootCred, *parent, nullptr, &default_acl, nullptr);
        ASSERT_TRUE(set.ok()) << set;
      }
      vfs::Wcc wcc;
      vfs::SetAttributes mode;
      // MKDIR
      mode.mode = 0775;
      auto dir = backend.Mkdir(creator, *parent, "d", mode, &wcc);
      ASSERT_TRUE(dir.ok()) << dir.status();
      ASSERT_TRUE(dir->attributes.has_value());
      EXPECT_EQ(dir->attributes->gid, kGroup);
      EXPECT_EQ(dir->attributes->mode, 02775u) << ModeString(dir->attributes->mode);
      if (with_default_acl) {
        // What the Linux client sends after the MKDIR: the access ACL it
        // derived from the default ACL and the mode, and the default ACL.
        vfs::Acl access = default_acl;
        for (vfs::AclEntry& e : access) {
          if (e.tag == vfs::kAclUserObj) e.perm &= 7;
          if (e.tag == vfs::kAclMask) e.perm &= 7;
          if (e.tag == vfs::kAclOther) e.perm &= 5;
        }
        absl::Status set = backend.SetAcl(creator, dir->handle, &access, &default_acl, nullptr);
        ASSERT_TRUE(set.ok()) << "SETACL after MKDIR: " << set;
        auto acls = backend.GetAcl(kRootCred, dir->handle, nullptr);
        ASSERT_TRUE(acls.ok()) << acls.status();
        EXPECT_EQ(AclString(acls->access), AclString(access));
        EXPECT_EQ(AclString(acls->default_acl), AclString(default_acl));
      }
      auto after = backend.GetAttr(kRootCred, dir->handle);
      ASSERT_TRUE(after.ok()) << after.status();
      EXPECT_EQ(after->mode, 02775u) << "new directory: " << ModeString(after->mode);
      EXPECT_EQ(after->gid, kGroup);
      // CREATE, MKNOD, SYMLINK: the group of the directory; no S_ISGID on
      // a regular file.
      mode.mode = 0664;
      auto file = backend.Create(creator, *parent, "f", vfs::CreateMode::kGuarded, mode, {}, &wcc);
      ASSERT_TRUE(file.ok()) << file.status();
      auto file_attrs = backend.GetAttr(kRootCred, file->handle);
      ASSERT_TRUE(file_attrs.ok());
      EXPECT_EQ(file_attrs->gid, kGroup);
      EXPECT_EQ(file_attrs->mode, 0664u) << ModeString(file_attrs->mode);
      auto fifo = backend.Mknod(creator, *parent, "p", vfs::FileType::kFifo, 0, 0, mode, &wcc);
      ASSERT_TRUE(fifo.ok()) << fifo.status();
      auto fifo_attrs = backend.GetAttr(kRootCred, fifo->handle);
      ASSERT_TRUE(fifo_attrs.ok());
      EXPECT_EQ(fifo_attrs->gid, kGroup);
      EXPECT_EQ(fifo_attrs->mode, 0664u) << ModeString(fifo_attrs->mode);
      auto link = backend.Symlink(creator, *parent, "l", "target", {}, &wcc);
      ASSERT_TRUE(link.ok()) << link.status();
      auto link_attrs = backend.GetAttr(kRootCred, link->handle);
      ASSERT_TRUE(link_attrs.ok());
      EXPECT_EQ(link_attrs->gid, kGroup);
    }
  }
}

// A write or truncation by anyone but root clears S_ISUID, and S_ISGID when
// group execute is set; S_ISGID without group execute (once the mark of
// mandatory locking) stays only for a writer in the file's group, as the
// kernel's file_remove_privs does (setattr_should_drop_sgid, Linux 6.2 on).
// Root keeps them.
inline void CheckWriteClearsSetuid(vfs::Backend& backend, const vfs::FileHandle& scratch) {
  using namespace permission_contract;
  const vfs::Cred owner{kOwner, kGroup, {kGroup}};
  const vfs::Cred other{3004, 3004, {3004}};
  const vfs::Cred member{3001, 3001, {3001, kGroup}};
  struct Case {
    uint32_t mode;
    const vfs::Cred* who;
    bool truncate;
    uint32_t after;
  };
  const Case cases[] = {
      {04777, &other, false, 0777},      {02777, &other, false, 0777},
      {06777, &other, false, 0777},      {02767, &other, false, 0767},
      {02767, &member, false, 02767},    {02777, &member, false, 0777},
      {04777, &owner, false, 0777},      {06755, &owner, false, 0755},
      {04777, &other, true, 0777},       {02777, &other, true, 0777},
      {04777, &kRootCred, false, 04777}, {06777, &kRootCred, true, 06777},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("mode ", ModeString(c.mode), c.truncate ? " truncated" : " written",
                              " by uid ", c.who->uid));
    std::optional<vfs::FileHandle> fh =
        MakeFile(backend, scratch, absl::StrCat("suid", i++), "data");
    ASSERT_TRUE(fh.has_value());
    Own(backend, *fh, kOwner, kGroup, c.mode);
    ASSERT_EQ(ModeOf(backend, *fh), c.mode);
    absl::Status done =
        c.truncate ? TruncateAs(backend, *c.who, *fh, 2) : WriteAs(backend, *c.who, *fh, "xy");
    ASSERT_TRUE(done.ok()) << done;
    EXPECT_EQ(ModeOf(backend, *fh), c.after) << "mode after: " << ModeString(ModeOf(backend, *fh));
  }
}

// CREATE UNCHECKED of a name that exists (RFC 1813 §3.3.8), as Linux 6.12
// sends it for open(O_CREAT) of a file it has not looked up: the mode of a
// new file, and size 0 with O_TRUNC. On an existing regular file only the
// size is applied (as knfsd does), with the permission a truncation needs;
// nothing is opened, so a caller that may only write (or, without size, do
// nothing) to the file still succeeds. Mode and owner never change.
inline void CheckCreateOfExistingFile(vfs::Backend& backend, const vfs::FileHandle& scratch) {
  using namespace permission_contract;
  const vfs::Cred other{3004, 3004, {3004}};
  struct Case {
    uint32_t mode;
    const vfs::Cred* who;
    bool trunc;
    int error;  // 0: success
  };
  const Case cases[] = {
      {0602, &other, true, 0},  {0602, &other, false, 0},    {0644, &other, true, EACCES},
      {0640, &other, false, 0}, {0600, &kRootCred, true, 0},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("mode ", ModeString(c.mode), c.trunc ? " with" : " without",
                              " size 0, by uid ", c.who->uid));
    const std::string name = absl::StrCat("exists", i++);
    std::optional<vfs::FileHandle> fh = MakeFile(backend, scratch, name, "0123456789");
    ASSERT_TRUE(fh.has_value());
    Own(backend, *fh, kOwner, kGroup, c.mode);
    vfs::SetAttributes attrs;
    attrs.mode = 0644;
    if (c.trunc) attrs.size = 0;
    vfs::Wcc wcc;
    auto created =
        backend.Create(*c.who, scratch, name, vfs::CreateMode::kUnchecked, attrs, {}, &wcc);
    EXPECT_EQ(vfs::ErrnoOf(created.status()), c.error) << created.status();
    if (created.ok()) EXPECT_TRUE(created->handle == *fh);
    auto after = backend.GetAttr(kRootCred, *fh);
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(after->size, c.trunc && c.error == 0 ? 0u : 10u);
    EXPECT_EQ(after->mode, c.mode) << ModeString(after->mode);
    EXPECT_EQ(after->uid, kOwner);
  }
  std::optional<vfs::FileHandle> dir = MakeDir(backend, kRootCred, scratch, "exists-dir", 0777);
  ASSERT_TRUE(dir.has_value());
  vfs::SetAttributes trunc;
  trunc.size = 0;
  vfs::Wcc wcc;
  EXPECT_EQ(
      vfs::ErrnoOf(
          backend.Create(other, scratch, "exists-dir", vfs::CreateMode::kUnchecked, trunc, {}, &wcc)
              .status()),
      EEXIST);
}

// The owner may give its file any group it is a member of, by primary or by
// supplementary gid, and no other group.
inline void CheckChownToOwnGroups(vfs::Backend& backend, const vfs::FileHandle& scratch) {
  using namespace permission_contract;
  const vfs::Cred user{3001, 3001, {3001, 7, kGroup}};
  std::optional<vfs::FileHandle> fh = MakeFile(backend, scratch, "chgrp", "data");
  ASSERT_TRUE(fh.has_value());
  Own(backend, *fh, user.uid, user.gid, 0644);
  vfs::Wcc wcc;
  for (uint32_t gid : {kGroup, 7u, 3001u}) {
    vfs::SetAttributes group;
    group.gid = gid;
    absl::Status set = backend.SetAttr(user, *fh, group, std::nullopt, &wcc);
    EXPECT_TRUE(set.ok()) << "chgrp to own group " << gid << ": " << set;
    auto attrs = backend.GetAttr(kRootCred, *fh);
    ASSERT_TRUE(attrs.ok());
    EXPECT_EQ(attrs->gid, gid);
  }
  vfs::SetAttributes foreign;
  foreign.gid = 5000;
  EXPECT_EQ(vfs::ErrnoOf(backend.SetAttr(user, *fh, foreign, std::nullopt, &wcc)), EPERM);
  // Nor may anyone but the owner change the group.
  vfs::SetAttributes mine;
  mine.gid = 3004;
  EXPECT_EQ(vfs::ErrnoOf(backend.SetAttr({3004, 3004, {3004}}, *fh, mine, std::nullopt, &wcc)),
            EPERM);
}

// A directory moved to another parent takes its ".." link along: the old
// parent's link count drops and the new one's rises, in the RENAME's
// post-op attributes and in the next GETATTR.
inline void CheckRenameMovesDirectoryLinks(vfs::Backend& backend, const vfs::FileHandle& scratch) {
  using namespace permission_contract;
  std::optional<vfs::FileHandle> a = MakeDir(backend, kRootCred, scratch, "from", 0755);
  std::optional<vfs::FileHandle> b = MakeDir(backend, kRootCred, scratch, "to", 0755);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(MakeDir(backend, kRootCred, *a, "sub", 0755).has_value());
  auto nlink = [&](const vfs::FileHandle& fh) {
    auto attrs = backend.GetAttr(kRootCred, fh);
    EXPECT_TRUE(attrs.ok()) << attrs.status();
    return attrs.ok() ? attrs->nlink : 0;
  };
  ASSERT_EQ(nlink(*a), 3u);
  ASSERT_EQ(nlink(*b), 2u);
  vfs::Wcc from_wcc, to_wcc;
  ASSERT_TRUE(backend.Rename(kRootCred, *a, "sub", *b, "sub", &from_wcc, &to_wcc).ok());
  ASSERT_TRUE(from_wcc.after.has_value());
  ASSERT_TRUE(to_wcc.after.has_value());
  EXPECT_EQ(from_wcc.after->nlink, 2u) << "old parent, RENAME reply";
  EXPECT_EQ(to_wcc.after->nlink, 3u) << "new parent, RENAME reply";
  EXPECT_EQ(nlink(*a), 2u) << "old parent, GETATTR";
  EXPECT_EQ(nlink(*b), 3u) << "new parent, GETATTR";
}

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_PERMISSION_CONTRACT_H_
