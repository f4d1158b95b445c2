// Minimal leveled logging. Debian 12's abseil has no absl/log, so nfs3d keeps
// its own: one line per event, to stderr (default) or syslog, filtered by a
// global level. Formatting uses absl::StrFormat so arguments are type-checked.
#ifndef NFS3D_COMMON_LOG_H_
#define NFS3D_COMMON_LOG_H_

#include <string_view>

#include "absl/strings/str_format.h"

namespace nfs3d::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below this level are dropped. Default kInfo.
void SetLevel(Level level);
Level GetLevel();
// Route output to syslog (ident "nfs3d") instead of stderr.
void UseSyslog(bool on);
// Parses "debug", "info", "warning", "error". Returns false on anything else.
bool ParseLevel(std::string_view text, Level* out);

void Write(Level level, std::string_view message);

template <typename... Args>
void Logf(Level level, const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (level < GetLevel()) return;
  Write(level, absl::StrFormat(format, args...));
}

}  // namespace nfs3d::log

#define NFS3D_LOG_DEBUG(...) ::nfs3d::log::Logf(::nfs3d::log::Level::kDebug, __VA_ARGS__)
#define NFS3D_LOG_INFO(...) ::nfs3d::log::Logf(::nfs3d::log::Level::kInfo, __VA_ARGS__)
#define NFS3D_LOG_WARNING(...) ::nfs3d::log::Logf(::nfs3d::log::Level::kWarning, __VA_ARGS__)
#define NFS3D_LOG_ERROR(...) ::nfs3d::log::Logf(::nfs3d::log::Level::kError, __VA_ARGS__)

#endif  // NFS3D_COMMON_LOG_H_
