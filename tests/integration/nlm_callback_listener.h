// A client's side of NLM callbacks for end-to-end tests: a portmapper and
// an NLM program on 127.0.0.1:111 (UDP and TCP) that answers GETPORT with
// 111 and records each NLM4 GRANTED call, answering NLM4_GRANTED. Port 111
// is the host's own: PrivateLoopback() first moves the test process (and the
// nfs3d it starts) into a network namespace of its own.
#ifndef NFS3D_TESTS_INTEGRATION_NLM_CALLBACK_LISTENER_H_
#define NFS3D_TESTS_INTEGRATION_NLM_CALLBACK_LISTENER_H_

#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "nlm/nlm4_codec.h"
#include "rpc/dispatcher.h"
#include "rpc/program.h"
#include "rpc/rpc_server.h"

namespace nfs3d::e2e {

// This process in a new network namespace with its loopback up; false when
// that is not allowed (not root).
inline bool PrivateLoopback() {
  if (unshare(CLONE_NEWNET) != 0) return false;
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  ifreq ifr = {};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags |= IFF_UP;
  up = up && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  close(s);
  return up;
}

class NlmCallbackListener {
 public:
  static constexpr uint16_t kPort = 111;

  NlmCallbackListener()
      : pmap_(rpc::SingleVersionProgram(100000, "portmap", 2, pmap_procs_, this)),
        nlm_(rpc::SingleVersionProgram(nlm::kProgram, "nlm", nlm::kVersion4, nlm_procs_, this)) {}
  ~NlmCallbackListener() {
    if (server_) server_->Stop();
  }

  absl::Status Start() {
    dispatcher_.AddProgram(&pmap_);
    dispatcher_.AddProgram(&nlm_);
    rpc::RpcServerOptions options;
    options.worker_threads = 1;
    server_ = std::make_unique<rpc::RpcServer>(options, &dispatcher_);
    if (absl::StatusOr<uint16_t> p = server_->ListenUdp("127.0.0.1", kPort); !p.ok()) {
      return p.status();
    }
    if (absl::StatusOr<uint16_t> p = server_->ListenTcp("127.0.0.1", kPort); !p.ok()) {
      return p.status();
    }
    server_->Start();
    return absl::OkStatus();
  }

  // The GRANTED calls so far, waiting up to `wait` for the first.
  std::vector<nlm::nlm4_testargs> Granted(absl::Duration wait) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(
        absl::Condition(
            +[](std::vector<nlm::nlm4_testargs>* g) { return !g->empty(); }, &granted_),
        wait);
    return granted_;
  }

 private:
  static rpc::ProcResult Null(void*, const rpc::CallContext&, xdr::Decoder&, xdr::Encoder&) {
    return rpc::ProcResult::kSuccess;
  }
  // GETPORT(prog, vers, prot, port): everything is served here.
  static rpc::ProcResult GetPort(void*, const rpc::CallContext&, xdr::Decoder& args,
                                 xdr::Encoder& results) {
    for (int i = 0; i < 4; ++i) args.U32();
    if (!args.ok()) return rpc::ProcResult::kGarbageArgs;
    results.U32(kPort);
    return rpc::ProcResult::kSuccess;
  }
  static rpc::ProcResult Grant(void* self, const rpc::CallContext&, xdr::Decoder& args,
                               xdr::Encoder& results) {
    nlm::nlm4_testargs granted;
    if (!xdr::Decode(args, &granted) || !args.ok()) return rpc::ProcResult::kGarbageArgs;
    nlm::nlm4_res res;
    res.cookie = granted.cookie;
    res.stat = nlm::NLM4_GRANTED;
    xdr::Encode(results, res);
    auto* listener = static_cast<NlmCallbackListener*>(self);
    absl::MutexLock lock(&listener->mu_);
    listener->granted_.push_back(std::move(granted));
    return rpc::ProcResult::kSuccess;
  }

  const rpc::Procedure pmap_procs_[4] = {
      {0, "NULL", Null}, {1, "SET"}, {2, "UNSET"}, {3, "GETPORT", GetPort}};
  const rpc::Procedure nlm_procs_[6] = {{0, "NULL", Null}, {1, "TEST"},   {2, "LOCK"},
                                        {3, "CANCEL"},     {4, "UNLOCK"}, {5, "GRANTED", Grant}};
  rpc::Program pmap_, nlm_;
  rpc::Dispatcher dispatcher_;
  std::unique_ptr<rpc::RpcServer> server_;
  absl::Mutex mu_;
  std::vector<nlm::nlm4_testargs> granted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nfs3d::e2e

#endif  // NFS3D_TESTS_INTEGRATION_NLM_CALLBACK_LISTENER_H_
