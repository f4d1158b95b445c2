#include "tools/nfs3bench/lab.h"

#include <cstdio>

namespace nfs3d::bench {

int RunLab(const CommandLine& cl, SweepConfig config, const std::atomic<bool>* stop) {
  std::fprintf(stderr, "nfs3bench: lab: not built yet\n");
  return 3;
}

}  // namespace nfs3d::bench
