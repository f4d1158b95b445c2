// The NSM types of nsm_types.h described once; both directions follow
// (xdr/describe.h).
#ifndef NFS3D_NLM_NSM_CODEC_H_
#define NFS3D_NLM_NSM_CODEC_H_

#include "nlm/nsm_types.h"
#include "xdr/describe.h"

namespace nfs3d::nsm {

NFS3D_XDR(sm_name) { v(xdr::Bounded(x.mon_name, kMaxStrLen)); }
NFS3D_XDR(my_id) { v(xdr::Bounded(x.my_name, kMaxStrLen), x.my_prog, x.my_vers, x.my_proc); }
NFS3D_XDR(mon_id) { v(xdr::Bounded(x.mon_name, kMaxStrLen), x.id); }
NFS3D_XDR(mon) { v(x.id, x.priv); }
NFS3D_XDR(stat_chge) { v(xdr::Bounded(x.mon_name, kMaxStrLen), x.state); }
NFS3D_XDR(sm_status) { v(xdr::Bounded(x.mon_name, kMaxStrLen), x.state, x.priv); }
NFS3D_XDR(sm_stat_res) { v(x.res_stat, x.state); }
NFS3D_XDR(sm_stat) { v(x.state); }

}  // namespace nfs3d::nsm

#endif  // NFS3D_NLM_NSM_CODEC_H_
