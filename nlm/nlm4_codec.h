// The NLM types of nlm4_types.h described once, for versions 4 (64-bit
// ranges) and 1/3 (32-bit ranges, and only the first five status codes: the
// others go out as NLM4_DENIED, NLM4_FAILED as NLM4_DENIED_NOLOCKS). nfs3d
// decodes calls and encodes replies as a server, and encodes GRANTED / *_RES
// calls and decodes their replies as a client of the peer's lock manager;
// both follow from these descriptions (xdr/describe.h).
#ifndef NFS3D_NLM_NLM4_CODEC_H_
#define NFS3D_NLM_NLM4_CODEC_H_

#include "nlm/nlm4_types.h"
#include "xdr/describe.h"

namespace nfs3d::nlm {

using xdr::Decode;
using xdr::Encode;

constexpr xdr::EnumRange XdrRange(nlm4_stats) { return {NLM4_GRANTED, NLM4_FAILED}; }
constexpr xdr::EnumRange XdrRange(fsh4_mode) { return {fsm_DN, fsm_DRW}; }
constexpr xdr::EnumRange XdrRange(fsh4_access) { return {fsa_NONE, fsa_RW}; }

// The status a v1/v3 peer understands.
inline nlm4_stats ToV1Stat(nlm4_stats s) {
  if (s <= NLM4_DENIED_GRACE_PERIOD) return s;
  return s == NLM4_FAILED ? NLM4_DENIED_NOLOCKS : NLM4_DENIED;
}

// The parts versions share; kWide selects v4.
namespace fields {

// What differs between v4 (kWide) and v1/v3: range fields and status codes.
template <bool kWide, typename V, typename S>
void Range(V& v, S& x) {
  if constexpr (kWide) {
    v(x);
  } else {
    xdr::AsU32(v, x);
  }
}
// Visits a status and returns it as it is on the wire.
template <bool kWide, typename V, typename S>
nlm4_stats Stat(V& v, S& stat) {
  if constexpr (kWide || V::kDecoding) {
    v(stat);
    return stat;
  } else {
    const nlm4_stats wire = ToV1Stat(stat);
    v(wire);
    return wire;
  }
}
template <typename V, typename S>
void Netobj(V& v, S& n) { v(xdr::Bounded(n, kMaxNetobj)); }

template <bool kWide, typename V, typename S>
void Lock(V& v, S& x) {
  v(xdr::Bounded(x.caller_name, kMaxStrLen));
  Netobj(v, x.fh);
  Netobj(v, x.oh);
  v(x.svid);
  Range<kWide>(v, x.l_offset);
  Range<kWide>(v, x.l_len);
}
template <bool kWide, typename V, typename S>
void TestArgs(V& v, S& x) {
  Netobj(v, x.cookie);
  v(x.exclusive);
  Lock<kWide>(v, x.alock);
}
template <bool kWide, typename V, typename S>
void LockArgs(V& v, S& x) {
  Netobj(v, x.cookie);
  v(x.block, x.exclusive);
  Lock<kWide>(v, x.alock);
  v(x.reclaim, x.state);
}
template <bool kWide, typename V, typename S>
void CancArgs(V& v, S& x) {
  Netobj(v, x.cookie);
  v(x.block, x.exclusive);
  Lock<kWide>(v, x.alock);
}
template <bool kWide, typename V, typename S>
void UnlockArgs(V& v, S& x) {
  Netobj(v, x.cookie);
  Lock<kWide>(v, x.alock);
}
template <bool kWide, typename V, typename S>
void Res(V& v, S& x) {
  Netobj(v, x.cookie);
  Stat<kWide>(v, x.stat);
}
template <bool kWide, typename V, typename S>
void TestRes(V& v, S& x) {
  Netobj(v, x.cookie);
  if (Stat<kWide>(v, x.stat) != NLM4_DENIED) return;
  v(x.holder.exclusive, x.holder.svid);
  Netobj(v, x.holder.oh);
  Range<kWide>(v, x.holder.l_offset);
  Range<kWide>(v, x.holder.l_len);
}
template <bool kWide, typename V, typename S>
void ShareRes(V& v, S& x) {
  Netobj(v, x.cookie);
  Stat<kWide>(v, x.stat);
  v(x.sequence);
}

}  // namespace fields

NFS3D_XDR(Void) { v(); }
NFS3D_XDR(nlm4_testargs) { fields::TestArgs<true>(v, x); }
NFS3D_XDR(nlm_testargs) { fields::TestArgs<false>(v, x); }
NFS3D_XDR(nlm4_lockargs) { fields::LockArgs<true>(v, x); }
NFS3D_XDR(nlm_lockargs) { fields::LockArgs<false>(v, x); }
NFS3D_XDR(nlm4_cancargs) { fields::CancArgs<true>(v, x); }
NFS3D_XDR(nlm_cancargs) { fields::CancArgs<false>(v, x); }
NFS3D_XDR(nlm4_unlockargs) { fields::UnlockArgs<true>(v, x); }
NFS3D_XDR(nlm_unlockargs) { fields::UnlockArgs<false>(v, x); }
NFS3D_XDR(nlm4_res) { fields::Res<true>(v, x); }
NFS3D_XDR(nlm_res) { fields::Res<false>(v, x); }
NFS3D_XDR(nlm4_testres) { fields::TestRes<true>(v, x); }
NFS3D_XDR(nlm_testres) { fields::TestRes<false>(v, x); }
NFS3D_XDR(nlm4_shareres) { fields::ShareRes<true>(v, x); }
NFS3D_XDR(nlm_shareres) { fields::ShareRes<false>(v, x); }
// Same shape in every version.
NFS3D_XDR(nlm4_share) {
  v(xdr::Bounded(x.caller_name, kMaxStrLen));
  fields::Netobj(v, x.fh);
  fields::Netobj(v, x.oh);
  v(x.mode, x.access);
}
NFS3D_XDR(nlm4_shareargs) {
  fields::Netobj(v, x.cookie);
  v(x.share, x.reclaim);
}
NFS3D_XDR(nlm4_notify) { v(xdr::Bounded(x.name, kMaxNameLen), x.state); }

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NLM4_CODEC_H_
