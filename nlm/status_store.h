// What the status monitor keeps durably, in <state_dir>/nsm/ (or, on a head
// of a [cluster], in the cluster's shared directory: common/durable_files.h):
//   state          this server's NSM state number. Opening the store bumps it
//                  to the next odd number (odd = up, the NSM convention), so
//                  every start has a new state that clients can tell apart.
//   hosts/<id>     one file per client that held locks ("monitored" hosts):
//                  its name, its address, the address of ours it used and
//                  (a line older nfs3d neither writes nor reads) the NSM
//                  state its LOCKs gave, so that a successor or a takeover
//                  head refuses an SM_NOTIFY that is not newer.
//                  After a restart these are the clients told to reclaim.
// Every file is replaced atomically (write, sync, rename).
#ifndef NFS3D_NLM_STATUS_STORE_H_
#define NFS3D_NLM_STATUS_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "common/durable_files.h"

namespace nfs3d::nlm {

struct MonitoredHost {
  std::string name;           // the client's NLM caller_name
  std::string address;        // its numeric IP address
  std::string local_address;  // our numeric IP address it sent locks to
  int32_t nsm_state = 0;      // the client's, from its LOCKs; 0: not known
  bool operator==(const MonitoredHost&) const = default;
};

class StatusStore {
 public:
  // Opens <state_dir>/nsm, creating it if needed (see Open below).
  static absl::StatusOr<std::unique_ptr<StatusStore>> Open(const std::string& state_dir,
                                                           bool bump = true);
  // Reads the previous state and hosts from `nsm` and its sub-directory
  // "hosts", and persists the new state number before returning. Without
  // `bump` the state stays the one on disk: a successor taking over from a
  // running nfs3d (daemon/handover.h) is the same NSM instance.
  static absl::StatusOr<std::unique_ptr<StatusStore>> Open(std::unique_ptr<DurableFiles> nsm,
                                                           bool bump = true);
  // The bump Open left out: the takeover did not get the lock state after
  // all, so clients must reclaim as after a restart.
  absl::Status Bump();

  // Whether `nsm` (as Open takes it) holds hosts recorded by earlier runs,
  // read without opening the store (no new state number).
  static absl::StatusOr<bool> HasRecordedHosts(DurableFiles& nsm);

  int32_t state() const { return state_; }
  // Hosts recorded by earlier runs (read at Open).
  const std::vector<MonitoredHost>& previous_hosts() const { return previous_; }

  // Records (or updates) a host; durable when it returns.
  absl::Status AddHost(const MonitoredHost& host);
  absl::Status RemoveHost(const std::string& name);

 private:
  StatusStore(std::unique_ptr<DurableFiles> nsm, std::unique_ptr<DurableFiles> hosts)
      : nsm_(std::move(nsm)), hosts_(std::move(hosts)) {}

  std::unique_ptr<DurableFiles> nsm_;
  std::unique_ptr<DurableFiles> hosts_;
  int32_t state_ = 0;
  std::vector<MonitoredHost> previous_;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_STATUS_STORE_H_
