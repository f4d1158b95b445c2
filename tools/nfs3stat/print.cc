#include "tools/nfs3stat/print.h"

#include <algorithm>
#include <cctype>
#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d::nfs3stat {
namespace {

constexpr size_t kPerRow = 6;

double Get(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

std::string Bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? absl::StrFormat("%.0f %s", b, units[u]) : absl::StrFormat("%.1f %s", b, units[u]);
}

// The nfsstat table: names over "count pct%" cells, kPerRow per row.
void ProgramTable(std::string* out, const std::string& title, const std::vector<ProcView>& procs) {
  double total = 0;
  for (const ProcView& p : procs) total += p.calls;
  absl::StrAppend(out, "\nServer ", title, ":\n");
  for (size_t row = 0; row < procs.size(); row += kPerRow) {
    const size_t end = std::min(procs.size(), row + kPerRow);
    for (size_t i = row; i < end; ++i) {
      absl::StrAppend(out, absl::StrFormat("%-13s", absl::AsciiStrToLower(procs[i].name)));
    }
    absl::StrAppend(out, "\n");
    for (size_t i = row; i < end; ++i) {
      const double pct = total > 0 ? 100.0 * procs[i].calls / total : 0;
      absl::StrAppend(out, absl::StrFormat("%-9.0f%3.0f%% ", procs[i].calls, pct));
    }
    absl::StrAppend(out, "\n");
  }
}

}  // namespace

std::string FormatTotals(const StatView& v) {
  std::string out;
  double rejected = 0;
  for (const auto& [reason, count] : v.rejected) rejected += count;
  const double badfmt = Get(v.rejected, "malformed") + Get(v.rejected, "garbage_args");
  const double badauth = Get(v.rejected, "auth_error");
  const double badclnt = Get(v.rejected, "prog_unavail") + Get(v.rejected, "prog_mismatch") +
                         Get(v.rejected, "proc_unavail");
  absl::StrAppend(&out, "Server rpc stats:\n",
                  absl::StrFormat("%-11s%-11s%-11s%-11s%-11s\n", "calls", "badcalls", "badfmt",
                                  "badauth", "badclnt"),
                  absl::StrFormat("%-11.0f%-11.0f%-11.0f%-11.0f%-11.0f\n", v.messages, rejected,
                                  badfmt, badauth, badclnt));
  for (const auto& [title, procs] : v.programs) ProgramTable(&out, title, procs);

  absl::StrAppend(&out, "\nErrors and latency (procedures with calls):\n",
                  absl::StrFormat("%-16s%12s%10s%10s%10s%10s\n", "proc", "calls", "errors",
                                  "avg ms", "p50 ms", "p99 ms"));
  for (const auto& [title, procs] : v.programs) {
    for (const ProcView& p : procs) {
      if (p.calls <= 0) continue;
      absl::StrAppend(&out, absl::StrFormat("%-16s%12.0f%10.0f%10.3f%10.3f%10.3f\n",
                                            absl::StrCat(title.substr(0, title.find(' ')), ".",
                                                         absl::AsciiStrToLower(p.name)),
                                            p.calls, p.errors, 1e3 * p.seconds / p.calls,
                                            1e3 * Quantile(p, 0.5), 1e3 * Quantile(p, 0.99)));
    }
  }
  const ProcView* read = FindProc(v, "nfs v3", "READ");
  const ProcView* write = FindProc(v, "nfs v3", "WRITE");
  absl::StrAppend(&out, "\nI/O:      read ", Bytes(v.read_bytes), " in ",
                  absl::StrFormat("%.0f", read ? read->calls : 0), " READs, wrote ",
                  Bytes(v.write_bytes), " in ", absl::StrFormat("%.0f", write ? write->calls : 0),
                  " WRITEs\n");
  absl::StrAppend(&out, "Sync:     ", absl::StrFormat("%.0f", v.sync_requests),
                  " stable WRITEs/COMMITs, ", absl::StrFormat("%.0f", v.fsyncs), " fsyncs",
                  v.fsyncs > 0 ? absl::StrFormat(" (%.2f per fsync)", v.sync_requests / v.fsyncs)
                               : std::string(),
                  "\n");
  absl::StrAppend(&out, "DRC:      ", absl::StrFormat("%.0f", v.drc_hits), " replayed, ",
                  absl::StrFormat("%.0f", v.drc_in_progress), " dropped in progress, ",
                  absl::StrFormat("%.0f", v.drc_evictions), " evicted\n");
  absl::StrAppend(&out, "Network:  ", absl::StrFormat("%.0f", v.tcp_connections),
                  " TCP connections open\n");
  absl::StrAppend(&out, "Reloads:  ", absl::StrFormat("%.0f", v.reloads_ok), " ok, ",
                  absl::StrFormat("%.0f", v.reloads_failed), " failed\n");
  if (!v.node_id.empty()) {
    absl::StrAppend(&out, "Cluster:  ", v.cluster, ", node ", v.node_id, "\n");
  }
  if (v.nlm_in_grace.has_value()) {
    absl::StrAppend(&out, "Locks:    ", *v.nlm_in_grace ? "in grace (reclaims only)" : "serving",
                    "\n");
  }
  return out;
}

std::string FormatIntervalHeader() {
  return absl::StrFormat("%-9s%9s%8s%11s%9s%9s%10s%9s%9s%9s%6s\n", "time", "calls/s", "err/s",
                         "getattr/s", "read/s", "write/s", "commit/s", "rMiB/s", "wMiB/s",
                         "fsync/s", "conn");
}

std::string FormatIntervalLine(const StatView& d, double seconds) {
  auto rate = [seconds](double n) { return seconds > 0 ? n / seconds : 0; };
  auto proc_rate = [&](const char* name) {
    const ProcView* p = FindProc(d, "nfs v3", name);
    return rate(p ? p->calls : 0);
  };
  double calls = 0, errors = 0;
  for (const auto& [title, procs] : d.programs) {
    for (const ProcView& p : procs) {
      calls += p.calls;
      errors += p.errors;
    }
  }
  char clock[16];
  std::time_t now = std::time(nullptr);
  std::strftime(clock, sizeof(clock), "%H:%M:%S", std::localtime(&now));
  return absl::StrFormat("%-9s%9.0f%8.0f%11.0f%9.0f%9.0f%10.0f%9.1f%9.1f%9.0f%6.0f\n", clock,
                         rate(calls), rate(errors), proc_rate("GETATTR"), proc_rate("READ"),
                         proc_rate("WRITE"), proc_rate("COMMIT"), rate(d.read_bytes) / (1 << 20),
                         rate(d.write_bytes) / (1 << 20), rate(d.fsyncs), d.tcp_connections);
}

}  // namespace nfs3d::nfs3stat
