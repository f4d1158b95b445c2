// The thread pools that run calls. Data calls (READ, WRITE, COMMIT) and every
// other program (MOUNT, NLM, NSM, portmap) go to the main pool, which is
// large: FILE_SYNC writes and COMMITs wait in fsync there, and the more of
// them wait together the more one sync answers. NFSv3 metadata calls may go
// to a small pool of their own: with one idle thread of a large pool woken
// per call, CREATE+SETATTR+REMOVE spent 45% of the server's CPU in context
// switches (perf), and 4 threads instead of 16 gave 70k instead of 46k calls/s.
#ifndef NFS3D_RPC_WORKER_POOLS_H_
#define NFS3D_RPC_WORKER_POOLS_H_

#include <cstdint>
#include <functional>

#include "absl/types/span.h"
#include "boost/asio/thread_pool.hpp"

#include "rpc/extra_workers.h"
#include "rpc/inline_calls.h"
#include "rpc/service.h"
#include "rpc/spare_cores.h"

namespace nfs3d::rpc {

struct WorkerPools {
  boost::asio::thread_pool* main = nullptr;
  boost::asio::thread_pool* metadata = nullptr;  // null: main runs everything
  const SpareCores* spare_cores = nullptr;       // null: never spread inline calls
  // True for an inline call (rpc/inline_calls.h) that may wait on something
  // remote and so must run on a worker instead; null: none does.
  const std::function<bool(absl::Span<const uint8_t> call)>* may_block = nullptr;
  // Answers a call again once the layers below gave up on it and answer it
  // early (rpc/running_call.h); null: calls are never answered early.
  RpcService* late = nullptr;
  // Threads lent to each pool meanwhile; null for a pool without.
  ExtraWorkers* main_extra = nullptr;
  ExtraWorkers* metadata_extra = nullptr;

  ExtraWorkers* ExtraFor(const boost::asio::thread_pool* pool) const {
    return pool == main ? main_extra : pool == metadata ? metadata_extra : nullptr;
  }

  // True if `call`, an inline call, may run on the io thread.
  bool MayRunInline(absl::Span<const uint8_t> call) const {
    return may_block == nullptr || !(*may_block)(call);
  }

  // True if `call` runs on the metadata pool.
  bool IsMetadata(absl::Span<const uint8_t> call) const {
    return metadata != nullptr && IsNfsMetadataCall(call);
  }
  // True if an inline call may go to the metadata pool instead (InlineBudget):
  // that pool takes it and the machine has a core to spare.
  bool CanSpread(absl::Span<const uint8_t> call) const {
    return IsMetadata(call) && HasSpareCore();
  }
  // True while the machine has a core to spare (SpareCores); never without one.
  bool HasSpareCore() const { return spare_cores != nullptr && spare_cores->available(); }
  boost::asio::thread_pool& For(absl::Span<const uint8_t> call) const {
    return IsMetadata(call) ? *metadata : *main;
  }
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_WORKER_POOLS_H_
