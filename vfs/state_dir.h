// The server's persistent state directory: the file-handle secret and the
// export-path -> export-id table. Files are written atomically (temp file,
// fsync, rename/link, fsync of the directory) with mode 0600 so a crash never
// leaves a torn key or table.
#ifndef NFS3D_VFS_STATE_DIR_H_
#define NFS3D_VFS_STATE_DIR_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace nfs3d::vfs {

using HandleSecret = std::array<uint8_t, 32>;

// Creates `path` (mode 0700) if it does not exist, then refuses a directory
// that is not this process's effective user's or that group or others may
// write: whoever can write there can plant the pid file nfs3d's tools
// signal, the control and handover sockets, or a fake predecessor for
// `nfs3d --takeover`. The error says which directory, its owner and mode,
// and the fix.
absl::Status EnsurePrivateStateDir(const std::string& path);

class StateDir {
 public:
  // Creates the directory (mode 0700) if it does not exist; refuses one
  // EnsurePrivateStateDir refuses.
  static absl::StatusOr<std::unique_ptr<StateDir>> Open(const std::string& path);

  const std::string& path() const { return path_; }

  // The 32-byte handle secret in "handle.key": read if present, else created
  // from getrandom(). Concurrent first starts agree on one key (link(2) never
  // replaces an existing file).
  absl::StatusOr<HandleSecret> LoadOrCreateSecret();

  // The stable id of an export path, from "exports.ids" (lines "<id> <path>").
  // A path seen for the first time gets the next free id (ids start at 1) and
  // the table is rewritten atomically. Paths are compared as given: callers
  // pass a canonical path.
  absl::StatusOr<uint32_t> ExportId(const std::string& export_path);

  // Atomically replaces name with contents (mode 0600).
  absl::Status WriteFileAtomic(const std::string& name, const std::string& contents);
  // The file's contents, or nullopt if it does not exist.
  absl::StatusOr<std::optional<std::string>> ReadFile(const std::string& name);

 private:
  explicit StateDir(std::string path) : path_(std::move(path)) {}
  absl::Status FsyncDir();
  // Writes contents to a fresh temp file, fsynced; returns its name.
  absl::StatusOr<std::string> WriteTemp(const std::string& name, const std::string& contents);

  const std::string path_;
  absl::Mutex mu_;  // serialises read-modify-write of exports.ids
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_STATE_DIR_H_
