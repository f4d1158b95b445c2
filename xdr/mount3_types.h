// MOUNT protocol types: version 3 (RFC 1813 Appendix I) and version 1 (RFC
// 1094 Appendix A, same procedures with a fixed 32-byte fhandle).
#ifndef NFS3D_XDR_MOUNT3_TYPES_H_
#define NFS3D_XDR_MOUNT3_TYPES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xdr/nfs3_types.h"

namespace nfs3d::mount3 {

inline constexpr uint32_t kProgram = 100005;
inline constexpr uint32_t kVersion1 = 1;
inline constexpr uint32_t kVersion3 = 3;
inline constexpr uint32_t kMntPathLen = 1024;  // MNTPATHLEN
inline constexpr uint32_t kMntNameLen = 255;   // MNTNAMLEN
inline constexpr uint32_t kFhSizeV1 = 32;      // FHSIZE (v1 fhandle)

enum Proc : uint32_t {
  kNull = 0,
  kMnt = 1,
  kDump = 2,
  kUmnt = 3,
  kUmntAll = 4,
  kExport = 5,
  kNumProcs = 6,
};

// A table, one status a line (clang-format 14 reflows it differently
// on every run).
// clang-format off
#define NFS3D_MOUNTSTAT3(X)     \
  X(MNT3_OK, 0)                 \
  X(MNT3ERR_PERM, 1)            \
  X(MNT3ERR_NOENT, 2)           \
  X(MNT3ERR_IO, 5)              \
  X(MNT3ERR_ACCES, 13)          \
  X(MNT3ERR_NOTDIR, 20)         \
  X(MNT3ERR_INVAL, 22)          \
  X(MNT3ERR_NAMETOOLONG, 63)    \
  X(MNT3ERR_NOTSUPP, 10004)     \
  X(MNT3ERR_SERVERFAULT, 10006)
NFS3D_STATUS_ENUM(mountstat3, NFS3D_MOUNTSTAT3, "MNT3ERR_(unknown)")
// clang-format on

// dirpath argument of MNT and UMNT.
struct DirpathArgs {
  std::string_view dirpath;
};

struct MountRes3 {
  mountstat3 status = MNT3_OK;
  nfs3::nfs_fh3 fhandle;
  std::vector<uint32_t> auth_flavors;
};

// MNT v1 result (fhstatus): status, then a 32-byte fhandle on success. nfs3d
// hands v1 clients a v3 handle zero-padded to 32 bytes when it fits.
struct MountRes1 {
  uint32_t status = 0;
  uint8_t fhandle[kFhSizeV1] = {};
};

// DUMP result: list of (hostname, directory).
struct MountEntry {
  std::string hostname;
  std::string directory;
};
struct MountList {
  std::vector<MountEntry> entries;
};

// EXPORT result: list of (directory, groups).
struct ExportEntry {
  std::string dir;
  std::vector<std::string> groups;
};
struct ExportList {
  std::vector<ExportEntry> entries;
};

}  // namespace nfs3d::mount3

#endif  // NFS3D_XDR_MOUNT3_TYPES_H_
