// Measures what statistics add to one call through the dispatcher: the same
// GETATTR-sized call (status word + fattr3) with stats on and off, in one
// thread, best of several rounds. Not a test: prints ns per call.
//   stats_overhead_bench [calls]
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rpc/dispatcher.h"
#include "stats/server_stats.h"
#include "xdr/encoder.h"

namespace {

using nfs3d::rpc::ProcResult;

ProcResult Getattr(void*, const nfs3d::rpc::CallContext&, nfs3d::xdr::Decoder& args,
                   nfs3d::xdr::Encoder& out) {
  args.Opaque(64);
  out.U32(0);
  for (int i = 0; i < 21; ++i) out.U32(i);
  return ProcResult::kSuccess;
}

const nfs3d::rpc::Procedure kProcs[] = {{0, "NULL", nullptr}, {1, "GETATTR", Getattr}};

double NsPerCall(nfs3d::stats::ServerStats* stats, long calls) {
  nfs3d::rpc::Program program;
  program.number = 100003;
  program.name = "nfs";
  program.versions.push_back({3, kProcs});
  nfs3d::rpc::DispatcherOptions options;
  options.stats = stats;
  nfs3d::rpc::Dispatcher dispatcher(options);
  dispatcher.AddProgram(&program);
  nfs3d::rpc::TransportInfo tcp;
  nfs3d::xdr::BufferChain chain;
  nfs3d::xdr::Encoder e(&chain);
  for (uint32_t w : {1u, 0u, 2u, 100003u, 3u, 1u, 1u, 20u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u}) e.U32(w);
  e.Opaque(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>("0123456789abcdef0123"
                                                                       "456789abcdef"),
                                     32));
  const std::string message = chain.Flatten();
  const absl::Span<const uint8_t> span(reinterpret_cast<const uint8_t*>(message.data()),
                                       message.size());
  nfs3d::xdr::BufferChain reply;
  const auto begin = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) dispatcher.HandleCall(span, tcp, &reply);
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - begin).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  double best_on = 1e18, best_off = 1e18;
  for (int round = 0; round < 5; ++round) {
    nfs3d::stats::ServerStats stats;
    best_off = std::min(best_off, NsPerCall(nullptr, calls));
    best_on = std::min(best_on, NsPerCall(&stats, calls));
  }
  std::printf("dispatcher GETATTR-shaped call: %.1f ns without stats, %.1f ns with "
              "(NFS3D_STATS_ENABLED=%d): +%.1f ns per call\n",
              best_off, best_on, NFS3D_STATS_ENABLED, best_on - best_off);
  return 0;
}
