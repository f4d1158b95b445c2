// NFS version 3 protocol types (RFC 1813 §2.5 and §3). Names follow the RFC
// so they can be checked against it. Decoded arguments borrow from the call
// message (string_view/Span): they are valid only while the call runs.
#ifndef NFS3D_XDR_NFS3_TYPES_H_
#define NFS3D_XDR_NFS3_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace nfs3d::nfs3 {

inline constexpr uint32_t kProgram = 100003;
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kFhSize = 64;         // NFS3_FHSIZE
inline constexpr uint32_t kCookieVerfSize = 8;  // NFS3_COOKIEVERFSIZE
inline constexpr uint32_t kCreateVerfSize = 8;  // NFS3_CREATEVERFSIZE
inline constexpr uint32_t kWriteVerfSize = 8;   // NFS3_WRITEVERFSIZE
inline constexpr uint32_t kMaxNameLen = 255;    // decoder limit for filename3
inline constexpr uint32_t kMaxPathLen = 4096;   // decoder limit for nfspath3
inline constexpr uint32_t kMaxData = 1u << 24;  // decoder limit for WRITE data

enum Proc : uint32_t {
  kNull = 0,
  kGetattr = 1,
  kSetattr = 2,
  kLookup = 3,
  kAccess = 4,
  kReadlink = 5,
  kRead = 6,
  kWrite = 7,
  kCreate = 8,
  kMkdir = 9,
  kSymlink = 10,
  kMknod = 11,
  kRemove = 12,
  kRmdir = 13,
  kRename = 14,
  kLink = 15,
  kReaddir = 16,
  kReaddirplus = 17,
  kFsstat = 18,
  kFsinfo = 19,
  kPathconf = 20,
  kCommit = 21,
  kNumProcs = 22,
};

// A status enum listed once, as X(name, value) entries, gives the enum and
// StatusName() (e.g. "NFS3ERR_NOENT") for messages.
#define NFS3D_ENUMERATOR(name, value) name = (value),
#define NFS3D_NAME_CASE(name, value) \
  case name:                         \
    return #name;
#define NFS3D_STATUS_ENUM(Type, LIST, unknown)     \
  enum Type : uint32_t { LIST(NFS3D_ENUMERATOR) }; \
  inline const char* StatusName(Type status) {     \
    switch (status) { LIST(NFS3D_NAME_CASE) }      \
    return unknown;                                \
  }

// A table, one status a line (clang-format 14 reflows it differently
// on every run).
// clang-format off
#define NFS3D_NFSSTAT3(X)       \
  X(NFS3_OK, 0)                 \
  X(NFS3ERR_PERM, 1)            \
  X(NFS3ERR_NOENT, 2)           \
  X(NFS3ERR_IO, 5)              \
  X(NFS3ERR_NXIO, 6)            \
  X(NFS3ERR_ACCES, 13)          \
  X(NFS3ERR_EXIST, 17)          \
  X(NFS3ERR_XDEV, 18)           \
  X(NFS3ERR_NODEV, 19)          \
  X(NFS3ERR_NOTDIR, 20)         \
  X(NFS3ERR_ISDIR, 21)          \
  X(NFS3ERR_INVAL, 22)          \
  X(NFS3ERR_FBIG, 27)           \
  X(NFS3ERR_NOSPC, 28)          \
  X(NFS3ERR_ROFS, 30)           \
  X(NFS3ERR_MLINK, 31)          \
  X(NFS3ERR_NAMETOOLONG, 63)    \
  X(NFS3ERR_NOTEMPTY, 66)       \
  X(NFS3ERR_DQUOT, 69)          \
  X(NFS3ERR_STALE, 70)          \
  X(NFS3ERR_REMOTE, 71)         \
  X(NFS3ERR_BADHANDLE, 10001)   \
  X(NFS3ERR_NOT_SYNC, 10002)    \
  X(NFS3ERR_BAD_COOKIE, 10003)  \
  X(NFS3ERR_NOTSUPP, 10004)     \
  X(NFS3ERR_TOOSMALL, 10005)    \
  X(NFS3ERR_SERVERFAULT, 10006) \
  X(NFS3ERR_BADTYPE, 10007)     \
  X(NFS3ERR_JUKEBOX, 10008)
NFS3D_STATUS_ENUM(nfsstat3, NFS3D_NFSSTAT3, "NFS3ERR_(unknown)")
// clang-format on

enum ftype3 : uint32_t {
  NF3REG = 1,
  NF3DIR = 2,
  NF3BLK = 3,
  NF3CHR = 4,
  NF3LNK = 5,
  NF3SOCK = 6,
  NF3FIFO = 7,
};

enum stable_how : uint32_t { UNSTABLE = 0, DATA_SYNC = 1, FILE_SYNC = 2 };
enum createmode3 : uint32_t { UNCHECKED = 0, GUARDED = 1, EXCLUSIVE = 2 };
enum time_how : uint32_t { DONT_CHANGE = 0, SET_TO_SERVER_TIME = 1, SET_TO_CLIENT_TIME = 2 };

// ACCESS bits (§3.3.4).
inline constexpr uint32_t ACCESS3_READ = 0x0001;
inline constexpr uint32_t ACCESS3_LOOKUP = 0x0002;
inline constexpr uint32_t ACCESS3_MODIFY = 0x0004;
inline constexpr uint32_t ACCESS3_EXTEND = 0x0008;
inline constexpr uint32_t ACCESS3_DELETE = 0x0010;
inline constexpr uint32_t ACCESS3_EXECUTE = 0x0020;

// FSINFO properties (§3.3.19).
inline constexpr uint32_t FSF3_LINK = 0x0001;
inline constexpr uint32_t FSF3_SYMLINK = 0x0002;
inline constexpr uint32_t FSF3_HOMOGENEOUS = 0x0008;
inline constexpr uint32_t FSF3_CANSETTIME = 0x0010;

// nfs_fh3: opaque<NFS3_FHSIZE>, stored inline so handles never allocate.
struct nfs_fh3 {
  uint8_t len = 0;
  uint8_t data[kFhSize] = {};
  absl::Span<const uint8_t> bytes() const { return {data, len}; }
};

struct nfstime3 {
  uint32_t seconds = 0;
  uint32_t nseconds = 0;
};

struct specdata3 {
  uint32_t specdata1 = 0;
  uint32_t specdata2 = 0;
};

struct fattr3 {
  ftype3 type = NF3REG;
  uint32_t mode = 0;
  uint32_t nlink = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  uint64_t used = 0;
  specdata3 rdev;
  uint64_t fsid = 0;
  uint64_t fileid = 0;
  nfstime3 atime;
  nfstime3 mtime;
  nfstime3 ctime;
};

using post_op_attr = std::optional<fattr3>;

struct wcc_attr {
  uint64_t size = 0;
  nfstime3 mtime;
  nfstime3 ctime;
};
using pre_op_attr = std::optional<wcc_attr>;

struct wcc_data {
  pre_op_attr before;
  post_op_attr after;
};

using post_op_fh3 = std::optional<nfs_fh3>;

struct sattr3 {
  std::optional<uint32_t> mode;
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  time_how atime_how = DONT_CHANGE;
  nfstime3 atime;  // when SET_TO_CLIENT_TIME
  time_how mtime_how = DONT_CHANGE;
  nfstime3 mtime;
};

struct diropargs3 {
  nfs_fh3 dir;
  std::string_view name;
};

// ---- Per-procedure arguments and results (§3.3.x). A result's fields that
// the RFC puts in the "resok"/"resfail" arms are both present here; the
// encoder writes the arm chosen by status.

struct GETATTR3args {
  nfs_fh3 object;
};
struct GETATTR3res {
  nfsstat3 status = NFS3_OK;
  fattr3 obj_attributes;
};

struct SETATTR3args {
  nfs_fh3 object;
  sattr3 new_attributes;
  std::optional<nfstime3> guard;  // sattrguard3: check ctime when present
};
struct SETATTR3res {
  nfsstat3 status = NFS3_OK;
  wcc_data obj_wcc;
};

struct LOOKUP3args {
  diropargs3 what;
};
struct LOOKUP3res {
  nfsstat3 status = NFS3_OK;
  nfs_fh3 object;               // ok
  post_op_attr obj_attributes;  // ok
  post_op_attr dir_attributes;  // ok and fail
};

struct ACCESS3args {
  nfs_fh3 object;
  uint32_t access = 0;
};
struct ACCESS3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr obj_attributes;
  uint32_t access = 0;
};

struct READLINK3args {
  nfs_fh3 symlink;
};
struct READLINK3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr symlink_attributes;
  std::string data;
};

struct READ3args {
  nfs_fh3 file;
  uint64_t offset = 0;
  uint32_t count = 0;
};
// What the server encodes before READ data (nfs3_codec.h).
struct READ3resok_head {
  post_op_attr file_attributes;
  uint32_t count = 0;
  bool eof = false;
};
// READ result as a client decodes it whole; data borrows from the reply.
struct READ3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr file_attributes;    // ok and fail
  uint32_t count = 0;              // ok
  bool eof = false;                // ok
  absl::Span<const uint8_t> data;  // ok
};

struct WRITE3args {
  nfs_fh3 file;
  uint64_t offset = 0;
  uint32_t count = 0;
  stable_how stable = UNSTABLE;
  absl::Span<const uint8_t> data;
};
struct WRITE3res {
  nfsstat3 status = NFS3_OK;
  wcc_data file_wcc;
  uint32_t count = 0;
  stable_how committed = UNSTABLE;
  uint8_t verf[kWriteVerfSize] = {};
};

struct CREATE3args {
  diropargs3 where;
  createmode3 mode = UNCHECKED;
  sattr3 obj_attributes;               // UNCHECKED, GUARDED
  uint8_t verf[kCreateVerfSize] = {};  // EXCLUSIVE
};
// CREATE, MKDIR, SYMLINK and MKNOD share diropres3.
struct diropres3 {
  nfsstat3 status = NFS3_OK;
  post_op_fh3 obj;              // ok
  post_op_attr obj_attributes;  // ok
  wcc_data dir_wcc;             // ok and fail
};
using CREATE3res = diropres3;

struct MKDIR3args {
  diropargs3 where;
  sattr3 attributes;
};
using MKDIR3res = diropres3;

struct SYMLINK3args {
  diropargs3 where;
  sattr3 symlink_attributes;
  std::string_view symlink_data;
};
using SYMLINK3res = diropres3;

struct MKNOD3args {
  diropargs3 where;
  ftype3 type = NF3REG;
  sattr3 dev_attributes;   // NF3CHR, NF3BLK
  specdata3 spec;          // NF3CHR, NF3BLK
  sattr3 pipe_attributes;  // NF3SOCK, NF3FIFO
};
using MKNOD3res = diropres3;

struct REMOVE3args {
  diropargs3 object;
};
struct REMOVE3res {
  nfsstat3 status = NFS3_OK;
  wcc_data dir_wcc;
};
using RMDIR3args = REMOVE3args;
using RMDIR3res = REMOVE3res;

struct RENAME3args {
  diropargs3 from;
  diropargs3 to;
};
struct RENAME3res {
  nfsstat3 status = NFS3_OK;
  wcc_data fromdir_wcc;
  wcc_data todir_wcc;
};

struct LINK3args {
  nfs_fh3 file;
  diropargs3 link;
};
struct LINK3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr file_attributes;
  wcc_data linkdir_wcc;
};

struct READDIR3args {
  nfs_fh3 dir;
  uint64_t cookie = 0;
  uint8_t cookieverf[kCookieVerfSize] = {};
  uint32_t count = 0;
};
struct entry3 {
  uint64_t fileid = 0;
  std::string name;
  uint64_t cookie = 0;
};
struct READDIR3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr dir_attributes;
  uint8_t cookieverf[kCookieVerfSize] = {};
  std::vector<entry3> entries;
  bool eof = false;
};

struct READDIRPLUS3args {
  nfs_fh3 dir;
  uint64_t cookie = 0;
  uint8_t cookieverf[kCookieVerfSize] = {};
  uint32_t dircount = 0;
  uint32_t maxcount = 0;
};
struct entryplus3 {
  uint64_t fileid = 0;
  std::string name;
  uint64_t cookie = 0;
  post_op_attr name_attributes;
  post_op_fh3 name_handle;
};
struct READDIRPLUS3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr dir_attributes;
  uint8_t cookieverf[kCookieVerfSize] = {};
  std::vector<entryplus3> entries;
  bool eof = false;
};

struct FSSTAT3args {
  nfs_fh3 fsroot;
};
struct FSSTAT3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr obj_attributes;
  uint64_t tbytes = 0, fbytes = 0, abytes = 0;
  uint64_t tfiles = 0, ffiles = 0, afiles = 0;
  uint32_t invarsec = 0;
};

struct FSINFO3args {
  nfs_fh3 fsroot;
};
struct FSINFO3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr obj_attributes;
  uint32_t rtmax = 0, rtpref = 0, rtmult = 0;
  uint32_t wtmax = 0, wtpref = 0, wtmult = 0;
  uint32_t dtpref = 0;
  uint64_t maxfilesize = 0;
  nfstime3 time_delta;
  uint32_t properties = 0;
};

struct PATHCONF3args {
  nfs_fh3 object;
};
struct PATHCONF3res {
  nfsstat3 status = NFS3_OK;
  post_op_attr obj_attributes;
  uint32_t linkmax = 0;
  uint32_t name_max = 0;
  bool no_trunc = true;
  bool chown_restricted = true;
  bool case_insensitive = false;
  bool case_preserving = true;
};

struct COMMIT3args {
  nfs_fh3 file;
  uint64_t offset = 0;
  uint32_t count = 0;
};
struct COMMIT3res {
  nfsstat3 status = NFS3_OK;
  wcc_data file_wcc;
  uint8_t verf[kWriteVerfSize] = {};
};

// NULL takes and returns nothing.
struct Void {};

}  // namespace nfs3d::nfs3

#endif  // NFS3D_XDR_NFS3_TYPES_H_
