#include "rpc/spare_cores.h"

#include <fcntl.h>
#include <unistd.h>

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

double IdleCores(const CpuTimes& before, const CpuTimes& after, int cpus) {
  if (after.total <= before.total || after.idle < before.idle) return 0;
  return static_cast<double>(after.idle - before.idle) / static_cast<double>(after.total - before.total) *
         cpus;
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
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::optional<CpuTimes> last;
  char buf[512];
  do {
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    std::optional<CpuTimes> now =
        n > 0 ? ParseProcStat(std::string_view(buf, static_cast<size_t>(n))) : std::nullopt;
    if (now && last) {
      available_.store(Decide(available(), IdleCores(*last, *now, static_cast<int>(cpus))),
                       std::memory_order_relaxed);
    }
    last = now;
  } while (!stop_.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  available_.store(false);
  close(fd);
}

}  // namespace nfs3d::rpc
