#include "xdr/mount3_codec.h"

#include "xdr/nfs3_codec.h"

namespace nfs3d::mount3 {

bool Decode(xdr::Decoder& d, DirpathArgs* a) {
  a->dirpath = d.String(kMntPathLen);
  return d.ok();
}

void Encode(xdr::Encoder& e, const MountRes3& r) {
  e.U32(r.status);
  if (r.status != MNT3_OK) return;
  nfs3::Encode(e, r.fhandle);  // fhandle3 is opaque<FHSIZE3>, as nfs_fh3
  e.U32(static_cast<uint32_t>(r.auth_flavors.size()));
  for (uint32_t flavor : r.auth_flavors) e.U32(flavor);
}

void Encode(xdr::Encoder& e, const MountRes1& r) {
  e.U32(r.status);
  if (r.status == 0) e.FixedOpaque(absl::Span<const uint8_t>(r.fhandle, kFhSizeV1));
}

// mountlist and exports are XDR optional-data chains: a TRUE before each
// element, FALSE at the end.
void Encode(xdr::Encoder& e, const MountList& l) {
  for (const MountEntry& m : l.entries) {
    e.Bool(true);
    e.String(m.hostname);
    e.String(m.directory);
  }
  e.Bool(false);
}

void Encode(xdr::Encoder& e, const ExportList& l) {
  for (const ExportEntry& x : l.entries) {
    e.Bool(true);
    e.String(x.dir);
    for (const std::string& group : x.groups) {
      e.Bool(true);
      e.String(group);
    }
    e.Bool(false);
  }
  e.Bool(false);
}

}  // namespace nfs3d::mount3
