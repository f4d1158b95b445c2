// The RPC layer proper: turns one call message into one reply (or nothing).
// Decodes the header, checks the credential, finds the procedure row,
// consults the duplicate request cache and runs the row.
#ifndef NFS3D_RPC_DISPATCHER_H_
#define NFS3D_RPC_DISPATCHER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rpc/duplicate_cache.h"
#include "rpc/program.h"
#include "rpc/service.h"
#include "rpc/wrapping_flavor.h"
#include "stats/server_stats.h"

namespace nfs3d::rpc {

struct DispatcherOptions {
  bool enable_drc = true;
  DuplicateCacheOptions drc;
  // Per-procedure statistics; null = not kept. Must outlive the dispatcher.
  stats::ServerStats* stats = nullptr;
  // RPCSEC_GSS (or another wrapping flavor); null = its calls get
  // AUTH_BADCRED like any unknown flavor. Must outlive the dispatcher.
  WrappingFlavor* wrapping = nullptr;
};

class Dispatcher : public RpcService {
 public:
  explicit Dispatcher(DispatcherOptions options = {});
  ~Dispatcher() override;
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Registers a program; call before serving. The Program must outlive the
  // dispatcher. Registering a program number twice replaces the first.
  void AddProgram(const Program* program);

  // RpcService. Clears *reply, then fills it with the complete reply message.
  bool HandleCall(absl::Span<const uint8_t> message, const TransportInfo& transport,
                  xdr::BufferChain* reply) override;

  // Every registered (program, version) pair, for the portmapper.
  std::vector<std::pair<uint32_t, uint32_t>> Registered() const;

  // Zeros when the cache is disabled.
  DuplicateCacheStats drc_stats() const;
  // The cache itself (null when disabled): handed to a successor process.
  DuplicateCache* drc() const { return drc_.get(); }

 private:
  const Program* FindProgram(uint32_t prog) const;
  // Everything after authentication: program lookup, the duplicate request
  // cache and the procedure. `drc_identity` joins the cache key.
  bool Dispatch(const CallHeader& header, absl::Span<const uint8_t> args, CallContext& ctx,
                std::string_view drc_identity, stats::CallRecorder& rec, xdr::BufferChain* reply);

  std::vector<const Program*> programs_;  // few entries: linear search wins
  std::unique_ptr<DuplicateCache> drc_;   // null when disabled
  stats::ServerStats* stats_ = nullptr;
  WrappingFlavor* wrapping_ = nullptr;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_DISPATCHER_H_
