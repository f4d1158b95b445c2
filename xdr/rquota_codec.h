// The RQUOTA types of rquota_types.h described once (xdr/describe.h). The
// versions differ only in the arguments: v1 names a uid, v2 a type and an id.
#ifndef NFS3D_XDR_RQUOTA_CODEC_H_
#define NFS3D_XDR_RQUOTA_CODEC_H_

#include "xdr/describe.h"
#include "xdr/nfs3_codec.h"
#include "xdr/rquota_types.h"

namespace nfs3d::rquota {

constexpr xdr::EnumRange XdrRange(gqr_status) { return {Q_OK, Q_EPERM}; }

// Version 1 and 2 arguments as distinct types sharing one struct.
struct GetQuotaArgsV1 : GetQuotaArgs {};
struct GetQuotaArgsV2 : GetQuotaArgs {};
struct SetQuotaArgsV1 : SetQuotaArgs {};
struct SetQuotaArgsV2 : SetQuotaArgs {};

NFS3D_XDR(GetQuotaArgsV1) { v(xdr::Bounded(x.path, kPathLen), x.id); }
NFS3D_XDR(GetQuotaArgsV2) {
  v(xdr::Bounded(x.path, kPathLen), x.type, x.id);
  v.Check(x.type == kUserQuota || x.type == kGroupQuota);
}
NFS3D_XDR(Rquota) {
  v(x.bsize, x.active, x.bhardlimit, x.bsoftlimit, x.curblocks, x.fhardlimit, x.fsoftlimit,
    x.curfiles, x.btimeleft, x.ftimeleft);
}
NFS3D_XDR(GetQuotaRes) {
  v(x.status);
  if (x.status == Q_OK) v(x.rquota);
}
NFS3D_XDR(SqDqblk) {
  v(x.bhardlimit, x.bsoftlimit, x.curblocks, x.fhardlimit, x.fsoftlimit, x.curfiles, x.btimeleft,
    x.ftimeleft);
}
NFS3D_XDR(SetQuotaArgsV1) { v(x.qcmd, xdr::Bounded(x.path, kPathLen), x.id, x.dqblk); }
NFS3D_XDR(SetQuotaArgsV2) {
  v(x.qcmd, xdr::Bounded(x.path, kPathLen), x.id, x.type, x.dqblk);
  v.Check(x.type == kUserQuota || x.type == kGroupQuota);
}

}  // namespace nfs3d::rquota

#endif  // NFS3D_XDR_RQUOTA_CODEC_H_
