// The lock manager's state as a successor process takes it over (daemon/
// handover.h): what NlmService::Snapshot gives and StartFrom puts back.
// Queued blocking LOCKs and GRANTED callbacks not yet delivered are in it:
// the successor grants the first and sends the second.
#ifndef NFS3D_NLM_NLM_SNAPSHOT_H_
#define NFS3D_NLM_NLM_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nlm/lock_table.h"
#include "nlm/nlm4_types.h"
#include "nlm/share_table.h"
#include "rpc/call_context.h"

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
  // A blocking LOCK that got NLM4_BLOCKED, or one granted (its lock is in
  // `locks`) whose GRANTED callback was not delivered.
  struct Waiter {
    std::string file;
    nlm4_lock alock;  // the owner and range, as the request named them
    bool exclusive = false;
    netobj cookie;
    std::string address;  // numeric (AddressString): where the callback goes
    rpc::Transport transport = rpc::Transport::kUdp;
    uint32_t vers = kVersion4;
    bool granted = false;
  };
  std::vector<Waiter> waiters;  // in queue order
  int64_t grace_left_ms = 0;    // of a grace period still running; 0: none
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NLM_SNAPSHOT_H_
