#include "vfs/state_dir.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

const char kSecretFile[] = "handle.key";
const char kExportsFile[] = "exports.ids";

absl::Status WriteAll(int fd, const std::string& contents) {
  std::string_view data = contents;
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "write");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status FillRandom(uint8_t* buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = getrandom(buf + done, len - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "getrandom");
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EnsurePrivateStateDir(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty state directory path");
  // Created first, checked after: a directory someone else made in the
  // moment between a check and a mkdir is seen.
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError(errno, absl::StrCat("mkdir ", path));
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return ErrnoError(errno, absl::StrCat("stat ", path));
  if (!S_ISDIR(st.st_mode)) return ErrnoError(ENOTDIR, path);
  const uid_t self = geteuid();
  if (st.st_uid == self && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0) return absl::OkStatus();
  const std::string why = st.st_uid != self
                              ? absl::StrCat("is not owned by uid ", self, " (nfs3d's user)")
                              : std::string("may be written by group or others");
  return absl::PermissionDeniedError(absl::StrFormat(
      "state directory %s (owner uid %u, mode %04o) %s: whoever can write there can plant "
      "nfs3d's pid file, sockets or a fake predecessor; refused. Fix: chown %u %s && chmod 0700 %s",
      path, st.st_uid, st.st_mode & 07777, why, self, path, path));
}

absl::StatusOr<std::unique_ptr<StateDir>> StateDir::Open(const std::string& path) {
  if (absl::Status safe = EnsurePrivateStateDir(path); !safe.ok()) return safe;
  return std::unique_ptr<StateDir>(new StateDir(path));
}

absl::Status StateDir::FsyncDir() {
  int fd = open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open state dir");
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  return rc == 0 ? absl::OkStatus() : ErrnoError(err, "fsync state dir");
}

absl::StatusOr<std::string> StateDir::WriteTemp(const std::string& name,
                                                const std::string& contents) {
  std::string tmp = absl::StrCat(path_, "/.", name, ".tmp.", getpid(), ".", gettid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("create ", tmp));
  absl::Status st = WriteAll(fd, contents);
  if (st.ok() && fchmod(fd, 0600) != 0) st = ErrnoError(errno, "fchmod");
  if (st.ok() && fsync(fd) != 0) st = ErrnoError(errno, "fsync");
  close(fd);
  if (!st.ok()) {
    unlink(tmp.c_str());
    return st;
  }
  return tmp;
}

absl::Status StateDir::WriteFileAtomic(const std::string& name, const std::string& contents) {
  absl::StatusOr<std::string> tmp = WriteTemp(name, contents);
  if (!tmp.ok()) return tmp.status();
  std::string final_path = absl::StrCat(path_, "/", name);
  if (rename(tmp->c_str(), final_path.c_str()) != 0) {
    int err = errno;
    unlink(tmp->c_str());
    return ErrnoError(err, absl::StrCat("rename to ", final_path));
  }
  return FsyncDir();
}

absl::StatusOr<std::optional<std::string>> StateDir::ReadFile(const std::string& name) {
  std::string file = absl::StrCat(path_, "/", name);
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return ErrnoError(errno, absl::StrCat("open ", file));
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoError(err, absl::StrCat("read ", file));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return std::optional<std::string>(std::move(out));
}

absl::StatusOr<HandleSecret> StateDir::LoadOrCreateSecret() {
  HandleSecret secret;
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<std::optional<std::string>> existing = ReadFile(kSecretFile);
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) {
      const std::string& bytes = **existing;
      if (bytes.size() != secret.size()) {
        return absl::DataLossError(absl::StrCat(path_, "/", kSecretFile, ": expected ",
                                                secret.size(), " bytes, found ", bytes.size()));
      }
      std::copy(bytes.begin(), bytes.end(), secret.begin());
      return secret;
    }
    absl::Status st = FillRandom(secret.data(), secret.size());
    if (!st.ok()) return st;
    absl::StatusOr<std::string> tmp = WriteTemp(
        kSecretFile, std::string(reinterpret_cast<const char*>(secret.data()), secret.size()));
    if (!tmp.ok()) return tmp.status();
    // link() fails with EEXIST instead of replacing a key another process
    // created meanwhile; then we retry and read theirs.
    std::string final_path = absl::StrCat(path_, "/", kSecretFile);
    int rc = link(tmp->c_str(), final_path.c_str());
    int err = errno;
    unlink(tmp->c_str());
    if (rc == 0) {
      st = FsyncDir();
      if (!st.ok()) return st;
      return secret;
    }
    if (err != EEXIST) return ErrnoError(err, absl::StrCat("link ", final_path));
  }
  return absl::InternalError("handle.key: could not create or read");
}

absl::StatusOr<uint32_t> StateDir::ExportId(const std::string& export_path) {
  if (export_path.empty() || export_path.find('\n') != std::string::npos) {
    return absl::InvalidArgumentError("bad export path");
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::optional<std::string>> text = ReadFile(kExportsFile);
  if (!text.ok()) return text.status();
  uint32_t max_id = 0;
  if (text->has_value()) {
    for (absl::string_view line : absl::StrSplit(**text, '\n', absl::SkipEmpty())) {
      size_t space = line.find(' ');
      uint32_t id = 0;
      if (space == absl::string_view::npos || !absl::SimpleAtoi(line.substr(0, space), &id)) {
        return absl::DataLossError(absl::StrCat(path_, "/", kExportsFile, ": bad line"));
      }
      if (line.substr(space + 1) == export_path) return id;
      max_id = std::max(max_id, id);
    }
  }
  uint32_t id = max_id + 1;
  std::string updated = text->value_or("");
  absl::StrAppend(&updated, id, " ", export_path, "\n");
  absl::Status st = WriteFileAtomic(kExportsFile, updated);
  if (!st.ok()) return st;
  return id;
}

}  // namespace nfs3d::vfs
