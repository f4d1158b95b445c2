// The latency histogram shared by every statistic: bucket i counts calls
// that took at most 2^i microseconds (1 us .. ~8.4 s); the last is +Inf.
#ifndef NFS3D_STATS_LATENCY_BUCKETS_H_
#define NFS3D_STATS_LATENCY_BUCKETS_H_

#include <cstdint>

namespace nfs3d::stats {

inline constexpr int kLatencyBuckets = 24;

inline int LatencyBucket(uint64_t ns) {
  uint64_t us = (ns + 999) / 1000;
  if (us <= 1) return 0;
  int b = 64 - __builtin_clzll(us - 1);  // ceil(log2(us))
  return b < kLatencyBuckets ? b : kLatencyBuckets;
}
// Upper bound of a bucket in seconds, for printing.
inline double LatencyBound(int bucket) { return static_cast<double>(1ull << bucket) * 1e-6; }

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_LATENCY_BUCKETS_H_
