// Whether a transport may run READs and UNSTABLE WRITEs (IsPageCacheCall) on
// its io thread, as it does while the machine has no core to spare: not for
// a while after they took long there on average. Then the disk, not the page
// cache, answers them, and the io thread's other calls would wait behind it.
// An average over about 16 calls, not one call: a busy machine preempts the
// io thread for a few milliseconds now and then, which says nothing about
// the file system. One guard per io-thread user (a UDP listener, a TCP
// connection), used from that thread only.
#ifndef NFS3D_RPC_INLINE_DATA_GUARD_H_
#define NFS3D_RPC_INLINE_DATA_GUARD_H_

#include <string_view>

#include "absl/time/time.h"

namespace nfs3d::rpc {

class InlineDataGuard {
 public:
  static constexpr absl::Duration kSlow = absl::Milliseconds(1);
  static constexpr int kWeight = 16;  // calls the average mostly spans
  static constexpr absl::Duration kToWorkersFor = absl::Seconds(1);

  // `transport` names the user in the log line ("udp", "tcp").
  explicit InlineDataGuard(std::string_view transport) : transport_(transport) {}

  // False while the data calls go to the workers after slow ones.
  bool MayRun();
  // A data call run on the io thread took `took`.
  void Note(absl::Duration took);

 private:
  std::string_view transport_;
  absl::Time to_workers_until_ = absl::InfinitePast();
  absl::Duration average_;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_INLINE_DATA_GUARD_H_
