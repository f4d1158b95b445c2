// The NFSACL v3 types of nfsacl_types.h described once (xdr/describe.h).
// The Checks refuse what Linux refuses; whether the entries make a valid ACL
// is the procedure's question.
#ifndef NFS3D_XDR_NFSACL_CODEC_H_
#define NFS3D_XDR_NFSACL_CODEC_H_

#include "xdr/describe.h"
#include "xdr/nfs3_codec.h"
#include "xdr/nfsacl_types.h"

namespace nfs3d::nfsacl {

NFS3D_XDR(aclent) { v(x.type, x.id, x.perm); }
NFS3D_XDR(acl) {
  v(x.count);
  v.Check(x.count <= kMaxEntries);
  v(xdr::Counted(x.entries, x.count, /*min_size=*/12));
}
NFS3D_XDR(GETACL3args) { v(x.fh, x.mask); }
NFS3D_XDR(GETACL3res) {
  v(x.status, x.attr);
  if (x.status == nfs3::NFS3_OK) v(x.mask, x.access, x.default_acl);
}
NFS3D_XDR(SETACL3args) {
  v(x.fh, x.mask);
  v.Check((x.mask & ~kMaskAll) == 0);
  v(x.access, x.default_acl);
  v.Check(!(x.mask & kAcl) || x.access.count == x.access.entries.size());
  v.Check(!(x.mask & kDfAcl) || x.default_acl.count == x.default_acl.entries.size());
}
NFS3D_XDR(SETACL3res) { v(x.status, x.attr); }

// Largest encoded GETACL3res: two full ACLs.
inline constexpr uint32_t kMaxGetaclReply = 4 + 4 + 84 + 4 + 2 * (8 + 12 * kMaxEntries);

}  // namespace nfs3d::nfsacl

#endif  // NFS3D_XDR_NFSACL_CODEC_H_
