// The client direction of the MOUNT codecs (mount3_codec.h has the server's).
#ifndef NFS3D_XDR_MOUNT3_CLIENT_CODEC_H_
#define NFS3D_XDR_MOUNT3_CLIENT_CODEC_H_

#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/mount3_codec.h"
#include "xdr/mount3_types.h"

namespace nfs3d::mount3 {

void Encode(xdr::Encoder& e, const DirpathArgs& a);  // MNT, UMNT
bool Decode(xdr::Decoder& d, MountRes3* r);
bool Decode(xdr::Decoder& d, MountList* l);
bool Decode(xdr::Decoder& d, ExportList* l);

// "MNT3ERR_ACCES" etc.
const char* StatusName(mountstat3 status);

}  // namespace nfs3d::mount3

#endif  // NFS3D_XDR_MOUNT3_CLIENT_CODEC_H_
