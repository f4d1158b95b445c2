#include "common/log.h"

#include <syslog.h>
#include <time.h>

#include <atomic>
#include <cstdio>

#include "common/log_forward.h"

namespace nfs3d::log {
namespace {
std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::atomic<bool> g_syslog{false};
std::atomic<const Forward*> g_forward{nullptr};

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "DEBUG";
    case Level::kInfo:
      return "INFO";
    case Level::kWarning:
      return "WARNING";
    case Level::kError:
      return "ERROR";
  }
  return "?";
}

int SyslogPriority(Level level) {
  switch (level) {
    case Level::kDebug:
      return LOG_DEBUG;
    case Level::kInfo:
      return LOG_INFO;
    case Level::kWarning:
      return LOG_WARNING;
    case Level::kError:
      return LOG_ERR;
  }
  return LOG_INFO;
}
}  // namespace

void SetLevel(Level level) { g_level.store(static_cast<int>(level)); }
Level GetLevel() {
  if (const Forward* f = g_forward.load(std::memory_order_relaxed)) return f->get_level();
  return static_cast<Level>(g_level.load(std::memory_order_relaxed));
}

void ForwardTo(const Forward* to) { g_forward.store(to); }

void UseSyslog(bool on) {
  if (on) openlog("nfs3d", LOG_PID, LOG_DAEMON);
  g_syslog.store(on);
}

bool ParseLevel(std::string_view text, Level* out) {
  if (text == "debug")
    *out = Level::kDebug;
  else if (text == "info")
    *out = Level::kInfo;
  else if (text == "warning")
    *out = Level::kWarning;
  else if (text == "error")
    *out = Level::kError;
  else
    return false;
  return true;
}

void Write(Level level, std::string_view message) {
  if (const Forward* f = g_forward.load(std::memory_order_relaxed)) {
    f->write(level, message);
    return;
  }
  if (g_syslog.load(std::memory_order_relaxed)) {
    syslog(SyslogPriority(level), "%.*s", static_cast<int>(message.size()), message.data());
    return;
  }
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  tm local;
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(stderr, "%s.%03ld nfs3d %s: %.*s\n", stamp, now.tv_nsec / 1000000, LevelName(level),
               static_cast<int>(message.size()), message.data());
}

}  // namespace nfs3d::log
