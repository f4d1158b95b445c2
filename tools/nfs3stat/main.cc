// nfs3stat: statistics of a running nfs3d, in the layout of `nfsstat -s`.
// Reads the server's Prometheus page from its unix socket
// (<state_dir>/nfs3d.sock, root only) or from its [metrics] TCP endpoint.
//
//   nfs3stat                      totals since the server started
//   nfs3stat -i 1 [-c N]          one line of rates per second
//   nfs3stat --server 127.0.0.1:9049 --raw
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "stats/metrics_server.h"
#include "stats/prom_text.h"
#include "tools/nfs3stat/print.h"
#include "tools/nfs3stat/view.h"

namespace nfs3d::nfs3stat {
namespace {

constexpr char kUsage[] =
    "usage: nfs3stat [options]\n"
    "  -s, --server TARGET   unix:/path/to/nfs3d.sock or HOST:PORT of the [metrics] endpoint\n"
    "                        (default unix:<state-dir>/nfs3d.sock)\n"
    "  --state-dir DIR       nfs3d's state directory (default /var/lib/nfs3d)\n"
    "  -i, --interval SECS   print one line of rates every SECS seconds\n"
    "  -c, --count N         with -i: stop after N lines\n"
    "  --raw                 print the Prometheus text as served\n"
    "  -h, --help            this text\n";

struct Options {
  std::string server;
  std::string state_dir = "/var/lib/nfs3d";
  double interval = 0;
  long count = -1;
  bool raw = false;
};

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    auto next = [&]() -> bool {
      if (!value.empty()) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--raw") {
      o->raw = true;
    } else if (a == "-s" || a == "--server") {
      if (!next()) return false;
      o->server = value;
    } else if (a == "--state-dir" || a == "--state_dir") {
      if (!next()) return false;
      o->state_dir = value;
    } else if (a == "-i" || a == "--interval") {
      if (!next()) return false;
      o->interval = std::strtod(value.c_str(), nullptr);
      if (o->interval <= 0) return false;
    } else if (a == "-c" || a == "--count") {
      if (!next()) return false;
      o->count = std::strtol(value.c_str(), nullptr, 10);
    } else {
      std::fprintf(stderr, "nfs3stat: unknown argument %s\n", a.c_str());
      return false;
    }
  }
  if (o->server.empty()) o->server = "unix:" + o->state_dir + "/nfs3d.sock";
  return true;
}

bool Fetch(const Options& o, std::string* text, StatView* view) {
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
  return true;
}

int Run(const Options& o) {
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
  nfs3d::nfs3stat::Options options;
  if (!nfs3d::nfs3stat::ParseArgs(argc, argv, &options)) {
    std::fputs(nfs3d::nfs3stat::kUsage, stderr);
    return 2;
  }
  return nfs3d::nfs3stat::Run(options);
}
