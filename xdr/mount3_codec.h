// XDR codecs for MOUNT v1/v3 types (mount3_types.h).
#ifndef NFS3D_XDR_MOUNT3_CODEC_H_
#define NFS3D_XDR_MOUNT3_CODEC_H_

#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/mount3_types.h"

namespace nfs3d::mount3 {

bool Decode(xdr::Decoder& d, DirpathArgs* a);  // dirpath<MNTPATHLEN>
void Encode(xdr::Encoder& e, const MountRes3& r);
void Encode(xdr::Encoder& e, const MountRes1& r);
void Encode(xdr::Encoder& e, const MountList& l);
void Encode(xdr::Encoder& e, const ExportList& l);

}  // namespace nfs3d::mount3

#endif  // NFS3D_XDR_MOUNT3_CODEC_H_
