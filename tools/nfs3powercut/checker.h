// The checking side of a power cut: after the server's machine booted
// again, compares what the server holds with the journal of what it
// acknowledged before the cut.
#ifndef NFS3D_TOOLS_NFS3POWERCUT_CHECKER_H_
#define NFS3D_TOOLS_NFS3POWERCUT_CHECKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "tools/nfs3bench/session.h"
#include "tools/nfs3powercut/model.h"

namespace nfs3d::powercut {

struct CheckReport {
  uint64_t bytes_verified = 0;       // acknowledged-stable bytes read back intact
  uint64_t stable_bytes_lost = 0;    // acknowledged-stable bytes missing or different
  uint64_t uncommitted_bytes = 0;    // UNSTABLE bytes never committed, verifier changed
  uint64_t uncommitted_present = 0;  // ... of which the server still had
  uint64_t verifier_changes = 0;     // 1 when the server's verifier differs from before the cut
  uint64_t namespace_changes = 0;    // acknowledged create/rename/link/chmod/remove
  uint64_t namespace_lost = 0;       // names whose state does not match them
  uint64_t handles_checked = 0;
  uint64_t handles_stale = 0;      // handles of live objects that no longer resolve
  bool in_flight_applied = false;  // the server holds the call in flight at the cut
  // Namespace calls sent again with their xid after the cut, as a client
  // that never saw the reply would: "KIND=STATUS" (KIND the journal's op,
  // "inflight_" before the call in flight at the cut).
  std::vector<std::string> resent;
  uint64_t exclusive_failed = 0;  // acknowledged CREATE EXCLUSIVE resent: not its file
  std::vector<std::string> problems;

  bool ok() const {
    return stable_bytes_lost == 0 && namespace_lost == 0 && handles_stale == 0 &&
           exclusive_failed == 0;
  }
  std::string Summary() const;  // key=value pairs on one line
};

// Errors are for calls that failed; what the server lost is in the report.
absl::StatusOr<CheckReport> RunCheck(bench::Session& session, const Replay& replay);

}  // namespace nfs3d::powercut

#endif  // NFS3D_TOOLS_NFS3POWERCUT_CHECKER_H_
