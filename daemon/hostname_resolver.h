// Reverse-resolves client addresses for exports that name hosts
// ("client.example.com(rw)", "*.lab(ro)"). A name counts only when it
// resolves forward to the same address (so a PTR record alone cannot claim a
// name). Answers are cached, because lookups may block and exports are
// checked on every call.
#ifndef NFS3D_DAEMON_HOSTNAME_RESOLVER_H_
#define NFS3D_DAEMON_HOSTNAME_RESOLVER_H_

#include <sys/socket.h>

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nfs3d::daemon {

class CachingHostnameResolver {
 public:
  explicit CachingHostnameResolver(absl::Duration ttl = absl::Minutes(5), size_t max_entries = 4096)
      : ttl_(ttl), max_entries_(max_entries) {}

  // The confirmed, lower-case name of peer, or "" when it has none.
  std::string Resolve(const sockaddr* peer, socklen_t len);

 private:
  struct Entry {
    std::string name;
    absl::Time expires;
  };
  const absl::Duration ttl_;
  const size_t max_entries_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> cache_ ABSL_GUARDED_BY(mu_);  // by numeric address
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_HOSTNAME_RESOLVER_H_
