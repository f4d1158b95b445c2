// POSIX draft ACLs as Linux keeps them: entries tagged owner, named user,
// owning group, named group, mask and other, each with rwx bits. The backend
// reads and writes them as the system.posix_acl_access / _default extended
// attributes; this file holds the types and that attribute's binary format.
#ifndef NFS3D_VFS_POSIX_ACL_H_
#define NFS3D_VFS_POSIX_ACL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nfs3d::vfs {

// The tag values of <sys/acl.h>, which NFSACL also uses on the wire.
enum AclTag : uint32_t {
  kAclUserObj = 0x01,
  kAclUser = 0x02,
  kAclGroupObj = 0x04,
  kAclGroup = 0x08,
  kAclMask = 0x10,
  kAclOther = 0x20,
};

inline constexpr uint32_t kAclUndefinedId = 0xffffffff;

struct AclEntry {
  uint32_t tag = 0;
  uint32_t id = kAclUndefinedId;  // named entries only
  uint32_t perm = 0;              // rwx as 4/2/1
  bool operator==(const AclEntry&) const = default;
};

// Sorted by (tag, id), as the kernel requires. Empty: no ACL.
using Acl = std::vector<AclEntry>;

// An object's ACLs. `access` is never empty: without an access ACL it is
// the three entries the mode bits give.
struct AclPair {
  Acl access;
  Acl default_acl;  // directories only; empty when none
};

// The access ACL the permission bits `mode` stand for.
Acl AclFromMode(uint32_t mode);

// Sorts by (tag, id) and clears the ids of unnamed entries.
void CanonicalizeAcl(Acl* acl);

// Whether setting the access ACL `wanted` (canonical; empty: none) on an
// object of permission bits `mode` whose stored access ACL is `stored`
// (empty: none) would change nothing. Such a set is skipped: the kernel
// recomputes the mode on every set and clears S_ISGID when the caller is not
// in the object's group, which undid the set-group-ID bit of every directory
// the Linux client made in a set-group-ID directory with a default ACL (it
// sends the ACL the server's kernel had already inherited, right after
// MKDIR).
bool AccessAclUnchanged(const Acl& stored, uint32_t mode, const Acl& wanted);

// The extended attribute value (little-endian: version 2, then tag, perm,
// id per entry).
std::string EncodeAclXattr(const Acl& acl);
// nullopt if `value` is not a well-formed attribute.
std::optional<Acl> DecodeAclXattr(std::string_view value);

inline constexpr char kAclAccessXattr[] = "system.posix_acl_access";
inline constexpr char kAclDefaultXattr[] = "system.posix_acl_default";

// Reads the ACL attribute `name` of the file at `path`: empty when the file
// has none or its file system keeps no ACLs. Errors carry an errno.
absl::StatusOr<Acl> ReadAclXattr(const std::string& path, const char* name);
// Sets (non-empty `acl`) or removes (empty) it; the kernel checks the ACL
// and, for the access ACL, updates the mode bits to match.
absl::Status WriteAclXattr(const std::string& path, const char* name, const Acl& acl);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_POSIX_ACL_H_
