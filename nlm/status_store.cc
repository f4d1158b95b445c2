#include "nlm/status_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace nfs3d::nlm {
namespace {

absl::Status ErrnoError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("mkdir " + path);
  return absl::OkStatus();
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

absl::Status FsyncPath(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open " + path);
  int rc = fsync(fd);
  close(fd);
  return rc == 0 ? absl::OkStatus() : ErrnoError("fsync " + path);
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// FNV-1a: file names for host records (names may be long or contain '/').
uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError("create " + tmp);
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoError("write " + tmp);
      close(fd);
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    absl::Status s = ErrnoError("fsync " + tmp);
    close(fd);
    return s;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) return ErrnoError("rename " + tmp);
  return FsyncPath(DirName(path));
}

absl::StatusOr<std::unique_ptr<StatusStore>> StatusStore::Open(const std::string& state_dir) {
  std::string dir = state_dir + "/nsm";
  if (absl::Status s = MakeDir(dir); !s.ok()) return s;
  if (absl::Status s = MakeDir(dir + "/hosts"); !s.ok()) return s;
  auto store = std::unique_ptr<StatusStore>(new StatusStore(dir));

  std::string text;
  int32_t previous = 0;
  if (ReadFile(dir + "/state", &text)) {
    std::string trimmed(absl::StripAsciiWhitespace(text));
    if (!absl::SimpleAtoi(trimmed, &previous) || previous < 0) {
      return absl::DataLossError(absl::StrCat(dir, "/state: not a state number"));
    }
  }
  // Next odd number; wraps before INT32_MAX to stay positive.
  int32_t next = previous >= INT32_MAX - 2 ? 1 : previous + 1;
  if (next % 2 == 0) ++next;
  if (absl::Status s = WriteFileAtomically(dir + "/state", absl::StrCat(next, "\n")); !s.ok()) {
    return s;
  }
  store->state_ = next;

  DIR* d = opendir((dir + "/hosts").c_str());
  if (d == nullptr) return ErrnoError("opendir " + dir + "/hosts");
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || absl::EndsWith(name, ".tmp")) continue;
    std::string body;
    if (!ReadFile(dir + "/hosts/" + name, &body)) continue;
    std::vector<std::string> lines = absl::StrSplit(body, '\n');
    if (lines.size() < 3 || lines[0].empty()) continue;
    store->previous_.push_back({lines[0], lines[1], lines[2]});
  }
  closedir(d);
  return store;
}

std::string StatusStore::HostPath(const std::string& name) const {
  return absl::StrFormat("%s/hosts/%016x", dir_, Fnv1a(name));
}

absl::Status StatusStore::AddHost(const MonitoredHost& host) {
  if (host.name.find('\n') != std::string::npos) {
    return absl::InvalidArgumentError("host name contains a newline");
  }
  return WriteFileAtomically(
      HostPath(host.name), absl::StrCat(host.name, "\n", host.address, "\n", host.local_address, "\n"));
}

absl::Status StatusStore::RemoveHost(const std::string& name) {
  if (unlink(HostPath(name).c_str()) != 0 && errno != ENOENT) {
    return ErrnoError("unlink " + HostPath(name));
  }
  return absl::OkStatus();
}

}  // namespace nfs3d::nlm
