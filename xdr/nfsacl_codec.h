// XDR codecs for NFSACL v3 (nfsacl_types.h). Decode returns false on
// malformed input (GARBAGE_ARGS): an ACL with more than kMaxEntries entries,
// more entries than its count, a SETACL mask with unknown bits, or an ACL
// the mask asks to set whose count and entries differ (as Linux decodes
// them). Whether the entries make a valid ACL is the procedure's question.
#ifndef NFS3D_XDR_NFSACL_CODEC_H_
#define NFS3D_XDR_NFSACL_CODEC_H_

#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/nfsacl_types.h"

namespace nfs3d::nfsacl {

bool Decode(xdr::Decoder& d, acl* a);
void Encode(xdr::Encoder& e, const acl& a);

bool Decode(xdr::Decoder& d, GETACL3args* a);
void Encode(xdr::Encoder& e, const GETACL3args& a);  // client side (tests)
void Encode(xdr::Encoder& e, const GETACL3res& r);
bool Decode(xdr::Decoder& d, SETACL3args* a);
void Encode(xdr::Encoder& e, const SETACL3args& a);  // client side (tests)
void Encode(xdr::Encoder& e, const SETACL3res& r);

// Largest encoded GETACL3res: two full ACLs.
inline constexpr uint32_t kMaxGetaclReply = 4 + 4 + 84 + 4 + 2 * (8 + 12 * kMaxEntries);

}  // namespace nfs3d::nfsacl

#endif  // NFS3D_XDR_NFSACL_CODEC_H_
