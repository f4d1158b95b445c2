// nfs3stat: statistics of a running nfs3d, in the layout of `nfsstat -s`.
// Reads the server's Prometheus page from its unix socket
// (<state_dir>/nfs3d.sock, root only) or from its [metrics] TCP endpoint.
//
//   nfs3stat                      totals since the server started
//   nfs3stat -i 1 [-c N]          one line of rates per second
//   nfs3stat --server 127.0.0.1:9049 --raw
//   nfs3stat --clients | --exports | --users [-i 1]   busiest first
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/command_line.h"
#include "common/version.h"
#include "stats/metrics_server.h"
#include "stats/prom_text.h"
#include "tools/nfs3stat/connections.h"
#include "tools/nfs3stat/origins.h"
#include "tools/nfs3stat/print.h"
#include "tools/nfs3stat/view.h"

namespace nfs3d::nfs3stat {
namespace {

struct Options {
  std::string server;
  std::string state_dir = "/var/lib/nfs3d";
  double interval = 0;
  int count = -1;
  bool raw = false;
  std::string origin;  // "client", "export", "user": the per-origin table
  int limit = 20;
  bool help = false;
  bool version = false;
};

constexpr char kSynopsis[] =
    "nfs3stat [options]\n"
    "Statistics of a running nfs3d, in the layout of nfsstat -s, read from\n"
    "unix:STATE-DIR/nfs3d.sock unless --server says otherwise; see nfs3stat(8).";

absl::Status SetOrigin(Options* o, const char* kind) {
  if (!o->origin.empty() && o->origin != kind) {
    return absl::InvalidArgumentError("--clients, --exports and --users exclude each other");
  }
  o->origin = kind;
  return absl::OkStatus();
}

std::vector<cli::Option> OptionTable(Options* o) {
  return {
      {"server", 's', "TARGET", "unix:SOCKET, or HOST:PORT of the [metrics] endpoint",
       cli::Store(&o->server)},
      {"state-dir", 0, "DIR", "nfs3d's state directory (default /var/lib/nfs3d)",
       cli::Store(&o->state_dir)},
      {"interval", 'i', "SECONDS", "print one line of rates every SECONDS seconds",
       cli::StoreDouble(&o->interval, 0.001)},
      {"count", 'c', "N", "with --interval: stop after N lines",
       cli::StoreInt(&o->count, 1, 1 << 30)},
      {"raw", 0, "", "print the Prometheus text as served", cli::SetTrue(&o->raw)},
      {"clients", 0, "", "per client address, busiest first",
       [o](absl::string_view) { return SetOrigin(o, "client"); }},
      {"exports", 0, "", "per export, busiest first",
       [o](absl::string_view) { return SetOrigin(o, "export"); }},
      {"users", 0, "", "per user (uid or principal), busiest first",
       [o](absl::string_view) { return SetOrigin(o, "user"); }},
      {"limit", 'n', "N", "with --clients/--exports/--users: show the N busiest (default 20)",
       cli::StoreInt(&o->limit, 1, 1 << 20)},
      {"version", 0, "", "print the version and build options", cli::SetTrue(&o->version)},
      {"help", 'h', "", "print this help", cli::SetTrue(&o->help)},
  };
}

bool Fetch(const Options& o, std::string* text, StatView* view,
           std::vector<OriginView>* origins = nullptr) {
  absl::StatusOr<std::string> page = stats::HttpGet(o.server, "/metrics");
  if (!page.ok()) {
    std::fprintf(stderr, "nfs3stat: %s: %s\n", o.server.c_str(),
                 std::string(page.status().message()).c_str());
    return false;
  }
  absl::StatusOr<std::vector<stats::Sample>> samples = stats::ParsePrometheusText(*page);
  if (!samples.ok()) {
    std::fprintf(stderr, "nfs3stat: %s\n", std::string(samples.status().message()).c_str());
    return false;
  }
  if (text) *text = std::move(*page);
  *view = BuildView(*samples);
  if (origins != nullptr) *origins = BuildOrigins(*samples, o.origin);
  return true;
}

// --clients: the open TCP connections, from the control socket (its
// TCP endpoint does not serve them, nor does an nfs3d older than this).
std::optional<std::vector<stats::ConnectionRow>> FetchConnections(const Options& o) {
  if (o.origin != "client") return std::nullopt;
  absl::StatusOr<std::string> text = stats::HttpGet(o.server, "/connections");
  if (!text.ok()) return std::nullopt;
  return stats::ParseConnections(*text);
}

// The TLS column's summaries, when the connections are known.
const std::map<std::string, std::string>* Summaries(
    const std::optional<std::vector<stats::ConnectionRow>>& connections,
    std::map<std::string, std::string>* storage) {
  if (!connections) return nullptr;
  *storage = SecurityByClient(*connections);
  return storage;
}

// --clients/--exports/--users: totals, or one table of rates per interval.
int RunOrigins(const Options& o) {
  StatView view;
  std::vector<OriginView> previous;
  if (!Fetch(o, nullptr, &view, &previous)) return 1;
  std::map<std::string, std::string> summaries;
  if (o.interval <= 0) {
    SortOrigins(&previous, SortKey::kCalls);
    const std::optional<std::vector<stats::ConnectionRow>> connections = FetchConnections(o);
    std::fputs(
        FormatOrigins(previous, o.origin, 0, o.limit, Summaries(connections, &summaries)).c_str(),
        stdout);
    if (connections) {
      std::fputs(("\n" + FormatConnectionTable(*connections, static_cast<size_t>(o.limit))).c_str(),
                 stdout);
    }
    return 0;
  }
  auto last = std::chrono::steady_clock::now();
  for (long n = 0; o.count < 0 || n < o.count; ++n) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
    std::vector<OriginView> current;
    if (!Fetch(o, nullptr, &view, &current)) return 1;
    auto now = std::chrono::steady_clock::now();
    std::vector<OriginView> delta = SubtractOrigins(current, previous);
    SortOrigins(&delta, SortKey::kCalls);
    std::fputs(FormatOrigins(delta, o.origin, std::chrono::duration<double>(now - last).count(),
                             o.limit, Summaries(FetchConnections(o), &summaries))
                   .c_str(),
               stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout);
    previous = std::move(current);
    last = now;
  }
  return 0;
}

int Run(const Options& o) {
  if (!o.origin.empty()) return RunOrigins(o);
  std::string text;
  StatView previous;
  if (!Fetch(o, &text, &previous)) return 1;
  if (o.interval <= 0) {
    std::fputs(o.raw ? text.c_str() : FormatTotals(previous).c_str(), stdout);
    return 0;
  }
  auto last = std::chrono::steady_clock::now();
  for (long line = 0; o.count < 0 || line < o.count; ++line) {
    if (line % 20 == 0) std::fputs(FormatIntervalHeader().c_str(), stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
    StatView current;
    if (!Fetch(o, nullptr, &current)) return 1;
    auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    std::fputs(FormatIntervalLine(Subtract(current, previous), seconds).c_str(), stdout);
    std::fflush(stdout);
    previous = std::move(current);
    last = now;
  }
  return 0;
}

}  // namespace
}  // namespace nfs3d::nfs3stat

int main(int argc, char** argv) {
  using namespace nfs3d::nfs3stat;
  Options options;
  const std::vector<nfs3d::cli::Option> table = OptionTable(&options);
  if (std::optional<int> done =
          nfs3d::cli::ParseToolOptions("nfs3stat", argc, argv, kSynopsis, table, options.help,
                                       options.version, nfs3d::VersionText("nfs3stat"))) {
    return *done;
  }
  if (options.server.empty()) options.server = nfs3d::stats::ControlSocketTarget(options.state_dir);
  return Run(options);
}
