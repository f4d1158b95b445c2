#include "tools/nfs3stat/origins.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d::nfs3stat {

std::vector<OriginView> BuildOrigins(const std::vector<stats::Sample>& samples,
                                     const std::string& kind) {
  const std::string prefix = absl::StrCat("nfs3d_", kind, "_");
  std::vector<OriginView> rows;
  std::map<std::string, size_t> index;
  for (const stats::Sample& s : samples) {
    if (s.name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string what = s.name.substr(prefix.size());
    const std::string name = s.Label(kind);
    auto [it, added] = index.emplace(name, rows.size());
    if (added) rows.push_back(OriginView{name});
    OriginView& r = rows[it->second];
    if (what == "calls_total") {
      r.calls = s.value;
    } else if (what == "errors_total") {
      r.errors = s.value;
    } else if (what == "read_bytes_total") {
      r.read_bytes = s.value;
    } else if (what == "write_bytes_total") {
      r.write_bytes = s.value;
    } else if (what == "retransmits_total") {
      r.retransmits = s.value;
    } else if (what == "duration_seconds_sum") {
      r.seconds = s.value;
    } else if (what == "duration_seconds_bucket") {
      const std::string le = s.Label("le");
      r.buckets.emplace_back(le == "+Inf" ? HUGE_VAL : std::strtod(le.c_str(), nullptr), s.value);
    }
  }
  return rows;
}

std::vector<OriginView> SubtractOrigins(const std::vector<OriginView>& after,
                                        const std::vector<OriginView>& before) {
  std::map<std::string, const OriginView*> old;
  for (const OriginView& o : before) old[o.name] = &o;
  std::vector<OriginView> out = after;
  for (OriginView& r : out) {
    auto it = old.find(r.name);
    if (it == old.end()) continue;
    const OriginView& o = *it->second;
    // A row that went down was evicted and came back: count it afresh.
    if (o.calls > r.calls) continue;
    r.calls -= o.calls;
    r.errors -= o.errors;
    r.read_bytes -= o.read_bytes;
    r.write_bytes -= o.write_bytes;
    r.retransmits -= o.retransmits;
    r.seconds -= o.seconds;
    for (size_t i = 0; i < r.buckets.size() && i < o.buckets.size(); ++i) {
      r.buckets[i].second -= o.buckets[i].second;
    }
  }
  return out;
}

double BucketQuantile(const std::vector<std::pair<double, double>>& buckets, double q) {
  if (buckets.empty() || buckets.back().second <= 0) return 0;
  const double total = buckets.back().second;
  for (const auto& [le, cumulative] : buckets) {
    if (cumulative >= q * total) return le;
  }
  return buckets.back().first;
}

void SortOrigins(std::vector<OriginView>* rows, SortKey key) {
  auto load = [key](const OriginView& r) {
    switch (key) {
      case SortKey::kCalls:
        return r.calls;
      case SortKey::kErrors:
        return r.errors;
      case SortKey::kBytes:
        return r.read_bytes + r.write_bytes;
      case SortKey::kLatency:
        return BucketQuantile(r.buckets, 0.99);
    }
    return r.calls;
  };
  std::stable_sort(rows->begin(), rows->end(), [&](const OriginView& a, const OriginView& b) {
    const bool a_other = a.name == "other";
    const bool b_other = b.name == "other";
    if (a_other != b_other) return b_other;
    const double la = load(a), lb = load(b);
    if (la != lb) return la > lb;
    return a.calls > b.calls;
  });
}

std::string Short(double v) {
  const char* units[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (std::fabs(v) >= 10000 && u < 4) {
    v /= 1000;
    ++u;
  }
  return u == 0 && v == std::floor(v) ? absl::StrFormat("%.0f", v)
                                      : absl::StrFormat("%.1f%s", v, units[u]);
}

std::string ShortBytes(double v) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? absl::StrFormat("%.0f%s", v, units[u]) : absl::StrFormat("%.1f%s", v, units[u]);
}

std::string Millis(double seconds) {
  if (seconds <= 0) return "-";
  if (std::isinf(seconds)) return ">8s";
  return seconds < 0.001 ? absl::StrFormat("%.0fus", seconds * 1e6)
                         : absl::StrFormat("%.1fms", seconds * 1e3);
}

std::string FormatOrigins(const std::vector<OriginView>& rows, const std::string& kind,
                          double seconds, size_t limit,
                          const std::map<std::string, std::string>* security) {
  const bool rates = seconds > 0;
  int width = 16;
  for (const OriginView& r : rows) width = std::max(width, static_cast<int>(r.name.size()));
  width = std::min(width, 60);
  std::string out = absl::StrFormat(
      "%-*s %9s %8s %9s %9s %8s %8s %8s %8s\n", width, absl::AsciiStrToUpper(kind),
      rates ? "CALLS/s" : "CALLS", rates ? "ERR/s" : "ERRORS", rates ? "READ/s" : "READ",
      rates ? "WRITE/s" : "WRITE", rates ? "RETR/s" : "RETRANS", "MEAN", "P50", "P99");
  if (security != nullptr) out.insert(out.size() - 1, " TLS");
  const double per = rates ? seconds : 1;
  size_t shown = 0;
  for (const OriginView& r : rows) {
    if (shown++ >= limit && r.name != "other") continue;
    if (r.name == "other" && r.calls == 0) continue;
    const double count = r.buckets.empty() ? 0 : r.buckets.back().second;
    absl::StrAppend(
        &out, absl::StrFormat("%-*s %9s %8s %9s %9s %8s %8s %8s %8s\n", width, r.name,
                              Short(r.calls / per), Short(r.errors / per),
                              ShortBytes(r.read_bytes / per), ShortBytes(r.write_bytes / per),
                              Short(r.retransmits / per), Millis(count > 0 ? r.seconds / count : 0),
                              Millis(BucketQuantile(r.buckets, 0.5)),
                              Millis(BucketQuantile(r.buckets, 0.99))));
    if (security != nullptr) {
      auto it = security->find(r.name);
      out.insert(out.size() - 1, absl::StrCat(" ", it == security->end() ? "-" : it->second));
    }
  }
  return out;
}

}  // namespace nfs3d::nfs3stat
