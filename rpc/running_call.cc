#include "rpc/running_call.h"

namespace nfs3d::rpc {
namespace {
thread_local RunningCall* t_current = nullptr;
}  // namespace

RunningCall::RunningCall(EarlyAnswerer* answerer, absl::Span<const uint8_t> message,
                         boost::asio::thread_pool* pool, void* batch, size_t index)
    : answerer_(answerer),
      message_(message),
      pool_(pool),
      batch_(batch),
      index_(index),
      outer_(t_current) {
  t_current = this;
}

RunningCall::~RunningCall() { t_current = outer_; }

RunningCall* RunningCall::Current() {
  // Answered already (its thread went on after the stuck call returned):
  // never twice, so further waits are the caller's own.
  return t_current != nullptr && !t_current->answered() ? t_current : nullptr;
}

void RunningCall::AnswerNow(RunningCall* call) {
  call->answerer_->AnswerEarly(*call);
  call->answered_.store(true, std::memory_order_release);
}

}  // namespace nfs3d::rpc
