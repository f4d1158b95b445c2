// nfs3bench lab: two network namespaces joined by a veth pair (chosen MTU,
// tbf rate limit, optional netem), the server under test in one, the sweep
// and nuttcp clients in the other. Everything lives inside a private network
// and mount namespace of this process, so it disappears when it exits, also
// on Ctrl-C or a crash; children get SIGKILL when nfs3bench dies.
#ifndef NFS3D_TOOLS_NFS3BENCH_LAB_H_
#define NFS3D_TOOLS_NFS3BENCH_LAB_H_

#include <atomic>

#include "tools/nfs3bench/options.h"
#include "tools/nfs3bench/sweep.h"

namespace nfs3d::bench {

// Returns the exit status (0, 1 run failed, 2 usage, 3 setup).
int RunLab(const CommandLine& cl, SweepConfig config, const std::atomic<bool>* stop);

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_LAB_H_
