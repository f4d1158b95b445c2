// What a MOUNT client needs besides the codecs (mount3_codec.h describes them
// once for both directions): names for messages.
#ifndef NFS3D_XDR_MOUNT3_CLIENT_CODEC_H_
#define NFS3D_XDR_MOUNT3_CLIENT_CODEC_H_

#include "xdr/mount3_codec.h"
#include "xdr/mount3_types.h"

namespace nfs3d::mount3 {

// "MNT3ERR_ACCES" etc.
const char* StatusName(mountstat3 status);

}  // namespace nfs3d::mount3

#endif  // NFS3D_XDR_MOUNT3_CLIENT_CODEC_H_
