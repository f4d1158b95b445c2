// What an NFSv3 client needs besides the codecs (nfs3_codec.h): procedure
// names for messages.
#ifndef NFS3D_XDR_NFS3_CLIENT_CODEC_H_
#define NFS3D_XDR_NFS3_CLIENT_CODEC_H_

#include "xdr/nfs3_codec.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfs3 {

// Name of a procedure, e.g. "WRITE".
const char* ProcName(uint32_t proc);

}  // namespace nfs3d::nfs3

#endif  // NFS3D_XDR_NFS3_CLIENT_CODEC_H_
