#include "nlm/nsm_codec.h"

#include <cstring>

namespace nfs3d::nsm {
namespace {

void DecodeName(xdr::Decoder& d, std::string* out) {
  std::string_view s = d.String(kMaxStrLen);
  out->assign(s.data(), s.size());
}

void DecodePriv(xdr::Decoder& d, std::array<uint8_t, kPrivSize>* priv) {
  absl::Span<const uint8_t> bytes = d.FixedOpaque(kPrivSize);
  if (bytes.size() == kPrivSize) std::memcpy(priv->data(), bytes.data(), kPrivSize);
}

}  // namespace

bool Decode(xdr::Decoder& d, sm_name* a) {
  DecodeName(d, &a->mon_name);
  return d.ok();
}

bool Decode(xdr::Decoder& d, my_id* a) {
  DecodeName(d, &a->my_name);
  a->my_prog = d.I32();
  a->my_vers = d.I32();
  a->my_proc = d.I32();
  return d.ok();
}

bool Decode(xdr::Decoder& d, mon_id* a) {
  DecodeName(d, &a->mon_name);
  return Decode(d, &a->id);
}

bool Decode(xdr::Decoder& d, mon* a) {
  if (!Decode(d, &a->id)) return false;
  DecodePriv(d, &a->priv);
  return d.ok();
}

bool Decode(xdr::Decoder& d, stat_chge* a) {
  DecodeName(d, &a->mon_name);
  a->state = d.I32();
  return d.ok();
}

bool Decode(xdr::Decoder& d, sm_status* a) {
  DecodeName(d, &a->mon_name);
  a->state = d.I32();
  DecodePriv(d, &a->priv);
  return d.ok();
}

void Encode(xdr::Encoder& e, const stat_chge& a) {
  e.String(a.mon_name);
  e.I32(a.state);
}

void Encode(xdr::Encoder& e, const sm_status& a) {
  e.String(a.mon_name);
  e.I32(a.state);
  e.FixedOpaque(a.priv);
}

void Encode(xdr::Encoder& e, const mon& a) {
  e.String(a.id.mon_name);
  e.String(a.id.id.my_name);
  e.I32(a.id.id.my_prog);
  e.I32(a.id.id.my_vers);
  e.I32(a.id.id.my_proc);
  e.FixedOpaque(a.priv);
}

void Encode(xdr::Encoder& e, const sm_stat_res& r) {
  e.U32(r.res_stat);
  e.I32(r.state);
}

void Encode(xdr::Encoder& e, const sm_stat& r) { e.I32(r.state); }

}  // namespace nfs3d::nsm
