// Least privilege for an nfs3d started as root: once the configuration is
// read and before the first thread starts, keep only the capabilities that
// configuration needs, take the rest out of the bounding set (no exec gets
// them back), clear the inheritable and ambient sets, and set no_new_privs.
// Capabilities belong to each thread and a new thread inherits its
// creator's, so dropping them on the only thread drops them for every
// thread nfs3d will have. Not root (tests, a user's own server): nothing.
// Sockets are bound later, on ports below 1024 too (CAP_NET_BIND_SERVICE
// stays), and a `--takeover` successor, which binds nothing, keeps the same
// set: it may become the server a reload rebinds from.
#ifndef NFS3D_DAEMON_PRIVILEGES_H_
#define NFS3D_DAEMON_PRIVILEGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "conf/server_config.h"

namespace nfs3d::daemon {

struct Capability {
  int number;        // CAP_* of <linux/capability.h>
  const char* name;  // "CAP_CHOWN"
  const char* why;   // what nfs3d does with it
};

// The capabilities a server with `config` uses, each with its reason.
std::vector<Capability> NeededCapabilities(const conf::ServerConfig& config);

// Keeps NeededCapabilities(config) (those the process has), drops every
// other one and sets no_new_privs; logs "capabilities kept: ...". Does
// nothing when the effective uid is not 0. An error says which step failed
// (nfs3d then does not start: a half-dropped set is not what was asked).
absl::Status DropPrivileges(const conf::ServerConfig& config);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_PRIVILEGES_H_
