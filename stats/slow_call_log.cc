#include "stats/slow_call_log.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "common/log.h"

namespace nfs3d::stats {

SlowCallLog::SlowCallLog(ExportNamer namer, unsigned burst, Sink sink)
    : namer_(std::move(namer)), burst_(burst == 0 ? 1 : burst), sink_(std::move(sink)) {}

void SlowCallLog::Report(const SlowCall& call) {
  uint64_t left_out = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= std::chrono::seconds(1)) {
      window_start_ = now;
      in_window_ = 0;
    }
    if (in_window_ >= burst_) {
      ++suppressed_;
      ++suppressed_total_;
      return;
    }
    ++in_window_;
    ++logged_;
    left_out = std::exchange(suppressed_, 0);
  }
  std::string where = "-";
  if (call.has_export) {
    where = namer_ ? namer_(call.export_id) : std::string();
    if (where.empty()) where = absl::StrCat("export#", call.export_id);
  }
  std::string line = absl::StrFormat(
      "slow call: %.1f ms %s xid %08x client %s user %s export %s fh %s (procedure/backend "
      "%.1f ms, rest %.1f ms)",
      call.total_ns / 1e6, call.proc, call.xid, call.client, call.user, where,
      call.handle.empty()
          ? std::string("-")
          : absl::BytesToHexString(absl::string_view(
                reinterpret_cast<const char*>(call.handle.data()), call.handle.size())),
      call.proc_ns / 1e6, (call.total_ns - std::min(call.proc_ns, call.total_ns)) / 1e6);
  if (left_out > 0) absl::StrAppend(&line, " [", left_out, " more slow calls not logged]");
  if (sink_) {
    sink_(line);
  } else {
    NFS3D_LOG_WARNING("%s", line);
  }
}

uint64_t SlowCallLog::logged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return logged_;
}

uint64_t SlowCallLog::suppressed_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return suppressed_total_;
}

}  // namespace nfs3d::stats
