// XDR codecs for the NLM types (nlm4_types.h), both directions: nfs3d decodes
// calls and encodes replies as a server, and encodes GRANTED / *_RES calls
// and decodes their replies as a client of the peer's lock manager. Found by
// argument-dependent lookup (rpc::TypedProc).
#ifndef NFS3D_NLM_NLM4_CODEC_H_
#define NFS3D_NLM_NLM4_CODEC_H_

#include "nlm/nlm4_types.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::nlm {

bool Decode(xdr::Decoder& d, Void* v);
void Encode(xdr::Encoder& e, const Void& v);

// Version 4 (64-bit ranges).
bool Decode(xdr::Decoder& d, nlm4_testargs* a);
bool Decode(xdr::Decoder& d, nlm4_lockargs* a);
bool Decode(xdr::Decoder& d, nlm4_cancargs* a);
bool Decode(xdr::Decoder& d, nlm4_unlockargs* a);
bool Decode(xdr::Decoder& d, nlm4_shareargs* a);  // same shape in every version
bool Decode(xdr::Decoder& d, nlm4_notify* a);      // same shape in every version
bool Decode(xdr::Decoder& d, nlm4_res* r);
bool Decode(xdr::Decoder& d, nlm4_testres* r);
void Encode(xdr::Encoder& e, const nlm4_testargs& a);
void Encode(xdr::Encoder& e, const nlm4_lockargs& a);
void Encode(xdr::Encoder& e, const nlm4_cancargs& a);
void Encode(xdr::Encoder& e, const nlm4_unlockargs& a);
void Encode(xdr::Encoder& e, const nlm4_shareargs& a);
void Encode(xdr::Encoder& e, const nlm4_notify& a);
void Encode(xdr::Encoder& e, const nlm4_res& r);
void Encode(xdr::Encoder& e, const nlm4_testres& r);
void Encode(xdr::Encoder& e, const nlm4_shareres& r);

// Versions 1 and 3: 32-bit offsets and lengths (length 0 still means "to the
// end"). Status codes above NLM4_DENIED_GRACE_PERIOD do not exist there and
// go out as NLM4_DENIED (NLM4_DENIED_NOLOCKS for NLM4_FAILED).
bool Decode(xdr::Decoder& d, nlm_testargs* a);
bool Decode(xdr::Decoder& d, nlm_lockargs* a);
bool Decode(xdr::Decoder& d, nlm_cancargs* a);
bool Decode(xdr::Decoder& d, nlm_unlockargs* a);
void Encode(xdr::Encoder& e, const nlm_testargs& a);
void Encode(xdr::Encoder& e, const nlm_lockargs& a);
void Encode(xdr::Encoder& e, const nlm_cancargs& a);
void Encode(xdr::Encoder& e, const nlm_unlockargs& a);
void Encode(xdr::Encoder& e, const nlm_res& r);
void Encode(xdr::Encoder& e, const nlm_testres& r);
void Encode(xdr::Encoder& e, const nlm_shareres& r);
bool Decode(xdr::Decoder& d, nlm_res* r);

// The status a v1/v3 peer understands.
nlm4_stats ToV1Stat(nlm4_stats s);

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NLM4_CODEC_H_
