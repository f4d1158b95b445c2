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

}  // namespace nfs3d::rpc
