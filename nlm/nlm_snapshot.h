// The lock manager's state as a successor process takes it over (daemon/
// handover.h): what NlmService::Snapshot gives and StartFrom puts back.
// Queued blocking LOCKs and GRANTED callbacks in flight are not in it: the
// client asks again (Linux every 30 s) and the successor answers then.
#ifndef NFS3D_NLM_NLM_SNAPSHOT_H_
#define NFS3D_NLM_NLM_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nlm/lock_table.h"
#include "nlm/share_table.h"

namespace nfs3d::nlm {

struct NlmSnapshot {
  struct HostRecord {
    std::string name;
    std::string address;
    std::string local_address;
    bool recorded = false;  // in the StatusStore
    bool previous = false;  // from before the last restart: forgotten after grace
  };
  std::vector<std::pair<std::string, Lock>> locks;  // file, lock
  std::vector<std::pair<std::string, ShareReservation>> shares;
  std::vector<HostRecord> hosts;
  int64_t grace_left_ms = 0;  // of a grace period still running; 0: none
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NLM_SNAPSHOT_H_
