// Principal → local identity for RPCSEC_GSS callers, as knfsd's gssproxy
// does it: the krb5 auth_to_local rules (by default: a one-component
// principal of the default realm) name a local user, whose uid, primary gid
// and supplementary groups the call runs with. Machine principals (host/…,
// nfs/…), other realms and names with no local user stay unmapped: the
// export's anonymous ids.
#ifndef NFS3D_RPC_GSS_GSS_IDENTITY_H_
#define NFS3D_RPC_GSS_GSS_IDENTITY_H_

#include <gssapi/gssapi.h>

#include <string_view>

#include "rpc/gss/gss_context_table.h"

namespace nfs3d::rpc::gss {

// The local user `name` (getpwnam_r, getgrouplist); unmapped if unknown.
GssIdentity LocalUserIdentity(std::string_view principal, std::string_view name);

// The identity of an established context's initiator.
GssIdentity MapInitiator(gss_name_t initiator);

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_GSS_IDENTITY_H_
