// MOUNT protocol v1 and v3 (RFC 1813 Appendix I): hands out export root
// handles to permitted clients and keeps the list DUMP reports.
#ifndef NFS3D_NFSD_MOUNT_PROGRAM_H_
#define NFS3D_NFSD_MOUNT_PROGRAM_H_

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "nfsd/nfs_server.h"
#include "rpc/program.h"

namespace nfs3d::nfsd {

class MountService {
 public:
  // Export table, client matching and backend are the NFS server's, so MOUNT
  // and NFS always agree on who may use what.
  explicit MountService(const NfsServer* nfs) : nfs_(nfs) {}

  const NfsServer& nfs() const { return *nfs_; }

  void AddMount(const std::string& host, const std::string& dir);
  void RemoveMount(const std::string& host, const std::string& dir);
  void RemoveAllMounts(const std::string& host);
  std::set<std::pair<std::string, std::string>> Mounts() const;

 private:
  const NfsServer* nfs_;
  mutable absl::Mutex mu_;
  std::set<std::pair<std::string, std::string>> mounts_ ABSL_GUARDED_BY(mu_);  // (host, dir)
};

// The MOUNT program (100005, versions 1 and 3) served by `service`. The
// returned Program refers to static tables and to `service`.
rpc::Program MakeMountProgram(MountService* service);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_MOUNT_PROGRAM_H_
