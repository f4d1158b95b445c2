#include "xdr/nfs3_client_codec.h"

namespace nfs3d::nfs3 {

const char* ProcName(uint32_t proc) {
  static constexpr const char* kNames[kNumProcs] = {
      "NULL",    "GETATTR",     "SETATTR", "LOOKUP", "ACCESS",   "READLINK", "READ",   "WRITE",
      "CREATE",  "MKDIR",       "SYMLINK", "MKNOD",  "REMOVE",   "RMDIR",    "RENAME", "LINK",
      "READDIR", "READDIRPLUS", "FSSTAT",  "FSINFO", "PATHCONF", "COMMIT"};
  return proc < kNumProcs ? kNames[proc] : "UNKNOWN";
}

}  // namespace nfs3d::nfs3
