// Credential checking for the flavors nfs3d serves: AUTH_NONE and AUTH_SYS.
#ifndef NFS3D_RPC_RPC_AUTH_H_
#define NFS3D_RPC_RPC_AUTH_H_

#include "rpc/call_context.h"
#include "rpc/rpc_message.h"
#include "xdr/describe.h"

namespace nfs3d::rpc {

// RFC 5531 appendix A limits for the AUTH_SYS body.
inline constexpr uint32_t kMaxMachineName = 255;
inline constexpr uint32_t kMaxAuthSysGids = 16;

// A Credential's AUTH_SYS body (authsys_parms); the flavor travels outside it.
NFS3D_XDR(Credential) {
  v(x.stamp, xdr::Bounded(x.machine, kMaxMachineName), x.uid, x.gid,
    xdr::Counted(x.gids, kMaxAuthSysGids));
}

// Fills *out from the call's credential and checks its verifier. Returns
// AuthStat::kOk or the auth_stat to send back in an AUTH_ERROR reply:
//   - AUTH_SYS body that does not decode exactly → AUTH_BADCRED;
//   - AUTH_NONE with a non-empty body → AUTH_BADCRED;
//   - any other flavor (AUTH_SHORT, AUTH_DH, RPCSEC_GSS, ...) → AUTH_BADCRED.
//     RFC 5531 has no "unsupported flavor" status; Linux knfsd answers an
//     unknown flavor with AUTH_BADCRED, and clients treat it as a hard
//     failure (AUTH_REJECTEDCRED would instead invite a credential refresh
//     and a retry loop). AUTH_TOOWEAK is kept for "flavor known but not
//     allowed here", which is an export-level decision, not this layer's.
//   - verifier flavor other than AUTH_NONE → AUTH_BADVERF (its body is
//     ignored: neither flavor defines one).
AuthStat Authenticate(const OpaqueAuth& cred, const OpaqueAuth& verf, Credential* out);

// An AUTH_TLS call (RFC 9289 §4.1) that the transport did not take as the
// start of TLS: it came over UDP, on a server without [tls], on a connection
// already in TLS, or is malformed. As knfsd's svcauth_tls_accept: AUTH_TLS on
// any procedure but NULL, with a credential or verifier body, or on a
// connection already in TLS → AUTH_BADCRED (AUTH_BADVERF for the verifier);
// otherwise the NULL call runs as AUTH_NONE and its reply carries an empty
// verifier, which tells the client that TLS is not available here.
AuthStat AuthenticateTlsProbe(const CallHeader& header, const TransportInfo& transport,
                              Credential* out);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_RPC_AUTH_H_
