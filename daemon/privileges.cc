#include "daemon/privileges.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

#include "common/log.h"

// Raw capget/capset rather than libcap: the drop is two syscalls and a few
// prctls made once on one thread, which does not warrant a new build
// dependency (libcap-dev), and libcap's process-wide variant (libpsx) is not
// needed when no other thread exists yet.
namespace nfs3d::daemon {
namespace {

constexpr Capability kServing[] = {
    {CAP_SETUID, "CAP_SETUID",
     "each call runs as its caller's fsuid (setfsuid per thread); RQUOTA reads a quota as its "
     "owner's euid"},
    {CAP_SETGID, "CAP_SETGID", "each call runs with its caller's fsgid and groups"},
    {CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH", "file handles are opened with open_by_handle_at"},
    // The file-system set setfsuid(0) restores: what an unsquashed root
    // caller may do (knfsd grants root callers the same).
    {CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE", "root callers read and write regardless of mode"},
    {CAP_FOWNER, "CAP_FOWNER", "root callers chmod, utimes and set ACLs on any file"},
    {CAP_CHOWN, "CAP_CHOWN", "root callers chown (SETATTR uid/gid)"},
    {CAP_FSETID, "CAP_FSETID", "root callers keep setuid/setgid bits on write and set them"},
    {CAP_MKNOD, "CAP_MKNOD", "MKNOD of device files"},
    // Not CAP_SYS_RESOURCE, which knfsd gives root callers: without it a
    // root client cannot use the blocks a file system reserves for the
    // server's own root, nor pass quotas; a splice pipe beyond root's
    // per-user pipe allowance (64 MiB) stays at its default size.
    // The widest one kept. The export setup that uses it runs after threads
    // exist (daemon.cc), so it cannot be dropped after setup without
    // reaching every thread; systemd's unit leaves it out (see there).
    {CAP_SYS_ADMIN, "CAP_SYS_ADMIN",
     "open_tree: the directories mounts below an export cover (LOOKUP without crossmnt); "
     "fanotify: directory moves under sub-directory exports"},
    {CAP_NET_BIND_SERVICE, "CAP_NET_BIND_SERVICE",
     "ports below 1024 (2049, 111 for the own portmapper, NLM callbacks from a reserved port)"},
};
constexpr Capability kClusterHead = {
    CAP_NET_RAW, "CAP_NET_RAW",
    "a [cluster] head resets a dead instance's client connections with tickle ACKs"};

struct CapSets {
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
};

bool Has(const CapSets& s, int cap, __u32 __user_cap_data_struct::*set) {
  return (s.data[cap / 32].*set & (1u << (cap % 32))) != 0;
}

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat("dropping privileges: ", what, ": ", strerror(errno)));
}

// "Threads:" of /proc/self/status; 0 when unknown.
int ThreadCount() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return 0;
}

}  // namespace

std::vector<Capability> NeededCapabilities(const conf::ServerConfig& config) {
  std::vector<Capability> caps(std::begin(kServing), std::end(kServing));
  // Tickle ACKs are sent only by a head of a cluster (daemon.cc).
  if (!config.cluster_node_id.empty()) caps.push_back(kClusterHead);
  return caps;
}

absl::Status DropPrivileges(const conf::ServerConfig& config) {
  if (geteuid() != 0) return absl::OkStatus();
  if (const int threads = ThreadCount(); threads > 1) {
    // Only this thread would lose its capabilities: say so loudly.
    NFS3D_LOG_WARNING("dropping privileges with %d threads running: only one drops", threads);
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapSets now;
  if (syscall(SYS_capget, &header, now.data) != 0) return Errno("capget");
  CapSets keep;
  std::string kept, missing;
  for (const Capability& cap : NeededCapabilities(config)) {
    if (!Has(now, cap.number, &__user_cap_data_struct::permitted)) {
      absl::StrAppend(&missing, missing.empty() ? "" : " ", cap.name);
      continue;
    }
    keep.data[cap.number / 32].permitted |= 1u << (cap.number % 32);
    keep.data[cap.number / 32].effective |= 1u << (cap.number % 32);
    absl::StrAppend(&kept, kept.empty() ? "" : " ", cap.name);
  }
  // The bounding set first: dropping from it needs CAP_SETPCAP, which goes
  // with the capset below. Without CAP_SETPCAP (systemd's
  // CapabilityBoundingSet already removed it) the unit's set bounds it.
  const bool setpcap = Has(now, CAP_SETPCAP, &__user_cap_data_struct::effective);
  for (int cap = 0; setpcap && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap) {
    if (Has(keep, cap, &__user_cap_data_struct::permitted)) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return Errno("PR_CAPBSET_DROP");
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return Errno("PR_CAP_AMBIENT_CLEAR_ALL");
  }
  if (syscall(SYS_capset, &header, keep.data) != 0) return Errno("capset");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("PR_SET_NO_NEW_PRIVS");
  NFS3D_LOG_INFO("capabilities kept: %s; the rest dropped, no_new_privs set", kept);
  if (!missing.empty()) {
    NFS3D_LOG_WARNING("capabilities nfs3d would use but was started without: %s", missing);
  }
  return absl::OkStatus();
}

}  // namespace nfs3d::daemon
