// Per-origin views (clients, exports, users) read back from the
// nfs3d_<kind>_* series of a /metrics page, and their text tables, sorted
// by load: nfs3stat --clients/--exports/--users and nfs3top use them.
#ifndef NFS3D_TOOLS_NFS3STAT_ORIGINS_H_
#define NFS3D_TOOLS_NFS3STAT_ORIGINS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "stats/prom_text.h"

namespace nfs3d::nfs3stat {

struct OriginView {
  std::string name;  // address, export path, uid/principal, or "other"
  double calls = 0;
  double errors = 0;
  double read_bytes = 0;
  double write_bytes = 0;
  double retransmits = 0;
  double seconds = 0;                              // latency sum
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
};

// `kind`: "client", "export" or "user". Rows in page order.
std::vector<OriginView> BuildOrigins(const std::vector<stats::Sample>& samples,
                                     const std::string& kind);
// after - before, row by row (a row missing before counts from zero).
std::vector<OriginView> SubtractOrigins(const std::vector<OriginView>& after,
                                        const std::vector<OriginView>& before);
// Upper bound of the bucket holding quantile q, in seconds; 0 without calls.
double BucketQuantile(const std::vector<std::pair<double, double>>& buckets, double q);

enum class SortKey { kCalls, kErrors, kBytes, kLatency };
// Busiest first by `key` (p99 for kLatency); "other" always last.
void SortOrigins(std::vector<OriginView>* rows, SortKey key);

// The table nfs3stat prints: totals since start (seconds <= 0) or rates.
// With `security` (client -> SecurityByClient's summary) a TLS column
// follows: "-" for a client without an open TCP connection.
std::string FormatOrigins(const std::vector<OriginView>& rows, const std::string& kind,
                          double seconds, size_t limit,
                          const std::map<std::string, std::string>* security = nullptr);

// "12.3M"-style short numbers and byte sizes for narrow columns.
std::string Short(double v);
std::string ShortBytes(double v);
std::string Millis(double seconds);

}  // namespace nfs3d::nfs3stat

#endif  // NFS3D_TOOLS_NFS3STAT_ORIGINS_H_
