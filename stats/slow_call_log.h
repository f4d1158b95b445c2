// The slow-call log: a call that took longer than `[log] slow_call_ms` is
// logged once, when it completes, with who sent it (client, user), where it
// went (export, procedure, file handle) and where the time went (in the
// procedure, i.e. the backend, versus decoding, the duplicate request cache
// and encoding around it). Lines are rate-limited: at most `burst` per
// second; the next line that gets out says how many were left out.
#ifndef NFS3D_STATS_SLOW_CALL_LOG_H_
#define NFS3D_STATS_SLOW_CALL_LOG_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "absl/types/span.h"

namespace nfs3d::stats {

struct SlowCall {
  std::string client;  // address
  std::string user;    // uid, principal or "-"
  uint32_t export_id = 0;
  bool has_export = false;
  std::string proc;                  // "nfs GETATTR"
  absl::Span<const uint8_t> handle;  // empty: none
  uint32_t xid = 0;
  uint64_t total_ns = 0;  // arrival at the dispatcher to encoded reply
  uint64_t proc_ns = 0;   // inside the procedure (backend calls)
};

class SlowCallLog {
 public:
  // Export id -> its path (called on the slow path only, any thread).
  using ExportNamer = std::function<std::string(uint32_t)>;
  // The line goes here (default: the server log at WARNING).
  using Sink = std::function<void(const std::string&)>;

  SlowCallLog(ExportNamer namer, unsigned burst = 10, Sink sink = nullptr);

  // 0 turns it off; may change while serving (reload).
  void SetThresholdMs(uint64_t ms) { threshold_ns_.store(ms * 1000000, std::memory_order_relaxed); }
  uint64_t threshold_ns() const { return threshold_ns_.load(std::memory_order_relaxed); }

  void Report(const SlowCall& call);
  uint64_t logged() const;
  uint64_t suppressed_total() const;

 private:
  const ExportNamer namer_;
  const unsigned burst_;
  const Sink sink_;
  std::atomic<uint64_t> threshold_ns_{0};
  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point window_start_;  // guarded by mu_
  unsigned in_window_ = 0;                              // guarded by mu_
  uint64_t suppressed_ = 0;                             // since the last line
  uint64_t suppressed_total_ = 0;
  uint64_t logged_ = 0;
};

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_SLOW_CALL_LOG_H_
