#include "daemon/pid_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace nfs3d::daemon {
namespace {

constexpr char kProcessName[] = "nfs3d";

std::string ErrnoText(const std::string& what) {
  return absl::StrCat(what, ": ", std::strerror(errno));
}

// The whole of a small /proc file; empty when unreadable.
std::string ReadProcFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether /proc/<pid> is an nfs3d whose real and effective uids are `uid`.
absl::Status CheckProcess(pid_t pid, uid_t uid) {
  const std::string proc = absl::StrCat("/proc/", pid);
  const std::string comm(absl::StripSuffix(ReadProcFile(proc + "/comm"), "\n"));
  if (comm.empty()) return absl::NotFoundError(absl::StrCat("no process ", pid));
  if (comm != kProcessName) {
    return absl::PermissionDeniedError(
        absl::StrCat("process ", pid, " is '", comm, "', not ", kProcessName));
  }
  const std::string status = ReadProcFile(proc + "/status");
  const size_t at = status.find("\nUid:");
  unsigned real = 0, effective = 0;
  if (at == std::string::npos ||
      std::sscanf(status.c_str() + at, "\nUid: %u %u", &real, &effective) != 2) {
    return absl::NotFoundError(absl::StrCat("no process ", pid));
  }
  if (real != uid || effective != uid) {
    return absl::PermissionDeniedError(
        absl::StrCat("process ", pid, " runs as uid ", effective, ", not ", uid));
  }
  return absl::OkStatus();
}

}  // namespace

std::string PidFilePath(const conf::ServerConfig& config) {
  return absl::StrCat(config.state_dir, "/nfs3d.pid");
}

absl::Status WritePidFile(const std::string& path) {
  const std::string temp = absl::StrCat(path, ".", getpid(), ".tmp");
  unlink(temp.c_str());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(ErrnoText("create " + temp));
  const std::string text = absl::StrCat(getpid(), "\n");
  // 0644 whatever the umask: readers need not be root.
  bool ok = fchmod(fd, 0644) == 0 &&
            write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  std::string why = ok ? "" : ErrnoText("write " + temp);
  ok = close(fd) == 0 && ok;
  if (ok && rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    why = ErrnoText("rename to " + path);
  }
  if (ok) return absl::OkStatus();
  unlink(temp.c_str());
  return absl::UnavailableError(why.empty() ? ErrnoText("close " + temp) : why);
}

absl::StatusOr<pid_t> ReadServerPid(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return absl::NotFoundError(absl::StrCat("no ", path));
  if (fd < 0) return absl::PermissionDeniedError(ErrnoText("open " + path));
  struct stat st;
  char buf[32] = {};
  const bool read_ok = fstat(fd, &st) == 0 && read(fd, buf, sizeof(buf) - 1) >= 0;
  close(fd);
  if (!read_ok) return absl::PermissionDeniedError(ErrnoText("read " + path));
  const uid_t self = geteuid();
  if (!S_ISREG(st.st_mode) || st.st_uid != self || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s (owner uid %u, mode %04o) is not a file only uid %u can write: not believed", path,
        st.st_uid, st.st_mode & 07777, self));
  }
  int pid = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(buf), &pid) || pid <= 0) {
    return absl::PermissionDeniedError(absl::StrCat(path, " holds no pid"));
  }
  if (absl::Status s = CheckProcess(pid, self); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  }
  return static_cast<pid_t>(pid);
}

}  // namespace nfs3d::daemon
