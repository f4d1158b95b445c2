// NFSACL v3 (program 100227: NULL, GETACL, SETACL), which Linux NFSv3
// clients use for POSIX ACLs (getfacl/setfacl, cp -a, default ACL
// inheritance). Served on the NFS port beside NFSv3 by the same NfsServer:
// calls go through Authorize like every NFS call, then to the backend's
// GetAcl/SetAcl. Per export, `no_acl` makes it answer as a server whose file
// system has no ACLs: GETACL gives the ACL the mode bits stand for and no
// default ACL, SETACL NFS3ERR_NOTSUPP (the client reports "Operation not
// supported" and carries on with the mode bits).
//
// Wire quirks kept as Linux has them (fs/nfs_common/nfsacl.c): a three-entry
// ACL is sent with a MASK entry equal to the group entry; the owner and group
// entries carry the file's uid and gid; a received four-entry ACL whose mask
// equals the group entry is a minimal ACL; entries are sorted before use.
#ifndef NFS3D_NFSD_NFSACL_PROGRAM_H_
#define NFS3D_NFSD_NFSACL_PROGRAM_H_

#include "absl/status/statusor.h"

#include "nfsd/nfs_server.h"
#include "rpc/program.h"
#include "vfs/posix_acl.h"
#include "xdr/nfsacl_types.h"

namespace nfs3d::nfsd {

// Program 100227 version 3, served by `server` (which must outlive it).
rpc::Program NfsAclProgram(NfsServer* server);

// The conversions between the wire and the backend, public for tests.
// `acl` as sent for an object owned by uid/gid; only the count unless
// `with_entries`; kDefaultFlag on each entry's type when `is_default`.
nfsacl::acl ToWireAcl(const vfs::Acl& acl, bool with_entries, bool is_default, uint32_t uid,
                      uint32_t gid);
// A received ACL as the backend takes it (sorted, unnamed ids cleared, the
// Solaris mask of a minimal ACL dropped); InvalidArgument for an unknown tag
// or permission bits beyond rwx.
absl::StatusOr<vfs::Acl> FromWireAcl(const nfsacl::acl& wire);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NFSACL_PROGRAM_H_
