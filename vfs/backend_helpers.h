// What every backend needs alike: file types from mode bits, NFS times,
// the name rules knfsd applies, and a random 64-bit value (write verifiers).
#ifndef NFS3D_VFS_BACKEND_HELPERS_H_
#define NFS3D_VFS_BACKEND_HELPERS_H_

#include <sys/statvfs.h>
#include <time.h>

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

#include "vfs/backend.h"

namespace nfs3d::vfs {

inline constexpr size_t kNameMax = 255;  // longest name, as Linux file systems

// The file type in mode's S_IFMT bits (regular for anything unknown).
FileType FileTypeOf(uint32_t mode);

inline Time ToTime(const struct timespec& ts) {
  return Time{static_cast<uint32_t>(ts.tv_sec), static_cast<uint32_t>(ts.tv_nsec)};
}

inline bool IsDotName(std::string_view name) { return name == "." || name == ".."; }

// A client-supplied name: "" or names with '/' or NUL give EACCES (like the
// kernel's lookup_one_len, which knfsd uses), longer than kNameMax
// ENAMETOOLONG.
absl::Status CheckName(std::string_view name);
// For operations that create a name: also EEXIST for "." and "..", which
// always exist.
absl::Status CheckNewName(std::string_view name);

// READ's eof: whether a read of `asked` bytes at `offset` that returned
// `got` reached the end of the file, whose size looked at after the read is
// `size_after`. A read that returned nothing of a non-empty request is the
// end even when the file has grown since (a WRITE that ran beside it): NFS
// clients take count 0 without eof as an I/O error (Linux: EIO, the short
// write of issue 46's soak), and knfsd's nfsd_eof_on_read has the same rule.
inline bool ReadReachedEnd(uint64_t offset, uint64_t asked, uint64_t got, uint64_t size_after) {
  return (asked > 0 && got == 0) || offset + got >= size_after;
}

// FSSTAT's figures from a statvfs.
FsStat ToFsStat(const struct statvfs& sv);

// From getrandom(), or the clock and pid if that fails.
uint64_t RandomU64();

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_BACKEND_HELPERS_H_
