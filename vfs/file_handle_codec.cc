#include "vfs/file_handle_codec.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

// FileHandle's out-of-line members (declared in backend.h).
FileHandle FileHandle::FromBytes(absl::Span<const uint8_t> bytes) {
  FileHandle fh;
  fh.len = static_cast<uint8_t>(std::min(bytes.size(), kMaxHandleSize));
  if (fh.len > 0) std::memcpy(fh.data, bytes.data(), fh.len);
  return fh;
}

bool operator==(const FileHandle& a, const FileHandle& b) {
  return a.len == b.len && std::memcmp(a.data, b.data, a.len) == 0;
}

namespace {

void PutBe32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

uint32_t GetBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

HandleCodec::HandleCodec(const HandleSecret& secret) {
  for (size_t i = 0; i < key_.size(); ++i) key_[i] = secret[i] ^ secret[i + key_.size()];
}

uint64_t HandleCodec::Mac(absl::Span<const uint8_t> bytes) const { return SipHash24(key_, bytes); }

absl::StatusOr<FileHandle> HandleCodec::Encode(uint32_t export_id, int32_t handle_type,
                                               absl::Span<const uint8_t> kernel_handle) const {
  if (kernel_handle.size() > kMaxKernelHandle) {
    return ErrnoError(EOVERFLOW, "kernel file handle too long");
  }
  FileHandle fh;
  fh.data[0] = kHandleVersion;
  PutBe32(fh.data + 1, export_id);
  PutBe32(fh.data + 5, static_cast<uint32_t>(handle_type));
  fh.data[9] = static_cast<uint8_t>(kernel_handle.size());
  if (!kernel_handle.empty()) {
    std::memcpy(fh.data + kHandleHeaderSize, kernel_handle.data(), kernel_handle.size());
  }
  size_t body = kHandleHeaderSize + kernel_handle.size();
  uint64_t mac = Mac({fh.data, body});
  for (size_t i = 0; i < kHandleMacSize; ++i)
    fh.data[body + i] = static_cast<uint8_t>(mac >> (8 * i));
  fh.len = static_cast<uint8_t>(body + kHandleMacSize);
  return fh;
}

std::optional<int32_t> PeekHandleType(const FileHandle& fh) {
  if (fh.len < kHandleHeaderSize + kHandleMacSize || fh.data[0] != kHandleVersion) {
    return std::nullopt;
  }
  return static_cast<int32_t>(GetBe32(fh.data + 5));
}

absl::StatusOr<DecodedHandle> HandleCodec::Decode(const FileHandle& fh) const {
  if (fh.len < kHandleHeaderSize + kHandleMacSize || fh.len > kMaxHandleSize ||
      fh.data[0] != kHandleVersion) {
    return ErrnoError(kErrBadHandle, "malformed file handle");
  }
  size_t kernel_len = fh.data[9];
  if (kernel_len > kMaxKernelHandle || fh.len != kHandleHeaderSize + kernel_len + kHandleMacSize) {
    return ErrnoError(kErrBadHandle, "malformed file handle");
  }
  size_t body = kHandleHeaderSize + kernel_len;
  uint64_t mac = Mac({fh.data, body});
  // Constant-time comparison: no early exit that would time-leak the MAC.
  uint8_t diff = 0;
  for (size_t i = 0; i < kHandleMacSize; ++i) {
    diff |= static_cast<uint8_t>(fh.data[body + i] ^ static_cast<uint8_t>(mac >> (8 * i)));
  }
  if (diff != 0) return ErrnoError(kErrBadHandle, "file handle MAC mismatch");
  DecodedHandle out;
  out.export_id = GetBe32(fh.data + 1);
  out.handle_type = static_cast<int32_t>(GetBe32(fh.data + 5));
  out.kernel_len = static_cast<uint8_t>(kernel_len);
  std::memcpy(out.kernel, fh.data + kHandleHeaderSize, kernel_len);
  return out;
}

}  // namespace nfs3d::vfs
