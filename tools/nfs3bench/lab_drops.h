// Where the lab's datagrams were lost: counters of every place on the path
// between the server and the client namespace that can drop one, read before
// and after each run so a row can say which place dropped what.
//
//   server socket -> server qdisc (tbf) -> veth -> client IP reassembly ->
//   client socket receive queue, and the same places the other way round.
#ifndef NFS3D_TOOLS_NFS3BENCH_LAB_DROPS_H_
#define NFS3D_TOOLS_NFS3BENCH_LAB_DROPS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace nfs3d::bench {

// Counters by place, e.g. "server qdisc" -> packets it dropped. Places are
// named "<end> <what>"; see DropPlaces() for the list and their order.
using DropCounts = std::map<std::string, uint64_t>;

// The places in the order a READ reply meets them (a WRITE call meets their
// mirror images): the first place with drops is where a loss began.
const std::vector<std::string>& DropPlaces();

// Parsers of the kernel's texts (exposed for tests). All return false when
// the text lacks what they look for.
// /proc/net/snmp: Udp RcvbufErrors and SndbufErrors, Ip ReasmFails and
// ReasmTimeout, under "<prefix> rcvbuf" and so on.
bool ParseSnmp(absl::string_view text, const std::string& prefix, DropCounts* out);
// /proc/net/udp (and udp6): the sum of the last column (per-socket drops).
bool ParseSocketDrops(absl::string_view text, uint64_t* drops);
// `tc -s qdisc show dev X`: the sum of every qdisc's "dropped N".
bool ParseQdiscDrops(absl::string_view text, uint64_t* drops);
// /proc/net/dev: rx and tx drops of one interface.
bool ParseDevDrops(absl::string_view text, absl::string_view dev, uint64_t* drops);

// Reads every counter of one end: `netns_pid` is a process inside that
// end's network namespace (0: this process's), `netns` its name for tc and
// `dev` its veth. Missing sources leave their places out.
void ReadEnd(const std::string& end, pid_t netns_pid, const char* netns, const char* dev,
             DropCounts* out);

// after - before, places with no drops left out.
DropCounts DropDelta(const DropCounts& before, const DropCounts& after);

// "server qdisc 12, client reassembly 12 (timeouts 12)" in DropPlaces()
// order; "" when nothing was dropped.
std::string DescribeDrops(const DropCounts& delta);

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_LAB_DROPS_H_
