#include "rpc/rpc_auth.h"

#include <string>

#include "xdr/decoder.h"

namespace nfs3d::rpc {
namespace {

bool ParseAuthSys(absl::Span<const uint8_t> body, Credential* out) {
  xdr::Decoder in(body);
  out->stamp = in.U32();
  out->machine = std::string(in.String(kMaxMachineName));
  out->uid = in.U32();
  out->gid = in.U32();
  uint32_t n = in.ArrayLength(kMaxAuthSysGids);
  out->gids.clear();
  out->gids.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out->gids.push_back(in.U32());
  // Trailing bytes mean the client and we disagree about the layout.
  return in.ok() && in.remaining() == 0;
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
