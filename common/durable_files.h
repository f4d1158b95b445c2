// Small files that must survive a crash, in one directory: what the status
// monitor and the cluster's shared state keep. Every write replaces a file
// atomically (a temp file, synced, renamed over it), so a reader sees the
// old or the new contents, never a mix. Implemented here on a local
// directory, and on a CephFS directory in vfs/cephfs/cluster_files.h (state
// that the heads of a cluster share, and that a head taken over on another
// machine finds again).
#ifndef NFS3D_COMMON_DURABLE_FILES_H_
#define NFS3D_COMMON_DURABLE_FILES_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nfs3d {

class DurableFiles {
 public:
  // Suffix of the temp files writes use; List() leaves them out.
  static constexpr char kTempSuffix[] = ".tmp";

  virtual ~DurableFiles() = default;
  // Where the files are, for messages.
  virtual const std::string& where() const = 0;
  // The file's contents; nullopt if there is no such file.
  virtual absl::StatusOr<std::optional<std::string>> Read(const std::string& name) = 0;
  // Creates or replaces the file, atomically; durable when it returns.
  virtual absl::Status Write(const std::string& name, const std::string& contents) = 0;
  // Removes the file; no such file is not an error.
  virtual absl::Status Remove(const std::string& name) = 0;
  // The names of the files (no temp files, no "." or "..").
  virtual absl::StatusOr<std::vector<std::string>> List() = 0;
  // The contents of the files whose names start with `prefix`, by name (no
  // sub-directories; a file removed meanwhile is left out). One call, so
  // that on a cluster it is one trip: a clustered head reads every head's
  // grace file before each new lock.
  virtual absl::StatusOr<std::map<std::string, std::string>> ReadAll(const std::string& prefix) = 0;
  // The files of sub-directory `name`, which is created if missing.
  virtual absl::StatusOr<std::unique_ptr<DurableFiles>> Sub(const std::string& name) = 0;

  // For implementations: whether a directory entry is listed (List), and
  // whether ReadAll reads it (d_type as readdir(3) gives it).
  static bool Listed(absl::string_view name);
  static bool ReadByReadAll(absl::string_view name, unsigned char d_type, absl::string_view prefix);
};

// The files of local directory `dir`, created (mode 0700) if missing.
absl::StatusOr<std::unique_ptr<DurableFiles>> OpenLocalFiles(const std::string& dir);

}  // namespace nfs3d

#endif  // NFS3D_COMMON_DURABLE_FILES_H_
