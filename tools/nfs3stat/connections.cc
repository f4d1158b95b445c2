#include "tools/nfs3stat/connections.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d::nfs3stat {

namespace {

constexpr char kRow[] = "%-*s %-8s %-7s %-17s %-7s %s\n";

std::string Endpoint(const stats::ConnectionRow& c) {
  const bool v6 = c.client.find(':') != std::string::npos;
  return absl::StrCat(v6 ? "[" : "", c.client, v6 ? "]" : "", ":", c.port);
}

std::string Dash(const std::string& s) { return s.empty() ? "-" : stats::PrintableField(s); }

}  // namespace

std::map<std::string, std::string> SecurityByClient(
    const std::vector<stats::ConnectionRow>& connections) {
  std::map<std::string, std::set<std::string>> modes;
  for (const stats::ConnectionRow& c : connections) modes[c.client].insert(c.security);
  std::map<std::string, std::string> out;
  for (const auto& [client, set] : modes) {
    std::string summary;
    for (const char* m : {"none", "tls", "mtls"}) {
      if (set.count(m) != 0) absl::StrAppend(&summary, summary.empty() ? "" : "+", m);
    }
    out[client] = summary.empty() ? "?" : summary;
  }
  return out;
}

std::string FormatConnectionTable(std::vector<stats::ConnectionRow> connections, size_t limit,
                                  int columns) {
  std::sort(connections.begin(), connections.end(),
            [](const stats::ConnectionRow& a, const stats::ConnectionRow& b) {
              return std::tie(a.client, a.port) < std::tie(b.client, b.port);
            });
  int width = 21;
  for (const stats::ConnectionRow& c : connections) {
    width = std::max(width, static_cast<int>(Endpoint(c).size()));
  }
  width = std::min(width, 47);
  // What the subject may take of the line: the rest, and at least 20.
  const size_t subject = static_cast<size_t>(std::max(20, columns - width - 45));
  std::string out = absl::StrFormat(kRow, width, "CONNECTION", "SECURITY", "VERSION", "CIPHER",
                                    "RECORDS", "SUBJECT");
  size_t shown = 0;
  for (const stats::ConnectionRow& c : connections) {
    if (shown == limit) {
      absl::StrAppend(&out, "... ", connections.size() - shown, " more\n");
      break;
    }
    std::string who = Dash(c.subject);
    if (who.size() > subject) who = who.substr(0, subject - 3) + "...";
    absl::StrAppend(
        &out, absl::StrFormat(kRow, width, stats::PrintableField(Endpoint(c)), Dash(c.security),
                              Dash(c.version), Dash(c.cipher), Dash(c.records), who));
    ++shown;
  }
  if (connections.empty()) absl::StrAppend(&out, "  (no TCP connection)\n");
  return out;
}

}  // namespace nfs3d::nfs3stat
