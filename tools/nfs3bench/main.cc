// nfs3bench: a benchmark and A/B client that speaks MOUNT v3 + NFSv3 directly
// over UDP or TCP. See docs/ab-testing.md.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "common/version.h"
#include "tools/nfs3bench/lab.h"
#include "tools/nfs3bench/options.h"
#include "tools/nfs3bench/pattern.h"
#include "tools/nfs3bench/report.h"
#include "tools/nfs3bench/sweep.h"

namespace nfs3d::bench {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

// A usage error: one line saying what is wrong, status 2.
int Usage(const std::string& error) {
  std::fprintf(stderr, "nfs3bench: %s (nfs3bench --help lists the options)\n", error.c_str());
  return 2;
}

bool ParseUint(const std::string& text, uint64_t* out) { return absl::SimpleAtoi(text, out); }

// Defaults of the lists that make a grid: a single run, a sweep, or the lab,
// which measures what a Linux client mounted without rsize/wsize gets (pref)
// beside fixed sizes, from a stop-and-wait client to the 16 calls the Linux
// client keeps in flight over UDP.
struct GridDefaults {
  const char* protos;
  const char* block_sizes;
  const char* outstanding;
};
GridDefaults DefaultsFor(const std::string& command) {
  if (command == "lab") return {"udp,tcp", "pref,8k,32k,1m", "1,4,16"};
  if (command == "sweep") return {"udp,tcp", "8k,16k,64k,1m", "8"};
  return {"tcp", "64k", "8"};
}

// The sweep's grid from the flags (--proto, --bs, --outstanding,
// --workload); false + *error on a bad value.
bool BuildGrid(const CommandLine& cl, SweepConfig* c, std::string* error) {
  const GridDefaults defaults = DefaultsFor(cl.command);
  std::string protos = cl.Get("proto", defaults.protos);
  for (const std::string& p : SplitList(protos)) {
    if (p == "tcp")
      c->protos.push_back(rpc::Transport::kTcp);
    else if (p == "udp")
      c->protos.push_back(rpc::Transport::kUdp);
    else
      return *error = "--proto: want tcp or udp, got '" + p + "'", false;
  }
  for (const std::string& b : SplitList(cl.Get("bs", defaults.block_sizes))) {
    uint64_t v = kPreferredSize;
    if (b != "pref" && (!ParseSize(b, &v) || v > (64u << 20))) {
      return *error = "--bs: bad size '" + b + "' (want a size or 'pref')", false;
    }
    c->block_sizes.push_back(v);
  }
  // With --connections each connection carries up to 1024 calls.
  uint64_t connections = 1;
  if (cl.Has("connections") && !ParseUint(cl.Get("connections"), &connections)) connections = 1;
  const uint64_t max_outstanding = 1024 * std::max<uint64_t>(connections, 1);
  const std::string outstanding_default =
      cl.Has("connections") ? cl.Get("connections") : defaults.outstanding;
  for (const std::string& q : SplitList(cl.Get("outstanding", outstanding_default))) {
    uint64_t v;
    if (!ParseUint(q, &v) || v < 1 || v > max_outstanding) {
      return *error = absl::StrCat("--outstanding: want 1..", max_outstanding, ", got '", q, "'"),
             false;
    }
    c->outstanding.push_back(static_cast<int>(v));
  }
  std::vector<std::string> workloads = SplitList(cl.Get("workload", "write,read"));
  for (const std::string& w : workloads) {
    if (!IsWorkloadName(w)) return *error = "--workload: unknown workload '" + w + "'", false;
  }
  c->workloads = ExpandWorkloads(workloads);
  if (c->protos.empty() || c->block_sizes.empty() || c->outstanding.empty() ||
      c->workloads.empty()) {
    return *error = "empty list", false;
  }
  return true;
}

// --connections and --interval: getattr/null/write over TCP connections of
// their own.
bool BuildConnectionOptions(const CommandLine& cl, SweepConfig* c, std::string* error) {
  WorkloadOptions& o = c->base;
  if (cl.Has("connections")) {
    uint64_t v;
    if (!ParseUint(cl.Get("connections"), &v) || v < 1 || v > 100000) {
      return *error = "--connections: want 1..100000", false;
    }
    o.connections = static_cast<int>(v);
    for (const std::string& w : c->workloads) {
      if (w != "getattr" && w != "null" && w != "write") {
        return *error = "--connections: getattr, null or write", false;
      }
    }
    for (rpc::Transport p : c->protos) {
      if (p != rpc::Transport::kTcp) return *error = "--connections: tcp only", false;
    }
    for (int q : c->outstanding) {
      if (q < o.connections) return *error = "--outstanding: a call per connection", false;
    }
  }
  if (cl.Has("interval")) {
    double secs;
    if (!cl.Has("connections")) return *error = "--interval needs --connections", false;
    if (!absl::SimpleAtod(cl.Get("interval"), &secs) || secs <= 0 || secs > 3600) {
      return *error = "--interval: want seconds > 0", false;
    }
    o.interval = absl::Seconds(secs);
  }
  return true;
}

// What each run does (--size/--time, --stable, --ops, ...) and --seed.
bool BuildWorkloadOptions(const CommandLine& cl, SweepConfig* c, std::string* error) {
  WorkloadOptions& o = c->base;
  uint64_t v;
  if (cl.Has("stable") && !ParseStableMode(cl.Get("stable"), &o.stable)) {
    return *error = "--stable: want unstable, datasync, filesync or sync", false;
  }
  if (cl.Has("size") && cl.Has("time")) return *error = "give --size or --time, not both", false;
  if (cl.Has("size") && !ParseSize(cl.Get("size"), &o.size))
    return *error = "--size: bad size", false;
  if (cl.Has("time")) {
    double secs;
    if (!absl::SimpleAtod(cl.Get("time"), &secs) || secs <= 0 || secs > 86400) {
      return *error = "--time: want seconds > 0", false;
    }
    o.time = absl::Seconds(secs);
  }
  if (!cl.Has("size") && !cl.Has("time")) o.size = 64u << 20;
  if (cl.Has("ops") && (!ParseUint(cl.Get("ops"), &o.ops) || o.ops == 0)) {
    return *error = "--ops: want a positive number", false;
  }
  if (cl.Has("file-size") && !ParseSize(cl.Get("file-size"), &o.file_size)) {
    return *error = "--file-size: bad size", false;
  }
  if (cl.Has("dir-entries")) {
    if (!ParseUint(cl.Get("dir-entries"), &v) || v == 0 || v > 1000000) {
      return *error = "--dir-entries: want 1..1000000", false;
    }
    o.dir_entries = static_cast<uint32_t>(v);
  }
  if (!BuildConnectionOptions(cl, c, error)) return false;
  o.verify = !cl.Has("no-verify");
  if (cl.Has("server-pid")) {
    if (!ParseUint(cl.Get("server-pid"), &v) || v == 0 || v > 0x7fffffff) {
      return *error = "--server-pid: bad pid", false;
    }
    o.server_pid = static_cast<int>(v);
  }
  if (cl.Has("seed") && !ParseUint(cl.Get("seed"), &c->seed))
    return *error = "--seed: bad number", false;
  return true;
}

// How the client talks to the server (ports, timeouts, identity, --sec).
bool BuildSessionOptions(const CommandLine& cl, SweepConfig* c, std::string* error) {
  SessionOptions& s = c->session;
  uint64_t v;
  if (cl.Has("port")) {
    if (!ParseUint(cl.Get("port"), &v) || v == 0 || v > 65535)
      return *error = "--port: bad port", false;
    s.nfs_port = static_cast<uint16_t>(v);
  }
  if (cl.Has("mount-port")) {
    if (!ParseUint(cl.Get("mount-port"), &v) || v == 0 || v > 65535) {
      return *error = "--mount-port: bad port", false;
    }
    s.mount_port = static_cast<uint16_t>(v);
  }
  if (cl.Has("timeout")) {
    double secs;
    if (!absl::SimpleAtod(cl.Get("timeout"), &secs) || secs <= 0)
      return *error = "--timeout: bad value", false;
    s.timeout = absl::Seconds(secs);
  }
  if (cl.Has("timeo")) {
    if (!ParseUint(cl.Get("timeo"), &v) || v == 0) return *error = "--timeo: bad value", false;
    s.udp_timeout = absl::Milliseconds(v);
  }
  if (cl.Has("uid")) {
    if (!ParseUint(cl.Get("uid"), &v)) return *error = "--uid: bad number", false;
    s.uid = static_cast<uint32_t>(v);
  }
  if (cl.Has("gid")) {
    if (!ParseUint(cl.Get("gid"), &v)) return *error = "--gid: bad number", false;
    s.gid = static_cast<uint32_t>(v);
  }
  if (cl.Has("sec")) {
    s.sec = cl.Get("sec");
    if (s.sec != "krb5" && s.sec != "krb5i" && s.sec != "krb5p" && s.sec != "sys") {
      return *error = "--sec: krb5, krb5i, krb5p or sys", false;
    }
    if (s.sec == "sys") s.sec.clear();
  }
  s.krb5_principal = cl.Get("krb5-principal", "");
  s.krb5_keytab = cl.Get("krb5-keytab", "");
  s.krb5_target = cl.Get("krb5-target", "");
  s.reserved_port = cl.Has("resvport");
  s.send_per_call = cl.Has("send-per-call");
  s.tls.ca = cl.Get("tls", "");
  s.tls.cert = cl.Get("tls-cert", "");
  s.tls.key = cl.Get("tls-key", "");
  return true;
}

// Fills a SweepConfig from the flags; false + *error on a bad value.
bool BuildConfig(const CommandLine& cl, SweepConfig* c, std::string* error) {
  if (!BuildGrid(cl, c, error) || !BuildWorkloadOptions(cl, c, error) ||
      !BuildSessionOptions(cl, c, error)) {
    return false;
  }
  c->dir_name = cl.Get("dir", absl::StrCat("nfs3bench.", getpid()));
  if (c->dir_name.empty() || absl::StrContains(c->dir_name, "/")) {
    return *error = "--dir: a single name", false;
  }
  c->keep = cl.Has("keep");
  c->json = !cl.Has("no-json");
  return true;
}

int PatternCommand(const CommandLine& cl) {
  uint64_t size = 0, seed = 1;
  if (!cl.positional.empty()) return Usage("pattern takes no target");
  if (!ParseSize(cl.Get("size"), &size)) return Usage("pattern: --size N required");
  if (cl.Has("seed") && !absl::SimpleAtoi(cl.Get("seed"), &seed))
    return Usage("--seed: bad number");
  Pattern p(seed);
  std::vector<uint8_t> buf(1u << 20);
  for (uint64_t off = 0; off < size;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - off));
    p.Fill(off, absl::Span<uint8_t>(buf.data(), n));
    if (std::fwrite(buf.data(), 1, n, stdout) != n) return 1;
    off += n;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int Main(int argc, char** argv) {
  auto parsed = ParseCommandLine(argc, argv);
  if (!parsed.ok()) return Usage(std::string(parsed.status().message()));
  const CommandLine& cl = *parsed;
  if (cl.Has("help")) {
    std::printf("%s", UsageText());
    return 0;
  }
  if (cl.Has("version")) {
    std::fputs(VersionText("nfs3bench").c_str(), stdout);
    return 0;
  }
  if (cl.command == "pattern") return PatternCommand(cl);

  struct sigaction sa {};
  sa.sa_handler = OnSignal;  // no SA_RESTART: poll() returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  SweepConfig config;
  std::string error;
  if (!BuildConfig(cl, &config, &error)) return Usage(error);
  if (cl.command == "lab") {
    if (!cl.positional.empty()) return Usage("lab takes no target: it starts its own server");
    return RunLab(cl, std::move(config), &g_stop);
  }
  if (cl.positional.size() != 1) return Usage("want exactly one target HOST:/export");
  auto target = ParseTarget(cl.positional[0]);
  if (!target.ok()) return Usage(std::string(target.status().message()));
  if (cl.command == "run" && (cl.Has("csv") || cl.Has("plot"))) {
    return Usage("--csv/--plot are for sweep and lab");
  }

  std::vector<RunResult> rows;
  bool ok = RunSweep(*target, config, &g_stop, &rows);
  if (rows.empty() && !ok) return g_stop.load() ? 1 : 3;
  if (cl.Has("csv")) {
    if (WriteCsv(cl.Get("csv"), rows)) {
      std::printf("# csv: %s\n", cl.Get("csv").c_str());
    } else {
      std::fprintf(stderr, "nfs3bench: cannot write %s\n", cl.Get("csv").c_str());
      ok = false;
    }
  }
  if (cl.Has("plot")) {
    std::string err = Plot(cl.Get("plot"), absl::StrCat("nfs3bench ", cl.positional[0]), rows);
    if (err.empty()) {
      std::printf("# plot: %s\n", cl.Get("plot").c_str());
    } else {
      std::fprintf(stderr, "nfs3bench: plot: %s\n", err.c_str());
    }
  }
  if (g_stop.load()) std::fprintf(stderr, "nfs3bench: interrupted\n");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace nfs3d::bench

int main(int argc, char** argv) { return nfs3d::bench::Main(argc, argv); }
