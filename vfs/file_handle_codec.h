// Layout and authentication of nfs3d file handles.
//
//   offset  size  field
//   0       1     version (kHandleVersion)
//   1       4     export id, big-endian
//   5       4     kernel handle_type (name_to_handle_at), big-endian
//   9       1     n = length of the kernel f_handle bytes
//   10      n     kernel f_handle bytes
//   10+n    8     MAC: SipHash-2-4 over bytes [0, 10+n), keyed by the server
//                 secret, little-endian
//
// n may be at most kMaxKernelHandle (46) so the whole handle fits in 64 bytes;
// ext4/xfs/tmpfs/btrfs produce 8-28 bytes. The MAC makes handles unforgeable
// and binds them to their export id: changing the id invalidates the MAC.
#ifndef NFS3D_VFS_FILE_HANDLE_CODEC_H_
#define NFS3D_VFS_FILE_HANDLE_CODEC_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "vfs/backend.h"
#include "vfs/siphash.h"
#include "vfs/state_dir.h"

namespace nfs3d::vfs {

inline constexpr uint8_t kHandleVersion = 1;
inline constexpr size_t kHandleHeaderSize = 10;
inline constexpr size_t kHandleMacSize = 8;
inline constexpr size_t kMaxKernelHandle = kMaxHandleSize - kHandleHeaderSize - kHandleMacSize;

struct DecodedHandle {
  uint32_t export_id = 0;
  int32_t handle_type = 0;
  uint8_t kernel_len = 0;
  uint8_t kernel[kMaxKernelHandle] = {};
  absl::Span<const uint8_t> kernel_bytes() const { return {kernel, kernel_len}; }
};

// The handle_type field of a well-formed handle, unauthenticated: enough to
// pick the backend that then decodes (and authenticates) it.
std::optional<int32_t> PeekHandleType(const FileHandle& fh);

class HandleCodec {
 public:
  // The 128-bit SipHash key is the secret's two halves XORed together, so
  // every secret byte matters.
  explicit HandleCodec(const HandleSecret& secret);

  // Fails with EOVERFLOW if the kernel handle is too long to fit.
  absl::StatusOr<FileHandle> Encode(uint32_t export_id, int32_t handle_type,
                                    absl::Span<const uint8_t> kernel_handle) const;
  // kErrBadHandle for a wrong length or version, or a MAC mismatch.
  absl::StatusOr<DecodedHandle> Decode(const FileHandle& fh) const;

 private:
  uint64_t Mac(absl::Span<const uint8_t> bytes) const;
  SipKey key_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_FILE_HANDLE_CODEC_H_
