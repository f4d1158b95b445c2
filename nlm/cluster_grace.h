// The lock grace period of heads that serve one file system together
// ([cluster]): while any head's clients may still reclaim locks, no head
// grants a new one. Each head that enters a grace period (a start after
// which its clients reclaim, possibly on another machine, its dead
// instance's CephFS session reset) records its end in a file of its own,
// grace.<node_id>, in the cluster's shared directory; a head checking
// before a new lock reads them all and takes the latest end. One file per
// head: heads never write the same file.
#ifndef NFS3D_NLM_CLUSTER_GRACE_H_
#define NFS3D_NLM_CLUSTER_GRACE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "common/durable_files.h"

namespace nfs3d::nlm {

// Records that node_id's grace period ends `left` from `now`. Ends are
// kept in whole seconds, rounded up so that no reader sees a period end
// early; with nothing left the period is recorded as over (0), not rounded
// up to the next second: a successor that ends the short lock-move period
// must not leave the other heads up to a second of it.
absl::Status RecordGraceEnd(DurableFiles& shared, const std::string& node_id, absl::Duration left,
                            absl::Time now = absl::Now());

// The latest grace end any head recorded (InfinitePast: none).
absl::StatusOr<absl::Time> LatestGraceEnd(DurableFiles& shared);

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_CLUSTER_GRACE_H_
