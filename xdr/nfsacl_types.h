// NFSACL v3 (program 100227), the side protocol Linux and Solaris NFSv3
// clients use for POSIX draft ACLs. It has no RFC; nfsacl_codec.h describes
// the wire format the Linux kernel speaks (include/linux/nfsacl.h). Both ACLs
// are always on the wire; `mask` says which ones mean something (kAcl/kDfAcl:
// the entries, kAclCnt/kDfAclCnt: the count). An entry's type is a
// <sys/acl.h> tag, with kDefaultFlag set in default ACL entries.
#ifndef NFS3D_XDR_NFSACL_TYPES_H_
#define NFS3D_XDR_NFSACL_TYPES_H_

#include <cstdint>
#include <vector>

#include "xdr/nfs3_types.h"

namespace nfs3d::nfsacl {

inline constexpr uint32_t kProgram = 100227;
inline constexpr uint32_t kVersion = 3;

enum Proc : uint32_t { kNull = 0, kGetacl = 1, kSetacl = 2, kNumProcs = 3 };

inline constexpr uint32_t kAcl = 0x1;
inline constexpr uint32_t kAclCnt = 0x2;
inline constexpr uint32_t kDfAcl = 0x4;
inline constexpr uint32_t kDfAclCnt = 0x8;
inline constexpr uint32_t kMaskAll = kAcl | kAclCnt | kDfAcl | kDfAclCnt;
inline constexpr uint32_t kDefaultFlag = 0x1000;
inline constexpr uint32_t kMaxEntries = 1024;  // per ACL, as Linux

struct aclent {
  uint32_t type = 0;
  uint32_t id = 0;
  uint32_t perm = 0;
  bool operator==(const aclent&) const = default;
};

// `count` may exceed entries.size() when only the count was asked for.
struct acl {
  uint32_t count = 0;
  std::vector<aclent> entries;
};

struct GETACL3args {
  nfs3::nfs_fh3 fh;
  uint32_t mask = 0;
};

struct GETACL3res {
  nfs3::nfsstat3 status = nfs3::NFS3_OK;
  nfs3::post_op_attr attr;  // ok and fail
  uint32_t mask = 0;        // ok
  acl access;               // ok
  acl default_acl;          // ok
};

struct SETACL3args {
  nfs3::nfs_fh3 fh;
  uint32_t mask = 0;
  acl access;
  acl default_acl;
};

struct SETACL3res {
  nfs3::nfsstat3 status = nfs3::NFS3_OK;
  nfs3::post_op_attr attr;
};

}  // namespace nfs3d::nfsacl

#endif  // NFS3D_XDR_NFSACL_TYPES_H_
