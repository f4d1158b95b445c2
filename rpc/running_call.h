// A call running on a worker thread, which the layers below may have
// answered before it returns: when a backend call overruns its deadline
// (vfs::DeadlineBackend), the worker stays stuck in it, but the client must
// hear NFS3ERR_JUKEBOX now. Its transport then runs the call's bytes again
// through WorkerPools::late (which makes the backend fail at once and skips
// the duplicate request cache: the original entry is still in progress),
// sends that reply, and drops the stuck call's own reply when it finally
// returns. Calls batched behind the stuck one move to the rescue task, and
// the pool gets a thread in place of the stuck one (ExtraWorkers).
//
// Lifetime: a RunningCall lives on its worker's stack for the duration of
// one HandleCall; AnswerNow may be called only while that HandleCall is
// held inside the backend (the caller's guarantee), so everything the call
// points to is alive then.
#ifndef NFS3D_RPC_RUNNING_CALL_H_
#define NFS3D_RPC_RUNNING_CALL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "boost/asio/thread_pool.hpp"

namespace nfs3d::rpc {

class RunningCall;

// The transport's side: answers a call early (see above). Must not block.
class EarlyAnswerer {
 public:
  virtual ~EarlyAnswerer() = default;
  virtual void AnswerEarly(RunningCall& call) = 0;
};

class RunningCall {
 public:
  // Registers the call as this thread's until destroyed. `batch` and `index`
  // are the transport's own (the batch the call runs in and its place).
  RunningCall(EarlyAnswerer* answerer, absl::Span<const uint8_t> message,
              boost::asio::thread_pool* pool, void* batch = nullptr, size_t index = 0);
  ~RunningCall();
  RunningCall(const RunningCall&) = delete;
  RunningCall& operator=(const RunningCall&) = delete;

  // The call the calling thread runs, unless answered early; null: none.
  static RunningCall* Current();
  // Has `call` answered early by its transport (see above).
  static void AnswerNow(RunningCall* call);

  // True once answered early: its own reply must be dropped (and the rest
  // of its batch has gone to the rescue task).
  bool answered() const { return answered_.load(std::memory_order_acquire); }

  absl::Span<const uint8_t> message() const { return message_; }
  boost::asio::thread_pool* pool() const { return pool_; }
  void* batch() const { return batch_; }
  size_t index() const { return index_; }

 private:
  EarlyAnswerer* const answerer_;
  const absl::Span<const uint8_t> message_;
  boost::asio::thread_pool* const pool_;
  void* const batch_;
  const size_t index_;
  RunningCall* const outer_;  // restored as Current() when this one ends
  std::atomic<bool> answered_{false};
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_RUNNING_CALL_H_
