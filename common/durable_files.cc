#include "common/durable_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace nfs3d {
namespace {

absl::Status ErrnoError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status FsyncPath(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open " + path);
  const int rc = fsync(fd);
  close(fd);
  return rc == 0 ? absl::OkStatus() : ErrnoError("fsync " + path);
}

class LocalFiles : public DurableFiles {
 public:
  explicit LocalFiles(std::string dir) : dir_(std::move(dir)) {}

  const std::string& where() const override { return dir_; }

  absl::StatusOr<std::optional<std::string>> Read(const std::string& name) override {
    const std::string path = Path(name);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return std::nullopt;
    if (fd < 0) return ErrnoError("open " + path);
    std::string contents;
    char buf[4096];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        absl::Status s = ErrnoError("read " + path);
        close(fd);
        return s;
      }
      if (n == 0) break;
      contents.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return contents;
  }

  absl::Status Write(const std::string& name, const std::string& contents) override {
    const std::string path = Path(name);
    const std::string temp = path + kTempSuffix;
    const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return ErrnoError("create " + temp);
    size_t done = 0;
    while (done < contents.size()) {
      const ssize_t n = write(fd, contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        absl::Status s = ErrnoError("write " + temp);
        close(fd);
        return s;
      }
      done += static_cast<size_t>(n);
    }
    if (fsync(fd) != 0) {
      absl::Status s = ErrnoError("fsync " + temp);
      close(fd);
      return s;
    }
    close(fd);
    if (rename(temp.c_str(), path.c_str()) != 0) return ErrnoError("rename " + temp);
    return FsyncPath(dir_);
  }

  absl::Status Remove(const std::string& name) override {
    if (unlink(Path(name).c_str()) != 0 && errno != ENOENT)
      return ErrnoError("unlink " + Path(name));
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> List() override {
    std::vector<std::string> names;
    absl::Status s = ForEachEntry([&](const char* name, unsigned char) {
      if (Listed(name)) names.emplace_back(name);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return names;
  }

  absl::StatusOr<std::map<std::string, std::string>> ReadAll(const std::string& prefix) override {
    std::map<std::string, std::string> files;
    absl::Status s = ForEachEntry([&](const char* name, unsigned char type) {
      if (!ReadByReadAll(name, type, prefix)) return absl::OkStatus();
      absl::StatusOr<std::optional<std::string>> contents = Read(name);
      if (!contents.ok()) return contents.status();
      if (contents->has_value()) files.emplace(name, std::move(**contents));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return files;
  }

  absl::StatusOr<std::unique_ptr<DurableFiles>> Sub(const std::string& name) override {
    return OpenLocalFiles(Path(name));
  }

 private:
  // Each entry of the directory with its type (DT_DIR even where the file
  // system leaves d_type unknown), until visit fails.
  absl::Status ForEachEntry(
      const std::function<absl::Status(const char* name, unsigned char type)>& visit) {
    DIR* d = opendir(dir_.c_str());
    if (d == nullptr) return ErrnoError("opendir " + dir_);
    absl::Status status;
    while (status.ok()) {
      const dirent* e = readdir(d);
      if (e == nullptr) break;
      unsigned char type = e->d_type;
      struct stat st;
      if (type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISDIR(st.st_mode)) {
        type = DT_DIR;
      }
      status = visit(e->d_name, type);
    }
    closedir(d);
    return status;
  }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  const std::string dir_;
};

}  // namespace

bool DurableFiles::Listed(absl::string_view name) {
  return name != "." && name != ".." && !absl::EndsWith(name, kTempSuffix);
}

bool DurableFiles::ReadByReadAll(absl::string_view name, unsigned char d_type,
                                 absl::string_view prefix) {
  return d_type != DT_DIR && Listed(name) && absl::StartsWith(name, prefix);
}

absl::StatusOr<std::unique_ptr<DurableFiles>> OpenLocalFiles(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("mkdir " + dir);
  return std::make_unique<LocalFiles>(dir);
}

}  // namespace nfs3d
