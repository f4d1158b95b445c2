#include "common/rate_limited_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace nfs3d::log {
namespace {

TEST(RateLimitedLogTest, LogsOncePerIntervalAndCountsWhatItHeldBack) {
  absl::Time now = absl::FromUnixSeconds(1000);
  RateLimitedLog limited(absl::Minutes(1), [&now] { return now; });
  EXPECT_EQ(limited.Admit("MNT /a: no root handle"), "MNT /a: no root handle");
  for (int i = 0; i < 3; ++i) {
    now += absl::Seconds(10);
    EXPECT_EQ(limited.Admit("MNT /a: no root handle"), std::nullopt);
  }
  now += absl::Seconds(30);  // a minute after the first
  EXPECT_EQ(limited.Admit("MNT /a: no root handle"),
            "MNT /a: no root handle (and 3 such since the last one logged)");
  now += absl::Minutes(2);
  EXPECT_EQ(limited.Admit("MNT /b: refused"), "MNT /b: refused");
}

TEST(RateLimitedLogTest, AFloodFromManyThreadsLogsOneLine) {
  RateLimitedLog limited(absl::Hours(1));
  std::atomic<int> logged{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (limited.Admit("refused")) logged.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(logged.load(), 1);
}

}  // namespace
}  // namespace nfs3d::log
