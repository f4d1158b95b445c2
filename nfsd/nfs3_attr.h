// Conversions between the vfs layer's types and the NFSv3 wire types. Every
// post_op_attr / wcc_data in a reply is built here from what the backend
// reported, so a missing value is "not present", never uninitialised.
#ifndef NFS3D_NFSD_NFS3_ATTR_H_
#define NFS3D_NFSD_NFS3_ATTR_H_

#include <optional>

#include "vfs/backend.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd {

nfs3::ftype3 ToFtype3(vfs::FileType type);
nfs3::nfstime3 ToNfsTime(const vfs::Time& t);
vfs::Time ToVfsTime(const nfs3::nfstime3& t);

nfs3::fattr3 ToFattr3(const vfs::Attributes& a);
nfs3::post_op_attr ToPostOpAttr(const std::optional<vfs::Attributes>& a);
nfs3::wcc_attr ToWccAttr(const vfs::WccAttr& a);
nfs3::wcc_data ToWccData(const vfs::Wcc& w);

vfs::SetAttributes ToSetAttributes(const nfs3::sattr3& s);

vfs::FileHandle ToVfsHandle(const nfs3::nfs_fh3& fh);
nfs3::nfs_fh3 ToNfsHandle(const vfs::FileHandle& fh);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_NFS3_ATTR_H_
