// Wires the RPC layer's early answers (rpc/running_call.h) to the backend
// wrapper that needs them (vfs/deadline_backend.h): vfs asks through
// vfs::RequestRescuer and includes no rpc/ header; rpc answers through an
// RpcService and includes no vfs/ header; this file knows both.
#ifndef NFS3D_DAEMON_EARLY_ANSWERS_H_
#define NFS3D_DAEMON_EARLY_ANSWERS_H_

#include <cstdint>

#include "rpc/running_call.h"
#include "rpc/service.h"
#include "vfs/deadline_backend.h"
#include "vfs/request_rescuer.h"

namespace nfs3d::daemon {

// The request a worker serves is its RunningCall.
class RunningCallRescuer : public vfs::RequestRescuer {
 public:
  void* Current() const override { return rpc::RunningCall::Current(); }
  void AnswerNow(void* request) override {
    rpc::RunningCall::AnswerNow(static_cast<rpc::RunningCall*>(request));
  }
};

// Answers a call again with every DeadlineBackend failing at once (so a
// call stuck in the cluster is answered NFS3ERR_JUKEBOX):
// RpcServerOptions::late_service.
class FailFastService : public rpc::RpcService {
 public:
  explicit FailFastService(rpc::RpcService* inner) : inner_(inner) {}
  bool HandleCall(absl::Span<const uint8_t> message, const rpc::TransportInfo& transport,
                  xdr::BufferChain* reply) override {
    vfs::DeadlineBackend::FailFastScope fail_fast;
    return inner_->HandleCall(message, transport, reply);
  }

 private:
  rpc::RpcService* const inner_;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_EARLY_ANSWERS_H_
