// CertificateWatch: what it reports when the [tls] files are set, again
// each period as the clock moves on, and the dates it puts in /metrics.
#include "daemon/certificate_watch.h"

#include <atomic>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::daemon {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);
const absl::Duration kDay = absl::Hours(24);

struct Reports {
  absl::Mutex mu;
  std::vector<rpc::tls::ValidityNote> notes ABSL_GUARDED_BY(mu);
  size_t size() {
    absl::MutexLock lock(&mu);
    return notes.size();
  }
};

std::vector<rpc::tls::CertificateFile> Files(absl::Time server_end) {
  return {{"server", "/s.pem", {{"CN=s", kStart - kDay, server_end}}},
          {"ca",
           "/ca.pem",
           {{"CN=ca1", kStart - 2 * kDay, kStart + 900 * kDay},
            {"CN=ca2", kStart - kDay, kStart + 500 * kDay}}}};
}

TEST(CertificateWatchTest, ReportsAtSetAndEveryPeriod) {
  std::atomic<int64_t> now{absl::ToUnixSeconds(kStart)};
  Reports reports;
  CertificateWatch::Options options;
  options.period = absl::Milliseconds(5);
  options.now = [&now] { return absl::FromUnixSeconds(now.load()); };
  options.report = [&reports](const rpc::tls::ValidityNote& n) {
    absl::MutexLock lock(&reports.mu);
    reports.notes.push_back(n);
  };
  CertificateWatch watch(options);
  watch.Set(Files(kStart + 10 * kDay));  // logged at once: 10 days left
  {
    absl::MutexLock lock(&reports.mu);
    ASSERT_GE(reports.notes.size(), 1u);
    EXPECT_FALSE(reports.notes[0].error);
    EXPECT_NE(reports.notes[0].text.find("in 10 days"), std::string::npos) << reports.notes[0].text;
  }
  // A renewed certificate: nothing more to say, whatever the thread does.
  watch.Set(Files(kStart + 400 * kDay));
  const size_t after_renewal = reports.size();
  // The clock passes the end: the periodic check says so, as an error.
  now = absl::ToUnixSeconds(kStart + 401 * kDay);
  for (int i = 0; i < 6000; ++i) {
    {
      absl::MutexLock lock(&reports.mu);
      if (reports.notes.size() > after_renewal && reports.notes.back().error) break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  absl::MutexLock lock(&reports.mu);
  ASSERT_GT(reports.notes.size(), after_renewal);
  EXPECT_TRUE(reports.notes.back().error);
  EXPECT_NE(reports.notes.back().text.find("expired on"), std::string::npos);
}

TEST(CertificateWatchTest, MetricsHoldTheEarliestEndAndLatestStart) {
  CertificateWatch::Options options;
  options.report = [](const rpc::tls::ValidityNote&) {};
  CertificateWatch watch(options);
  std::vector<stats::Family> families;
  watch.AppendMetrics(&families);
  EXPECT_TRUE(families.empty());  // no [tls]
  watch.Set(Files(kStart + 10 * kDay));
  watch.AppendMetrics(&families);
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "nfs3d_tls_certificate_not_after_seconds");
  EXPECT_EQ(families[0].type, "gauge");
  ASSERT_EQ(families[0].samples.size(), 2u);
  EXPECT_EQ(families[0].samples[0].first, "certificate=\"server\"");
  EXPECT_EQ(families[0].samples[0].second, absl::ToUnixSeconds(kStart + 10 * kDay));
  EXPECT_EQ(families[0].samples[1].first, "certificate=\"ca\"");
  EXPECT_EQ(families[0].samples[1].second, absl::ToUnixSeconds(kStart + 500 * kDay));
  EXPECT_EQ(families[1].name, "nfs3d_tls_certificate_not_before_seconds");
  EXPECT_EQ(families[1].samples[1].second, absl::ToUnixSeconds(kStart - kDay));
}

}  // namespace
}  // namespace nfs3d::daemon
