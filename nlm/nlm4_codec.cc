#include "nlm/nlm4_codec.h"

#include <string_view>

namespace nfs3d::nlm {
namespace {

void DecodeNetobj(xdr::Decoder& d, netobj* out, uint32_t max = kMaxNetobj) {
  absl::Span<const uint8_t> bytes = d.Opaque(max);
  out->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void EncodeNetobj(xdr::Encoder& e, const netobj& n) {
  e.Opaque(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(n.data()), n.size()));
}

// The range fields are the only difference between v4 and v1/v3.
template <bool kWide>
uint64_t DecodeRangeField(xdr::Decoder& d) {
  return kWide ? d.U64() : d.U32();
}

template <bool kWide>
void EncodeRangeField(xdr::Encoder& e, uint64_t v) {
  if (kWide) {
    e.U64(v);
  } else {
    e.U32(static_cast<uint32_t>(v));
  }
}

template <bool kWide>
void DecodeLock(xdr::Decoder& d, nlm4_lock* l) {
  DecodeNetobj(d, &l->caller_name, kMaxStrLen);
  DecodeNetobj(d, &l->fh);
  DecodeNetobj(d, &l->oh);
  l->svid = d.I32();
  l->l_offset = DecodeRangeField<kWide>(d);
  l->l_len = DecodeRangeField<kWide>(d);
}

template <bool kWide>
void EncodeLock(xdr::Encoder& e, const nlm4_lock& l) {
  EncodeNetobj(e, l.caller_name);
  EncodeNetobj(e, l.fh);
  EncodeNetobj(e, l.oh);
  e.I32(l.svid);
  EncodeRangeField<kWide>(e, l.l_offset);
  EncodeRangeField<kWide>(e, l.l_len);
}

template <bool kWide>
bool DecodeTestArgs(xdr::Decoder& d, nlm4_testargs* a) {
  DecodeNetobj(d, &a->cookie);
  a->exclusive = d.Bool();
  DecodeLock<kWide>(d, &a->alock);
  return d.ok();
}

template <bool kWide>
void EncodeTestArgs(xdr::Encoder& e, const nlm4_testargs& a) {
  EncodeNetobj(e, a.cookie);
  e.Bool(a.exclusive);
  EncodeLock<kWide>(e, a.alock);
}

template <bool kWide>
bool DecodeLockArgs(xdr::Decoder& d, nlm4_lockargs* a) {
  DecodeNetobj(d, &a->cookie);
  a->block = d.Bool();
  a->exclusive = d.Bool();
  DecodeLock<kWide>(d, &a->alock);
  a->reclaim = d.Bool();
  a->state = d.I32();
  return d.ok();
}

template <bool kWide>
bool DecodeCancArgs(xdr::Decoder& d, nlm4_cancargs* a) {
  DecodeNetobj(d, &a->cookie);
  a->block = d.Bool();
  a->exclusive = d.Bool();
  DecodeLock<kWide>(d, &a->alock);
  return d.ok();
}

template <bool kWide>
bool DecodeUnlockArgs(xdr::Decoder& d, nlm4_unlockargs* a) {
  DecodeNetobj(d, &a->cookie);
  DecodeLock<kWide>(d, &a->alock);
  return d.ok();
}

template <bool kWide>
void EncodeLockArgs(xdr::Encoder& e, const nlm4_lockargs& a) {
  EncodeNetobj(e, a.cookie);
  e.Bool(a.block);
  e.Bool(a.exclusive);
  EncodeLock<kWide>(e, a.alock);
  e.Bool(a.reclaim);
  e.I32(a.state);
}

template <bool kWide>
void EncodeCancArgs(xdr::Encoder& e, const nlm4_cancargs& a) {
  EncodeNetobj(e, a.cookie);
  e.Bool(a.block);
  e.Bool(a.exclusive);
  EncodeLock<kWide>(e, a.alock);
}

template <bool kWide>
void EncodeUnlockArgs(xdr::Encoder& e, const nlm4_unlockargs& a) {
  EncodeNetobj(e, a.cookie);
  EncodeLock<kWide>(e, a.alock);
}

template <bool kWide>
void EncodeTestRes(xdr::Encoder& e, const nlm4_testres& r, nlm4_stats stat) {
  EncodeNetobj(e, r.cookie);
  e.U32(stat);
  if (stat != NLM4_DENIED) return;
  e.Bool(r.holder.exclusive);
  e.I32(r.holder.svid);
  EncodeNetobj(e, r.holder.oh);
  EncodeRangeField<kWide>(e, r.holder.l_offset);
  EncodeRangeField<kWide>(e, r.holder.l_len);
}

bool DecodeStat(xdr::Decoder& d, nlm4_stats* s) {
  uint32_t v = d.U32();
  if (v > NLM4_FAILED) d.Fail();
  *s = static_cast<nlm4_stats>(v);
  return d.ok();
}

}  // namespace

nlm4_stats ToV1Stat(nlm4_stats s) {
  if (s <= NLM4_DENIED_GRACE_PERIOD) return s;
  return s == NLM4_FAILED ? NLM4_DENIED_NOLOCKS : NLM4_DENIED;
}

bool Decode(xdr::Decoder& d, Void*) { return d.ok(); }
void Encode(xdr::Encoder&, const Void&) {}

bool Decode(xdr::Decoder& d, nlm4_testargs* a) { return DecodeTestArgs<true>(d, a); }
bool Decode(xdr::Decoder& d, nlm4_lockargs* a) { return DecodeLockArgs<true>(d, a); }
bool Decode(xdr::Decoder& d, nlm4_cancargs* a) { return DecodeCancArgs<true>(d, a); }
bool Decode(xdr::Decoder& d, nlm4_unlockargs* a) { return DecodeUnlockArgs<true>(d, a); }
bool Decode(xdr::Decoder& d, nlm_testargs* a) { return DecodeTestArgs<false>(d, a); }
bool Decode(xdr::Decoder& d, nlm_lockargs* a) { return DecodeLockArgs<false>(d, a); }
bool Decode(xdr::Decoder& d, nlm_cancargs* a) { return DecodeCancArgs<false>(d, a); }
bool Decode(xdr::Decoder& d, nlm_unlockargs* a) { return DecodeUnlockArgs<false>(d, a); }

bool Decode(xdr::Decoder& d, nlm4_shareargs* a) {
  DecodeNetobj(d, &a->cookie);
  DecodeNetobj(d, &a->share.caller_name, kMaxStrLen);
  DecodeNetobj(d, &a->share.fh);
  DecodeNetobj(d, &a->share.oh);
  uint32_t mode = d.U32();
  uint32_t access = d.U32();
  if (mode > fsm_DRW || access > fsa_RW) d.Fail();
  a->share.mode = static_cast<fsh4_mode>(mode);
  a->share.access = static_cast<fsh4_access>(access);
  a->reclaim = d.Bool();
  return d.ok();
}

bool Decode(xdr::Decoder& d, nlm4_notify* a) {
  DecodeNetobj(d, &a->name, kMaxNameLen);
  a->state = d.I32();
  return d.ok();
}

bool Decode(xdr::Decoder& d, nlm4_res* r) {
  DecodeNetobj(d, &r->cookie);
  return DecodeStat(d, &r->stat);
}

bool Decode(xdr::Decoder& d, nlm_res* r) { return Decode(d, static_cast<nlm4_res*>(r)); }

bool Decode(xdr::Decoder& d, nlm4_testres* r) {
  DecodeNetobj(d, &r->cookie);
  if (!DecodeStat(d, &r->stat)) return false;
  if (r->stat == NLM4_DENIED) {
    r->holder.exclusive = d.Bool();
    r->holder.svid = d.I32();
    DecodeNetobj(d, &r->holder.oh);
    r->holder.l_offset = d.U64();
    r->holder.l_len = d.U64();
  }
  return d.ok();
}

void Encode(xdr::Encoder& e, const nlm4_testargs& a) { EncodeTestArgs<true>(e, a); }
void Encode(xdr::Encoder& e, const nlm_testargs& a) { EncodeTestArgs<false>(e, a); }

void Encode(xdr::Encoder& e, const nlm4_lockargs& a) { EncodeLockArgs<true>(e, a); }
void Encode(xdr::Encoder& e, const nlm_lockargs& a) { EncodeLockArgs<false>(e, a); }
void Encode(xdr::Encoder& e, const nlm4_cancargs& a) { EncodeCancArgs<true>(e, a); }
void Encode(xdr::Encoder& e, const nlm_cancargs& a) { EncodeCancArgs<false>(e, a); }
void Encode(xdr::Encoder& e, const nlm4_unlockargs& a) { EncodeUnlockArgs<true>(e, a); }
void Encode(xdr::Encoder& e, const nlm_unlockargs& a) { EncodeUnlockArgs<false>(e, a); }

void Encode(xdr::Encoder& e, const nlm4_shareargs& a) {
  EncodeNetobj(e, a.cookie);
  EncodeNetobj(e, a.share.caller_name);
  EncodeNetobj(e, a.share.fh);
  EncodeNetobj(e, a.share.oh);
  e.U32(a.share.mode);
  e.U32(a.share.access);
  e.Bool(a.reclaim);
}

void Encode(xdr::Encoder& e, const nlm4_notify& a) {
  EncodeNetobj(e, a.name);
  e.I32(a.state);
}

void Encode(xdr::Encoder& e, const nlm4_res& r) {
  EncodeNetobj(e, r.cookie);
  e.U32(r.stat);
}

void Encode(xdr::Encoder& e, const nlm_res& r) {
  EncodeNetobj(e, r.cookie);
  e.U32(ToV1Stat(r.stat));
}

void Encode(xdr::Encoder& e, const nlm4_testres& r) { EncodeTestRes<true>(e, r, r.stat); }
void Encode(xdr::Encoder& e, const nlm_testres& r) {
  EncodeTestRes<false>(e, r, ToV1Stat(r.stat));
}

void Encode(xdr::Encoder& e, const nlm4_shareres& r) {
  EncodeNetobj(e, r.cookie);
  e.U32(r.stat);
  e.I32(r.sequence);
}

void Encode(xdr::Encoder& e, const nlm_shareres& r) {
  EncodeNetobj(e, r.cookie);
  e.U32(ToV1Stat(r.stat));
  e.I32(r.sequence);
}

}  // namespace nfs3d::nlm
