#include "vfs/posix_permission.h"

#include <sys/stat.h>

namespace nfs3d::vfs {

bool InGroup(const Cred& cred, uint32_t gid) {
  if (cred.gid == gid) return true;
  for (uint32_t g : cred.groups) {
    if (g == gid) return true;
  }
  return false;
}

namespace {

// POSIX.1e: owner entry; else a named user entry (masked); else every
// group entry that matches (masked); else other.
uint32_t AclBits(const Cred& cred, const Attributes& a, const Acl& acl) {
  const uint32_t owner_bits = (a.mode >> 6) & 7;
  const uint32_t class_bits = (a.mode >> 3) & 7;  // the mask, or the group with no mask
  const uint32_t other_bits = a.mode & 7;
  if (cred.uid == a.uid) return owner_bits;
  bool has_mask = false;
  for (const AclEntry& e : acl) has_mask = has_mask || e.tag == kAclMask;
  const uint32_t mask = has_mask ? class_bits : 7;
  for (const AclEntry& e : acl) {
    if (e.tag == kAclUser && e.id == cred.uid) return e.perm & mask;
  }
  bool group_matched = false;
  uint32_t group_bits = 0;
  for (const AclEntry& e : acl) {
    if (e.tag == kAclGroupObj && InGroup(cred, a.gid)) {
      group_matched = true;
      group_bits |= has_mask ? e.perm : class_bits;
    } else if (e.tag == kAclGroup && InGroup(cred, e.id)) {
      group_matched = true;
      group_bits |= e.perm;
    }
  }
  if (group_matched) return group_bits & mask;
  return other_bits;
}

}  // namespace

uint32_t PermittedBits(const Cred& cred, const Attributes& a, const Acl& acl) {
  if (cred.uid == 0) {
    const bool exec = a.type == FileType::kDirectory || (a.mode & 0111) != 0;
    return kMayRead | kMayWrite | (exec ? kMayExec : 0);
  }
  if (!acl.empty()) return AclBits(cred, a, acl);
  if (cred.uid == a.uid) return (a.mode >> 6) & 7;
  if (InGroup(cred, a.gid)) return (a.mode >> 3) & 7;
  return a.mode & 7;
}

bool MayReadOrWrite(const Cred& cred, const Attributes& a, const Acl& acl, bool write) {
  if (cred.uid == 0 || cred.uid == a.uid) return true;
  const uint32_t bits = PermittedBits(cred, a, acl);
  if (write) return (bits & kMayWrite) != 0;
  return (bits & (kMayRead | kMayExec)) != 0;
}

uint32_t AccessBitsFor(FileType type, uint32_t rwx) {
  constexpr uint32_t kRead = 0x01, kLookup = 0x02, kModify = 0x04, kExtend = 0x08, kDelete = 0x10,
                     kExecute = 0x20;
  const bool r = rwx & kMayRead, w = rwx & kMayWrite, x = rwx & kMayExec;
  uint32_t granted = r ? kRead : 0;
  if (type == FileType::kDirectory) {
    if (x) granted |= kLookup;
    if (w && x) granted |= kModify | kExtend | kDelete;
  } else {
    if (w) granted |= kModify | kExtend;
    if (x) granted |= kExecute;
  }
  return granted;
}

uint32_t ModeAfterWrite(const Cred& cred, const Attributes& a) {
  if (cred.uid == 0 || a.type != FileType::kRegular) return a.mode;
  uint32_t mode = a.mode & ~static_cast<uint32_t>(S_ISUID);
  if ((a.mode & S_ISGID) && ((a.mode & S_IXGRP) || !InGroup(cred, a.gid))) mode &= ~S_ISGID;
  return mode;
}

uint32_t ModeAfterChown(const Cred& cred, const Attributes& a) {
  if (a.type != FileType::kRegular) return a.mode;
  uint32_t mode = a.mode & ~static_cast<uint32_t>(S_ISUID);
  const bool exempt = cred.uid == 0 || InGroup(cred, a.gid);
  if ((a.mode & S_ISGID) && ((a.mode & S_IXGRP) || !exempt)) mode &= ~S_ISGID;
  return mode;
}

}  // namespace nfs3d::vfs
