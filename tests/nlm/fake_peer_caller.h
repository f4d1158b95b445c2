// A PeerCaller that records calls and answers them from a script, standing
// in for clients' lock managers and status monitors.
#ifndef NFS3D_TESTS_NLM_FAKE_PEER_CALLER_H_
#define NFS3D_TESTS_NLM_FAKE_PEER_CALLER_H_

#include <vector>

#include "absl/synchronization/mutex.h"

#include "nlm/nlm4_codec.h"
#include "nlm/peer_caller.h"
#include "xdr/buffer_chain.h"
#include "xdr/encoder.h"

namespace nfs3d::nlm {

class FakePeerCaller : public PeerCaller {
 public:
  absl::StatusOr<std::string> Call(const PeerCall& call) override {
    absl::MutexLock lock(&mu_);
    calls_.push_back(call);
    if (!reachable_) return absl::UnavailableError("unreachable");
    if (call.prog == kProgram && call.proc == kGranted) {
      nlm4_res res;
      res.stat = granted_answer_;
      xdr::BufferChain chain;
      xdr::Encoder e(&chain);
      Encode(e, res);
      return chain.Flatten();
    }
    return std::string();
  }

  std::vector<PeerCall> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  void set_reachable(bool r) {
    absl::MutexLock lock(&mu_);
    reachable_ = r;
  }
  void set_granted_answer(nlm4_stats s) {
    absl::MutexLock lock(&mu_);
    granted_answer_ = s;
  }

 private:
  absl::Mutex mu_;
  std::vector<PeerCall> calls_;
  bool reachable_ = true;
  nlm4_stats granted_answer_ = NLM4_GRANTED;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_TESTS_NLM_FAKE_PEER_CALLER_H_
