// nfs3stat's and nfs3top's reading of the per-origin series: rows built
// from the text nfs3d renders, sorted by each key with "other" last, rates
// from two pages, and an nfs3top frame that fits its terminal.
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "stats/prom_text.h"
#include "stats/prometheus_origins.h"
#include "tools/nfs3stat/origins.h"
#include "tools/nfs3top/screen.h"

namespace nfs3d::nfs3stat {
namespace {

stats::OriginRow Row(uint32_t v4, uint64_t calls, uint64_t errors, uint64_t bytes, int bucket) {
  stats::OriginRow r;
  r.key = stats::OriginKey{0, (uint64_t{0xffff} << 32) | v4};
  r.counters.calls = calls;
  r.counters.errors = errors;
  r.counters.read_bytes = bytes;
  r.counters.latency[bucket] = calls;
  r.counters.latency_ns = calls * 1000;
  return r;
}

std::vector<stats::Sample> Page(const stats::OriginsSnapshot& s) {
  std::string text;
  stats::RenderOrigins(s, nullptr, &text);
  absl::StatusOr<std::vector<stats::Sample>> samples = stats::ParsePrometheusText(text);
  EXPECT_TRUE(samples.ok());
  return samples.ok() ? *samples : std::vector<stats::Sample>{};
}

TEST(Nfs3statOriginsTest, RowsSortAndSubtract) {
  stats::OriginsSnapshot s;
  s.clients.rows = {Row(0xc0000201, 100, 0, 0, 3), Row(0xc0000202, 10, 9, 1 << 20, 12)};
  s.clients.other.calls = 500;
  std::vector<OriginView> rows = BuildOrigins(Page(s), "client");
  ASSERT_EQ(rows.size(), 3u);
  SortOrigins(&rows, SortKey::kCalls);
  EXPECT_EQ(rows[0].name, "192.0.2.1");
  EXPECT_EQ(rows[2].name, "other");  // last although it has the most calls
  SortOrigins(&rows, SortKey::kErrors);
  EXPECT_EQ(rows[0].name, "192.0.2.2");
  SortOrigins(&rows, SortKey::kBytes);
  EXPECT_EQ(rows[0].name, "192.0.2.2");
  SortOrigins(&rows, SortKey::kLatency);
  EXPECT_EQ(rows[0].name, "192.0.2.2");
  EXPECT_DOUBLE_EQ(BucketQuantile(rows[0].buckets, 0.99), 4096e-6);

  stats::OriginsSnapshot later = s;
  later.clients.rows[0].counters.calls = 160;
  later.clients.rows[0].counters.latency[3] = 160;
  std::vector<OriginView> delta =
      SubtractOrigins(BuildOrigins(Page(later), "client"), BuildOrigins(Page(s), "client"));
  SortOrigins(&delta, SortKey::kCalls);
  EXPECT_EQ(delta[0].name, "192.0.2.1");
  EXPECT_DOUBLE_EQ(delta[0].calls, 60);
  const std::string table = FormatOrigins(delta, "client", 2.0, 10);
  EXPECT_NE(table.find("CALLS/s"), std::string::npos) << table;
  const size_t row = table.find("\n192.0.2.1 ");
  ASSERT_NE(row, std::string::npos) << table;
  EXPECT_EQ(
      table.substr(row + 1, table.find('\n', row + 1) - row - 1).find(" 30 ") != std::string::npos,
      true)
      << table;
}

TEST(Nfs3topScreenTest, FrameFitsTheTerminal) {
  stats::OriginsSnapshot s;
  for (uint32_t i = 0; i < 40; ++i)
    s.clients.rows.push_back(Row(0x0a000000 + i, 1000 - i, 0, 0, 2));
  nfs3top::Sample sample;
  sample.clients = BuildOrigins(Page(s), "client");
  nfs3top::Frame frame;
  frame.rows = 24;
  frame.columns = 70;
  frame.seconds = 1;
  frame.delay = 1;
  const std::string screen = nfs3top::Render(sample, frame);
  size_t lines = 0, start = 0;
  while (start < screen.size()) {
    const size_t end = screen.find('\n', start);
    EXPECT_LE(end - start, 70u);
    ++lines;
    start = end + 1;
  }
  EXPECT_LE(lines, 24u);
  EXPECT_NE(screen.find("10.0.0.0 "), std::string::npos) << screen;  // the busiest
  EXPECT_EQ(screen.find("10.0.0.39 "), std::string::npos);           // does not fit
}

}  // namespace
}  // namespace nfs3d::nfs3stat
