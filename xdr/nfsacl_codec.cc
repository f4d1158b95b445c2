#include "xdr/nfsacl_codec.h"

#include "xdr/nfs3_codec.h"

namespace nfs3d::nfsacl {
namespace {

constexpr size_t kEntrySize = 12;

// The ACLs of a SETACL: those the mask asks to set must be whole.
bool Whole(const acl& a) { return a.count == a.entries.size(); }

}  // namespace

bool Decode(xdr::Decoder& d, acl* a) {
  a->count = d.U32();
  if (!d.ok() || a->count > kMaxEntries) return false;
  const uint32_t n = d.ArrayLength(a->count, kEntrySize);
  if (!d.ok()) return false;
  a->entries.resize(n);
  for (aclent& e : a->entries) {
    e.type = d.U32();
    e.id = d.U32();
    e.perm = d.U32();
  }
  return d.ok();
}

void Encode(xdr::Encoder& e, const acl& a) {
  e.U32(a.count);
  e.U32(static_cast<uint32_t>(a.entries.size()));
  for (const aclent& ent : a.entries) {
    e.U32(ent.type);
    e.U32(ent.id);
    e.U32(ent.perm);
  }
}

bool Decode(xdr::Decoder& d, GETACL3args* a) {
  if (!nfs3::Decode(d, &a->fh)) return false;
  a->mask = d.U32();
  return d.ok();
}

void Encode(xdr::Encoder& e, const GETACL3args& a) {
  nfs3::Encode(e, a.fh);
  e.U32(a.mask);
}

void Encode(xdr::Encoder& e, const GETACL3res& r) {
  e.U32(r.status);
  nfs3::Encode(e, r.attr);
  if (r.status != nfs3::NFS3_OK) return;
  e.U32(r.mask);
  Encode(e, r.access);
  Encode(e, r.default_acl);
}

bool Decode(xdr::Decoder& d, SETACL3args* a) {
  if (!nfs3::Decode(d, &a->fh)) return false;
  a->mask = d.U32();
  if (!d.ok() || (a->mask & ~kMaskAll) != 0) return false;
  if (!Decode(d, &a->access) || !Decode(d, &a->default_acl)) return false;
  if ((a->mask & kAcl) && !Whole(a->access)) return false;
  return !(a->mask & kDfAcl) || Whole(a->default_acl);
}

void Encode(xdr::Encoder& e, const SETACL3args& a) {
  nfs3::Encode(e, a.fh);
  e.U32(a.mask);
  Encode(e, a.access);
  Encode(e, a.default_acl);
}

void Encode(xdr::Encoder& e, const SETACL3res& r) {
  e.U32(r.status);
  nfs3::Encode(e, r.attr);
}

}  // namespace nfs3d::nfsacl
