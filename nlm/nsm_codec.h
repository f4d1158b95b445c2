// XDR codecs for the NSM types (nsm_types.h), server and client direction.
#ifndef NFS3D_NLM_NSM_CODEC_H_
#define NFS3D_NLM_NSM_CODEC_H_

#include "nlm/nsm_types.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::nsm {

bool Decode(xdr::Decoder& d, sm_name* a);
bool Decode(xdr::Decoder& d, my_id* a);
bool Decode(xdr::Decoder& d, mon_id* a);
bool Decode(xdr::Decoder& d, mon* a);
bool Decode(xdr::Decoder& d, stat_chge* a);
bool Decode(xdr::Decoder& d, sm_status* a);
void Encode(xdr::Encoder& e, const stat_chge& a);
void Encode(xdr::Encoder& e, const sm_status& a);
void Encode(xdr::Encoder& e, const mon& a);
void Encode(xdr::Encoder& e, const sm_stat_res& r);
void Encode(xdr::Encoder& e, const sm_stat& r);

}  // namespace nfs3d::nsm

#endif  // NFS3D_NLM_NSM_CODEC_H_
