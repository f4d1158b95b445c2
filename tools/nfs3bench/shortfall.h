// Why a lab row moved less than the wire carries: the lab reports, for each
// READ/WRITE run below 90 % of nuttcp's figure on the same link, which limit
// it hit, from what the runs themselves measured.
#ifndef NFS3D_TOOLS_NFS3BENCH_SHORTFALL_H_
#define NFS3D_TOOLS_NFS3BENCH_SHORTFALL_H_

#include <string>

#include "tools/nfs3bench/workloads.h"

namespace nfs3d::bench {

// Runs at or above this share of the wire need no explanation.
inline constexpr double kWireShareExplained = 0.9;

// "" when `r` reached kWireShareExplained of r.wire_mbps (or has no wire
// figure). Otherwise the first limit that accounts for the gap:
//  1. calls in flight x round trip: `stop_and_wait` (the same workload, size,
//     proto and MTU with one call in flight, may be null) took L per call, so
//     r.outstanding calls of r.xfer bytes can move at most
//     outstanding * xfer / L; below the threshold, the window is the limit;
//  2. loss: the client retransmitted (a UDP call or reply lost, usually a
//     fragment of it; each costs a retransmit timeout); `drops` (the lab's
//     DescribeDrops of the run, may be "") names where they were lost;
//  3. CPU: the server or the client used >= 85 % of a core, or the machine's
//     `cores` were >= 85 % busy (whoever used them: on a shared machine other
//     processes take CPU from both ends);
//  4. otherwise "unexplained", with the figures that were checked.
std::string ExplainShortfall(const RunResult& r, const RunResult* stop_and_wait, int cores,
                             const std::string& drops = "");

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_SHORTFALL_H_
