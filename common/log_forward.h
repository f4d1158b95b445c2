// A plugin (vfs/backend_plugin.h) has its own copy of the logger of
// common/log.h: pointed at the process's GetLevel and Write, its lines follow
// the level and the destination (stderr or syslog) that nfs3d's flags and
// SIGHUP set.
#ifndef NFS3D_COMMON_LOG_FORWARD_H_
#define NFS3D_COMMON_LOG_FORWARD_H_

#include <string_view>

#include "common/log.h"

namespace nfs3d::log {

struct Forward {
  Level (*get_level)();
  void (*write)(Level, std::string_view);
};
// From now on this copy of the logger asks `to` (which must outlive it).
void ForwardTo(const Forward* to);

}  // namespace nfs3d::log

#endif  // NFS3D_COMMON_LOG_FORWARD_H_
