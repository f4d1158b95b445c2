// Errors from the backend carry the errno that caused them as a Status
// payload, so the protocol layer maps errno -> nfsstat3 in exactly one place
// (nfsd) without string matching. Conditions with no errno of their own
// (bad handle, bad cookie, ...) use the pseudo-errnos below.
#ifndef NFS3D_VFS_VFS_ERROR_H_
#define NFS3D_VFS_VFS_ERROR_H_

#include <string_view>

#include "absl/status/status.h"

namespace nfs3d::vfs {

// Pseudo-errnos above the kernel's range.
inline constexpr int kErrBadHandle = 10001;  // handle malformed or MAC mismatch
inline constexpr int kErrNotSync = 10002;    // SETATTR guard mismatch
inline constexpr int kErrBadCookie = 10003;  // READDIR cookie/verifier no longer valid
inline constexpr int kErrTooSmall = 10005;   // READDIR count too small for one entry
inline constexpr int kErrBadType = 10007;    // MKNOD/CREATE of an unsupported type
inline constexpr int kErrJukebox = 10008;    // temporarily unavailable: try later

// Makes an error Status carrying err (an errno or pseudo-errno above).
absl::Status ErrnoError(int err, std::string_view context);
// The errno carried by status; 0 for OK, EIO for a status without one.
int ErrnoOf(const absl::Status& status);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_VFS_ERROR_H_
