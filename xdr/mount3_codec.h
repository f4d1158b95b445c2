// The MOUNT v1/v3 types of mount3_types.h described once (RFC 1813
// Appendix I, RFC 1094 Appendix A); both directions follow (xdr/describe.h).
#ifndef NFS3D_XDR_MOUNT3_CODEC_H_
#define NFS3D_XDR_MOUNT3_CODEC_H_

#include "xdr/describe.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_codec.h"

namespace nfs3d::mount3 {

// Bounds for lists whose length the wire does not announce.
inline constexpr size_t kMaxListEntries = 1u << 16;
inline constexpr uint32_t kMaxAuthFlavors = 64;

NFS3D_XDR(DirpathArgs) { v(xdr::Bounded(x.dirpath, kMntPathLen)); }
// fhandle3 is opaque<FHSIZE3>, as nfs_fh3.
NFS3D_XDR(MountRes3) {
  v(x.status);
  if (x.status == MNT3_OK) v(x.fhandle, xdr::Counted(x.auth_flavors, kMaxAuthFlavors));
}
NFS3D_XDR(MountRes1) {
  v(x.status);
  if (x.status == 0) v(x.fhandle);
}
// mountlist and exports are XDR optional-data chains.
NFS3D_XDR(MountEntry) {
  v(xdr::Bounded(x.hostname, kMntNameLen), xdr::Bounded(x.directory, kMntPathLen));
}
NFS3D_XDR(MountList) { v(xdr::Chain(x.entries, kMaxListEntries)); }
NFS3D_XDR(ExportEntry) {
  v(xdr::Bounded(x.dir, kMntPathLen), xdr::Chain(x.groups, kMaxListEntries, kMntNameLen));
}
NFS3D_XDR(ExportList) { v(xdr::Chain(x.entries, kMaxListEntries)); }

}  // namespace nfs3d::mount3

#endif  // NFS3D_XDR_MOUNT3_CODEC_H_
