#include "tools/nfs3top/screen.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace nfs3d::nfs3top {
namespace {

using nfs3stat::Millis;
using nfs3stat::OriginView;
using nfs3stat::Short;
using nfs3stat::ShortBytes;
using nfs3stat::SortKey;

constexpr char kRowFormat[] = "%-*s %9s %7s %9s %9s %8s %8s %8s";

// `name` in at most `width` columns: a long path keeps its end.
std::string Fit(const std::string& name, int width) {
  if (static_cast<int>(name.size()) <= width) return name;
  return "..." + name.substr(name.size() - static_cast<size_t>(width - 3));
}

// A procedure as an origin-like row, so both sort and print alike.
std::vector<OriginView> ProcRows(const nfs3stat::StatView& view) {
  std::vector<OriginView> rows;
  for (const auto& [program, procs] : view.programs) {
    for (const nfs3stat::ProcView& p : procs) {
      if (p.calls <= 0) continue;
      OriginView r;
      r.name = absl::StrCat(program.substr(0, program.find(' ')), " ", p.name);
      r.calls = p.calls;
      r.errors = p.errors;
      r.seconds = p.seconds;
      r.buckets = p.buckets;
      if (r.name == "nfs READ") r.read_bytes = view.read_bytes;
      if (r.name == "nfs WRITE") r.write_bytes = view.write_bytes;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

// `security`: the clients' TLS column (nfs3stat::SecurityByClient), or null.
void Section(std::string* out, const char* title, std::vector<OriginView> rows, const Frame& f,
             size_t limit, const std::map<std::string, std::string>* security = nullptr) {
  nfs3stat::SortOrigins(&rows, f.sort);
  const bool rates = f.seconds > 0;
  const double per = rates ? f.seconds : 1;
  // Names get what the figures (and the TLS column, up to "none+tls+mtls")
  // leave of the line (export paths are long).
  const int width = std::max(16, std::min(f.columns - 66 - (security != nullptr ? 14 : 0), 60));
  absl::StrAppend(out,
                  absl::StrFormat(kRowFormat, width, title, rates ? "CALLS/s" : "CALLS",
                                  rates ? "ERR/s" : "ERRORS", rates ? "READ/s" : "READ",
                                  rates ? "WRITE/s" : "WRITE", "MEAN", "P50", "P99"),
                  security != nullptr ? " TLS\n" : "\n");
  size_t shown = 0;
  for (const OriginView& r : rows) {
    if (shown >= limit) break;
    if (r.calls <= 0) continue;
    const double count = r.buckets.empty() ? 0 : r.buckets.back().second;
    absl::StrAppend(
        out,
        absl::StrFormat(kRowFormat, width, Fit(r.name, width), Short(r.calls / per),
                        Short(r.errors / per), ShortBytes(r.read_bytes / per),
                        ShortBytes(r.write_bytes / per), Millis(count > 0 ? r.seconds / count : 0),
                        Millis(nfs3stat::BucketQuantile(r.buckets, 0.5)),
                        Millis(nfs3stat::BucketQuantile(r.buckets, 0.99))));
    if (security != nullptr) {
      auto it = security->find(r.name);
      absl::StrAppend(out, " ", it == security->end() ? "-" : it->second);
    }
    absl::StrAppend(out, "\n");
    ++shown;
  }
  if (shown == 0) absl::StrAppend(out, "  (idle)\n");
}

// Lines cut to the terminal's width.
std::string Cut(const std::string& text, int columns) {
  std::string cut;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  lines.pop_back();  // after the last "\n"
  for (absl::string_view line : lines) {
    absl::StrAppend(&cut, line.substr(0, static_cast<size_t>(columns)), "\n");
  }
  return cut;
}

}  // namespace

const char* SortName(SortKey key) {
  switch (key) {
    case SortKey::kCalls:
      return "calls";
    case SortKey::kErrors:
      return "errors";
    case SortKey::kBytes:
      return "bytes";
    case SortKey::kLatency:
      return "p99";
  }
  return "?";
}

Sample Subtract(const Sample& after, const Sample& before) {
  Sample d;
  d.view = nfs3stat::Subtract(after.view, before.view);
  d.clients = nfs3stat::SubtractOrigins(after.clients, before.clients);
  d.exports = nfs3stat::SubtractOrigins(after.exports, before.exports);
  d.users = nfs3stat::SubtractOrigins(after.users, before.users);
  d.connections_known = after.connections_known;
  d.connections = after.connections;
  return d;
}

std::string Render(const Sample& s, const Frame& f) {
  std::string out;
  const bool rates = f.seconds > 0;
  const double per = rates ? f.seconds : 1;
  absl::StrAppend(&out, absl::StrFormat("nfs3top - %s - %s, sort: %s - %s\n", f.source,
                                        rates ? absl::StrFormat("every %.1fs", f.delay)
                                              : std::string("totals since start"),
                                        SortName(f.sort), f.clock));
  absl::StrAppend(
      &out, absl::StrFormat("calls %s%s  retrans %s  read %s%s  write %s%s  connections %.0f\n",
                            Short(s.view.messages / per), rates ? "/s" : "",
                            Short(s.view.retransmits / per), ShortBytes(s.view.read_bytes / per),
                            rates ? "/s" : "", ShortBytes(s.view.write_bytes / per),
                            rates ? "/s" : "", s.view.tcp_connections));
  absl::StrAppend(&out,
                  "keys: c calls  e errors  b bytes  l p99  u users/exports  t connections  "
                  "+ - interval  q quit\n");
  // What is left of the screen, shared among three sections (each has a
  // title line and a blank line before it).
  const int body = std::max(3, f.rows - 3 - 6);
  const size_t clients = std::max(1, body * 4 / 10);
  const size_t second = std::max(1, body * 3 / 10);
  const size_t procs = std::max(1, body - static_cast<int>(clients) - static_cast<int>(second));
  absl::StrAppend(&out, "\n");
  std::map<std::string, std::string> security;
  if (s.connections_known) security = nfs3stat::SecurityByClient(s.connections);
  Section(&out, "CLIENT", s.clients, f, clients, s.connections_known ? &security : nullptr);
  absl::StrAppend(&out, "\n");
  if (f.show_connections) {
    absl::StrAppend(&out, s.connections_known ? nfs3stat::FormatConnectionTable(
                                                    s.connections, second + procs, f.columns)
                                              : "  (connections: only on the control socket)\n");
    return Cut(out, f.columns);
  }
  if (f.show_users) {
    Section(&out, "USER", s.users, f, second);
  } else {
    Section(&out, "EXPORT", s.exports, f, second);
  }
  absl::StrAppend(&out, "\n");
  Section(&out, "PROCEDURE", ProcRows(s.view), f, procs);
  return Cut(out, f.columns);
}

}  // namespace nfs3d::nfs3top
