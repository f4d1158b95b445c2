// libFuzzer target for the NFSACL decoders: the first byte picks GETACL or
// SETACL arguments (or the system.posix_acl_* attribute format), the rest is
// the body. A decoded ACL goes on through the conversion the SETACL
// procedure applies and the attribute encoding the backend writes, which
// must read back as the same ACL. Nothing may read past the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nfsd/nfsacl_program.h"
#include "vfs/posix_acl.h"
#include "xdr/nfsacl_codec.h"

namespace nfs3d {
namespace {

void CheckAcl(const nfsacl::acl& wire) {
  if (wire.count > nfsacl::kMaxEntries || wire.entries.size() > wire.count) std::abort();
  absl::StatusOr<vfs::Acl> acl = nfsd::FromWireAcl(wire);
  if (!acl.ok()) return;
  if (acl->size() > wire.entries.size()) std::abort();
  std::optional<vfs::Acl> back = vfs::DecodeAclXattr(vfs::EncodeAclXattr(*acl));
  if (!back) std::abort();
  for (size_t i = 0; i < acl->size(); ++i) {
    if ((*back)[i].tag != (*acl)[i].tag || (*back)[i].perm != ((*acl)[i].perm & 0xffff)) {
      std::abort();
    }
  }
  nfsacl::acl again = nfsd::ToWireAcl(*acl, true, false, 1, 2);
  if (again.entries.size() != again.count) std::abort();
}

void Fuzz(const uint8_t* data, size_t size) {
  if (size == 0) return;
  xdr::Decoder d(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      nfsacl::GETACL3args a;
      if (Decode(d, &a) && a.fh.len > nfs3::kFhSize) std::abort();
      break;
    }
    case 1: {
      nfsacl::SETACL3args a;
      if (!Decode(d, &a)) break;
      if ((a.mask & ~nfsacl::kMaskAll) != 0) std::abort();
      CheckAcl(a.access);
      CheckAcl(a.default_acl);
      break;
    }
    case 2: {
      std::string_view value(reinterpret_cast<const char*>(data + 1), size - 1);
      std::optional<vfs::Acl> acl = vfs::DecodeAclXattr(value);
      if (acl && vfs::EncodeAclXattr(*acl).size() != value.size()) std::abort();
      break;
    }
  }
  if (d.position() > size - 1) std::abort();
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::Fuzz(data, size);
  return 0;
}
