#include "rpc/rpc_auth.h"

#include "xdr/decoder.h"

namespace nfs3d::rpc {
namespace {

bool ParseAuthSys(absl::Span<const uint8_t> body, Credential* out) {
  xdr::Decoder in(body);
  // Trailing bytes mean the client and we disagree about the layout.
  return xdr::Decode(in, out) && in.remaining() == 0;
}

}  // namespace

AuthStat Authenticate(const OpaqueAuth& cred, const OpaqueAuth& verf, Credential* out) {
  *out = Credential{};
  switch (cred.flavor) {
    case kAuthNone:
      if (!cred.body.empty()) return AuthStat::kBadCred;
      break;
    case kAuthSys:
      if (!ParseAuthSys(cred.body, out)) {
        *out = Credential{};
        return AuthStat::kBadCred;
      }
      break;
    default:
      return AuthStat::kBadCred;
  }
  out->flavor = cred.flavor;
  if (verf.flavor != kAuthNone) {
    *out = Credential{};
    return AuthStat::kBadVerf;
  }
  return AuthStat::kOk;
}

AuthStat AuthenticateTlsProbe(const CallHeader& header, const TransportInfo& transport,
                              Credential* out) {
  *out = Credential{};
  if (header.proc != 0 || !header.cred.body.empty() ||
      transport.security != TransportSecurity::kNone) {
    return AuthStat::kBadCred;
  }
  if (header.verf.flavor != kAuthNone || !header.verf.body.empty()) return AuthStat::kBadVerf;
  return AuthStat::kOk;  // *out: AUTH_NONE
}

}  // namespace nfs3d::rpc
