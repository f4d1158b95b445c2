#include "stats/prometheus_origins.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "stats/prometheus.h"

namespace nfs3d::stats {
namespace {

struct Labelled {
  std::string label;  // escaped label value
  const OriginCounters* counters;
};

void Header(std::string* out, const std::string& name, const char* type, const std::string& help) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

// One family with one sample per row.
template <typename Get>
void CounterFamily(std::string* out, const std::string& kind, const char* what, const char* help,
                   const std::vector<Labelled>& rows, Get get) {
  const std::string name = absl::StrCat("nfs3d_", kind, "_", what, "_total");
  Header(out, name, "counter", help);
  for (const Labelled& r : rows) {
    absl::StrAppend(out, name, "{", kind, "=\"", r.label, "\"} ", get(*r.counters), "\n");
  }
}

void DurationFamily(std::string* out, const std::string& kind, const std::vector<Labelled>& rows) {
  const std::string name = absl::StrCat("nfs3d_", kind, "_duration_seconds");
  Header(
      out, name, "histogram",
      absl::StrCat("Time from a call's arrival at the dispatcher to its reply, per ", kind, "."));
  for (const Labelled& r : rows) {
    const std::string labels = absl::StrCat(kind, "=\"", r.label, "\"");
    uint64_t cumulative = 0;
    for (int b = 0; b < kLatencyBuckets; ++b) {
      cumulative += r.counters->latency[b];
      absl::StrAppend(out, name, "_bucket{", labels, ",le=\"", LatencyBound(b), "\"} ", cumulative,
                      "\n");
    }
    cumulative += r.counters->latency[kLatencyBuckets];
    absl::StrAppend(out, name, "_bucket{", labels, ",le=\"+Inf\"} ", cumulative, "\n");
    absl::StrAppend(out, name, "_sum{", labels, "} ",
                    absl::StrFormat("%.9g", r.counters->latency_ns * 1e-9), "\n");
    absl::StrAppend(out, name, "_count{", labels, "} ", cumulative, "\n");
  }
}

void Kind(std::string* out, const std::string& kind, const std::vector<Labelled>& rows) {
  CounterFamily(out, kind, "calls", "RPC calls (the busiest tracked exactly, the rest as other).",
                rows, [](const OriginCounters& c) { return c.calls; });
  CounterFamily(out, kind, "errors", "Calls that failed (non-OK status or RPC-level failure).",
                rows, [](const OriginCounters& c) { return c.errors; });
  CounterFamily(out, kind, "read_bytes", "File data bytes returned by READ.", rows,
                [](const OriginCounters& c) { return c.read_bytes; });
  CounterFamily(out, kind, "write_bytes", "File data bytes accepted by WRITE.", rows,
                [](const OriginCounters& c) { return c.write_bytes; });
  CounterFamily(out, kind, "retransmits",
                "Retransmissions answered or dropped by the duplicate request cache.", rows,
                [](const OriginCounters& c) { return c.retransmits; });
  DurationFamily(out, kind, rows);
}

template <typename LabelOf>
std::vector<Labelled> Rows(const OriginSnapshot& s, LabelOf label_of) {
  std::vector<Labelled> rows;
  rows.reserve(s.rows.size() + 1);
  for (const OriginRow& r : s.rows) rows.push_back({EscapeLabel(label_of(r)), &r.counters});
  rows.push_back({"other", &s.other});
  return rows;
}

}  // namespace

std::string ClientLabel(const OriginRow& row) { return ClientName(row.key); }

std::string ExportLabel(const OriginRow& row, const ExportNamer& namer) {
  if (!IsExportKnown(row.key)) return "-";
  std::string name = namer ? namer(ExportIdOf(row.key)) : std::string();
  return name.empty() ? absl::StrCat("export#", ExportIdOf(row.key)) : name;
}

std::string UserLabel(const OriginRow& row) {
  if (!row.name.empty()) return row.name;
  if (row.key.hi == 0) return "-";
  return absl::StrCat(row.key.lo);
}

void RenderOrigins(const OriginsSnapshot& s, const ExportNamer& namer, std::string* out,
                   bool identities) {
  if (identities) Kind(out, "client", Rows(s.clients, ClientLabel));
  Kind(out, "export", Rows(s.exports, [&](const OriginRow& r) { return ExportLabel(r, namer); }));
  if (identities) Kind(out, "user", Rows(s.users, UserLabel));
  const std::pair<const char*, const OriginSnapshot*> kinds[] = {
      {"client", &s.clients}, {"export", &s.exports}, {"user", &s.users}};
  Header(out, "nfs3d_origin_evictions_total", "counter",
         "Origins pushed out of the tracked set into other (bounded accounting).");
  for (const auto& [kind, snap] : kinds) {
    absl::StrAppend(out, "nfs3d_origin_evictions_total{kind=\"", kind, "\"} ", snap->evictions,
                    "\n");
  }
  Header(out, "nfs3d_origin_tracked_bytes", "gauge",
         "Memory held by the per-origin tables, over every worker thread.");
  for (const auto& [kind, snap] : kinds) {
    absl::StrAppend(out, "nfs3d_origin_tracked_bytes{kind=\"", kind, "\"} ", snap->tracked_bytes,
                    "\n");
  }
}

}  // namespace nfs3d::stats
