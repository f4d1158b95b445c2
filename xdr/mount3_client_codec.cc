#include "xdr/mount3_client_codec.h"

#include <string>

#include "xdr/nfs3_codec.h"

namespace nfs3d::mount3 {
namespace {

// Bounds for lists whose length the wire does not announce.
constexpr size_t kMaxListEntries = 1u << 16;
constexpr uint32_t kMaxAuthFlavors = 64;

std::string DecodeString(xdr::Decoder& d, uint32_t max) { return std::string(d.String(max)); }

}  // namespace

void Encode(xdr::Encoder& e, const DirpathArgs& a) { e.String(a.dirpath); }

bool Decode(xdr::Decoder& d, MountRes3* r) {
  r->status = static_cast<mountstat3>(d.U32());
  r->auth_flavors.clear();
  if (!d.ok() || r->status != MNT3_OK) return d.ok();
  if (!nfs3::Decode(d, &r->fhandle)) return false;
  uint32_t n = d.ArrayLength(kMaxAuthFlavors);
  for (uint32_t i = 0; i < n && d.ok(); ++i) r->auth_flavors.push_back(d.U32());
  return d.ok();
}

bool Decode(xdr::Decoder& d, MountList* l) {
  l->entries.clear();
  while (d.Bool()) {
    if (l->entries.size() >= kMaxListEntries) d.Fail();
    if (!d.ok()) return false;
    MountEntry& m = l->entries.emplace_back();
    m.hostname = DecodeString(d, kMntNameLen);
    m.directory = DecodeString(d, kMntPathLen);
  }
  return d.ok();
}

bool Decode(xdr::Decoder& d, ExportList* l) {
  l->entries.clear();
  while (d.Bool()) {
    if (l->entries.size() >= kMaxListEntries) d.Fail();
    if (!d.ok()) return false;
    ExportEntry& x = l->entries.emplace_back();
    x.dir = DecodeString(d, kMntPathLen);
    while (d.Bool()) {
      if (x.groups.size() >= kMaxListEntries) d.Fail();
      if (!d.ok()) return false;
      x.groups.push_back(DecodeString(d, kMntNameLen));
    }
  }
  return d.ok();
}

const char* StatusName(mountstat3 status) {
  switch (status) {
    case MNT3_OK: return "MNT3_OK";
    case MNT3ERR_PERM: return "MNT3ERR_PERM";
    case MNT3ERR_NOENT: return "MNT3ERR_NOENT";
    case MNT3ERR_IO: return "MNT3ERR_IO";
    case MNT3ERR_ACCES: return "MNT3ERR_ACCES";
    case MNT3ERR_NOTDIR: return "MNT3ERR_NOTDIR";
    case MNT3ERR_INVAL: return "MNT3ERR_INVAL";
    case MNT3ERR_NAMETOOLONG: return "MNT3ERR_NAMETOOLONG";
    case MNT3ERR_NOTSUPP: return "MNT3ERR_NOTSUPP";
    case MNT3ERR_SERVERFAULT: return "MNT3ERR_SERVERFAULT";
  }
  return "MNT3ERR_(unknown)";
}

}  // namespace nfs3d::mount3
