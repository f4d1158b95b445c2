// The status monitor program (NSM, 100024 v1) as nfs3d serves it: SM_NOTIFY
// from a client that rebooted releases that client's locks; SM_STAT answers
// with nfs3d's state number; SM_MON/SM_UNMON/SM_UNMON_ALL keep the monitor
// list of local lock managers (only root on loopback may use them, and only
// for NLM's program, as with rpc.statd) and those are called back when a
// monitored host reports a reboot. SM_SIMU_CRASH is accepted and does nothing.
// SM_NOTIFY counts only from the host it names (nlm::NlmService::HostRebooted)
// or from root on loopback.
#ifndef NFS3D_NLM_NSM_PROGRAM_H_
#define NFS3D_NLM_NSM_PROGRAM_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "nlm/nlm_service.h"
#include "nlm/nsm_types.h"
#include "rpc/program.h"

namespace nfs3d::nsm {

class NsmService {
 public:
  explicit NsmService(nlm::NlmService* nlm, size_t max_monitors = 1024)
      : nlm_(nlm), max_monitors_(max_monitors) {}

  nlm::NlmService& nlm() { return *nlm_; }
  int32_t state() const { return nlm_->nsm_state(); }

  bool Monitor(const mon& m);
  void Unmonitor(const mon_id& id);
  void UnmonitorAll(const my_id& id);
  // A host reported a new state: release its locks, call back its monitors.
  // `trusted`: the call came from root on loopback (a local statd).
  void Notify(const stat_chge& change, const sockaddr_storage* from, bool trusted);
  size_t monitor_count() const;

 private:
  nlm::NlmService* nlm_;
  const size_t max_monitors_;
  mutable absl::Mutex mu_;
  std::vector<mon> monitors_ ABSL_GUARDED_BY(mu_);
};

// The returned Program refers to a static table and to `service`.
rpc::Program MakeNsmProgram(NsmService* service);

}  // namespace nfs3d::nsm

#endif  // NFS3D_NLM_NSM_PROGRAM_H_
