// The one message nfs3d sends systemd (sd_notify(3) protocol, written here
// to need no libsystemd): after a takeover the successor becomes the
// service's main process. Nothing happens outside systemd (no
// NOTIFY_SOCKET). The unit needs NotifyAccess=all.
#ifndef NFS3D_DAEMON_SYSTEMD_NOTIFY_H_
#define NFS3D_DAEMON_SYSTEMD_NOTIFY_H_

#include <sys/types.h>

namespace nfs3d::daemon {

void NotifySystemdMainPid(pid_t pid);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_SYSTEMD_NOTIFY_H_
