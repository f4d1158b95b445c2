// RPCSEC_GSS version 1 (RFC 2203) on the wire, described once: the
// credential, the context-creation arguments and results, and the bodies
// that carry integrity-protected (krb5i) or encrypted (krb5p) arguments and
// results. The server (rpc/gss/gss_server.h) and the test initiator use them.
#ifndef NFS3D_RPC_GSS_RPCSEC_GSS_TYPES_H_
#define NFS3D_RPC_GSS_RPCSEC_GSS_TYPES_H_

#include <cstdint>

#include "absl/types/span.h"

#include "common/auth_flavor.h"
#include "xdr/describe.h"

namespace nfs3d::rpc::gss {

// RFC 2203 §4: the auth_stat values of RPCSEC_GSS (flavor kRpcsecGss).
inline constexpr uint32_t kAuthStatCredProblem = 13;  // RPCSEC_GSS_CREDPROBLEM
inline constexpr uint32_t kAuthStatCtxProblem = 14;   // RPCSEC_GSS_CTXPROBLEM
// §5.3.3.1: a context whose sequence numbers reach MAXSEQ is spent.
inline constexpr uint32_t kMaxSeq = 0x80000000u;

enum class GssProc : uint32_t { kData = 0, kInit = 1, kContinueInit = 2, kDestroy = 3 };
constexpr xdr::EnumRange XdrRange(GssProc) { return {0, 3}; }
enum class GssService : uint32_t { kNone = 1, kIntegrity = 2, kPrivacy = 3 };
constexpr xdr::EnumRange XdrRange(GssService) { return {1, 3}; }

// The Kerberos pseudo-flavor (RFC 2623 §2.1) of a service: what a
// Credential's flavor holds for a call that came in under RPCSEC_GSS.
constexpr Flavor PseudoFlavor(GssService s) {
  return s == GssService::kNone ? kKrb5 : s == GssService::kIntegrity ? kKrb5i : kKrb5p;
}

// Context handles are ours: 16 bytes; a client's longer handle is not one.
inline constexpr uint32_t kMaxHandle = 64;
// GSS tokens in INIT arguments and results. A Kerberos AP-REQ is ~1 KiB; an
// Active Directory ticket with a large PAC can reach tens of KiB.
inline constexpr uint32_t kMaxToken = 64 * 1024;
// A wrapped body holds a whole call's arguments or a reply's results.
inline constexpr uint32_t kMaxBody = 4u << 20;

// rpc_gss_cred_t with its version-1 arm: only version 1 is described.
struct GssCred {
  uint32_t version = 1;
  GssProc proc = GssProc::kData;
  uint32_t seq_num = 0;
  GssService service = GssService::kNone;
  absl::Span<const uint8_t> handle;
};
NFS3D_XDR(GssCred) {
  v(x.version);
  v.Check(x.version == 1);
  v(x.proc, x.seq_num, x.service, xdr::Bounded(x.handle, kMaxHandle));
}

// rpc_gss_init_arg: the procedure arguments of INIT and CONTINUE_INIT.
struct GssInitArg {
  absl::Span<const uint8_t> token;
};
NFS3D_XDR(GssInitArg) { v(xdr::Bounded(x.token, kMaxToken)); }

// rpc_gss_init_res: the procedure results of INIT and CONTINUE_INIT.
struct GssInitRes {
  absl::Span<const uint8_t> handle;
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t seq_window = 0;
  absl::Span<const uint8_t> token;
};
NFS3D_XDR(GssInitRes) {
  v(xdr::Bounded(x.handle, kMaxHandle), x.major, x.minor, x.seq_window,
    xdr::Bounded(x.token, kMaxToken));
}

// rpc_gss_integ_data: databody_integ (seq_num, then the arguments or
// results) and the MIC over it.
struct GssIntegData {
  absl::Span<const uint8_t> body;
  absl::Span<const uint8_t> checksum;
};
NFS3D_XDR(GssIntegData) { v(xdr::Bounded(x.body, kMaxBody), xdr::Bounded(x.checksum, kMaxToken)); }

// rpc_gss_priv_data: GSS_Wrap of (seq_num, arguments or results).
struct GssPrivData {
  absl::Span<const uint8_t> body;
};
NFS3D_XDR(GssPrivData) { v(xdr::Bounded(x.body, kMaxBody)); }

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_RPCSEC_GSS_TYPES_H_
