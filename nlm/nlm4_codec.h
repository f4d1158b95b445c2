// The NLM types of nlm4_types.h described once (xdr/describe.h) for version
// 4 and for 1/3 (32-bit ranges, and only the first five status codes), for
// the server and for the client side of GRANTED and the *_RES callbacks.
#ifndef NFS3D_NLM_NLM4_CODEC_H_
#define NFS3D_NLM_NLM4_CODEC_H_

#include "nlm/nlm4_types.h"
#include "xdr/describe.h"

namespace nfs3d::nlm {

constexpr xdr::EnumRange XdrRange(nlm4_stats) { return {NLM4_GRANTED, NLM4_FAILED}; }
constexpr xdr::EnumRange XdrRange(fsh4_mode) { return {fsm_DN, fsm_DRW}; }
constexpr xdr::EnumRange XdrRange(fsh4_access) { return {fsa_NONE, fsa_RW}; }

// The status a v1/v3 peer understands.
inline nlm4_stats ToV1Stat(nlm4_stats s) {
  if (s <= NLM4_DENIED_GRACE_PERIOD) return s;
  return s == NLM4_FAILED ? NLM4_DENIED_NOLOCKS : NLM4_DENIED;
}

// Describes a v4 type and its v1/v3 twin at once; kWide is true for v4.
// T4 and T1 are type names, which cannot be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define NFS3D_NLM_XDR(T4, T1)                                                              \
  template <typename V, typename S, bool kWide = std::same_as<std::remove_const_t<S>, T4>> \
  requires xdr::OneOf<std::remove_const_t<S>, T4, T1>                                      \
  void Xdr(V& v, S& x)
// NOLINTEND(bugprone-macro-parentheses)

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
void Netobj(V& v, S& n) {
  v(xdr::Bounded(n, kMaxNetobj));
}

template <bool kWide, typename V, typename S>
void Lock(V& v, S& x) {
  v(xdr::Bounded(x.caller_name, kMaxStrLen));
  Netobj(v, x.fh);
  Netobj(v, x.oh);
  v(x.svid);
  Range<kWide>(v, x.l_offset);
  Range<kWide>(v, x.l_len);
}

}  // namespace fields

NFS3D_XDR(Void) { v(); }
NFS3D_NLM_XDR(nlm4_testargs, nlm_testargs) {
  fields::Netobj(v, x.cookie);
  v(x.exclusive);
  fields::Lock<kWide>(v, x.alock);
}
NFS3D_NLM_XDR(nlm4_lockargs, nlm_lockargs) {
  fields::Netobj(v, x.cookie);
  v(x.block, x.exclusive);
  fields::Lock<kWide>(v, x.alock);
  v(x.reclaim, x.state);
}
NFS3D_NLM_XDR(nlm4_cancargs, nlm_cancargs) {
  fields::Netobj(v, x.cookie);
  v(x.block, x.exclusive);
  fields::Lock<kWide>(v, x.alock);
}
NFS3D_NLM_XDR(nlm4_unlockargs, nlm_unlockargs) {
  fields::Netobj(v, x.cookie);
  fields::Lock<kWide>(v, x.alock);
}
NFS3D_NLM_XDR(nlm4_res, nlm_res) {
  fields::Netobj(v, x.cookie);
  fields::Stat<kWide>(v, x.stat);
}
NFS3D_NLM_XDR(nlm4_testres, nlm_testres) {
  fields::Netobj(v, x.cookie);
  if (fields::Stat<kWide>(v, x.stat) != NLM4_DENIED) return;
  v(x.holder.exclusive, x.holder.svid);
  fields::Netobj(v, x.holder.oh);
  fields::Range<kWide>(v, x.holder.l_offset);
  fields::Range<kWide>(v, x.holder.l_len);
}
NFS3D_NLM_XDR(nlm4_shareres, nlm_shareres) {
  fields::Netobj(v, x.cookie);
  fields::Stat<kWide>(v, x.stat);
  v(x.sequence);
}
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
