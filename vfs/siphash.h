// SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast short-input PRF"):
// a keyed 64-bit MAC used to authenticate file handles.
#ifndef NFS3D_VFS_SIPHASH_H_
#define NFS3D_VFS_SIPHASH_H_

#include <array>
#include <cstdint>

#include "absl/types/span.h"

namespace nfs3d::vfs {

using SipKey = std::array<uint8_t, 16>;

// SipHash-2-4 of data under key (the key's bytes are k0 || k1, little-endian).
uint64_t SipHash24(const SipKey& key, absl::Span<const uint8_t> data);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_SIPHASH_H_
