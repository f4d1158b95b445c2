#include "rpc/spare_cores.h"

#include <fcntl.h>
#include <unistd.h>

#include <deque>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"

namespace nfs3d::rpc {

std::optional<CpuTimes> ParseProcStat(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(line.data(), line.size()), ' ', absl::SkipEmpty());
  // cpu user nice system idle iowait irq softirq steal ...
  if (fields.size() < 6 || fields[0] != "cpu") return std::nullopt;
  CpuTimes t;
  for (size_t i = 1; i < fields.size(); ++i) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(fields[i], &v)) return std::nullopt;
    // guest and guest_nice (fields 9, 10) are already counted in user/nice.
    if (i <= 8) t.total += v;
    if (i == 4 || i == 5) t.idle += v;
  }
  return t;
}

std::optional<uint64_t> ParseProcessTicks(std::string_view text) {
  // pid (comm) state ppid ... : comm may hold anything, so fields are counted
  // from the last ')'; utime and stime are fields 14 and 15.
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(rest.data(), rest.size()), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  uint64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return std::nullopt;
  }
  return utime + stime;
}

namespace {

double Cores(uint64_t before, uint64_t after, const CpuTimes& from, const CpuTimes& to, int cpus) {
  if (to.total <= from.total || after < before) return 0;
  return static_cast<double>(after - before) / static_cast<double>(to.total - from.total) * cpus;
}

}  // namespace

double IdleCores(const CpuTimes& before, const CpuTimes& after, int cpus) {
  return Cores(before.idle, after.idle, before, after, cpus);
}

double ServerCores(const CpuTimes& before, const CpuTimes& after, int cpus) {
  return Cores(before.server, after.server, before, after, cpus);
}

void SpareCores::Start() {
  if (fixed_ || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void SpareCores::Stop() {
  if (!thread_.joinable()) return;
  if (!stop_.HasBeenNotified()) stop_.Notify();
  thread_.join();
}

void SpareCores::Run() {
  const int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // never available: calls stay on their io thread
  const int self_fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (self_fd < 0) {
    close(fd);
    return;
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::deque<CpuTimes> window;  // the last kWindow + 1 samples
  State state;
  char buf[1024];
  do {
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    std::optional<CpuTimes> now =
        n > 0 ? ParseProcStat(std::string_view(buf, static_cast<size_t>(n))) : std::nullopt;
    n = pread(self_fd, buf, sizeof(buf) - 1, 0);
    std::optional<uint64_t> server =
        n > 0 ? ParseProcessTicks(std::string_view(buf, static_cast<size_t>(n))) : std::nullopt;
    if (now && server) now->server = *server;
    if (!now || !server) {
      window.clear();
      continue;
    }
    window.push_back(*now);
    if (window.size() > kWindow + 1) window.pop_front();
    if (window.size() == kWindow + 1) {
      const int n_cpus = static_cast<int>(cpus);
      state = Decide(state, IdleCores(window.front(), window.back(), n_cpus),
                     ServerCores(window.front(), window.back(), n_cpus));
      available_.store(state.available, std::memory_order_relaxed);
    }
  } while (!stop_.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  available_.store(false);
  close(self_fd);
  close(fd);
}

}  // namespace nfs3d::rpc
