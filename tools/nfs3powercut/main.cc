// nfs3powercut: shows that a power cut of an NFS server's machine loses
// nothing the server acknowledged as stable. `write` runs seeded FILE_SYNC,
// UNSTABLE+COMMIT and namespace calls (create, rename, link, chmod, remove)
// one at a time, journaling each reply, until the server stops answering;
// `check`, after the machine booted again, reads everything back and
// compares it with the journal. See docs/durability.md.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "tools/nfs3bench/session.h"
#include "tools/nfs3powercut/checker.h"
#include "tools/nfs3powercut/journal.h"
#include "tools/nfs3powercut/model.h"
#include "tools/nfs3powercut/writer.h"

namespace nfs3d::powercut {
namespace {

constexpr char kUsage[] = R"(usage:
  nfs3powercut write HOST:/export --journal FILE --dir NAME [--seed N]
                     [--workload filesync|unstable|meta|mixed] [--time SEC]
  nfs3powercut check HOST:/export --journal FILE [--wait SEC]
common: [--port N --mount-port N] [--proto tcp|udp] [--timeout SEC]
write: calls one at a time until the server stops answering (or --time, 600 s),
       each acknowledged one journaled in FILE.
check: waits up to --wait (120 s) for the server, then prints one line
       (bytes_verified=... stable_bytes_lost=... namespace_lost=...).
exit status: 0 ok, 1 acknowledged data or names lost (check) or an error reply
(write), 2 usage, 3 the server could not be reached
)";

int Usage(const std::string& why) {
  std::fprintf(stderr, "nfs3powercut: %s\n%s", why.c_str(), kUsage);
  return 2;
}

struct Args {
  std::string command, target;
  std::map<std::string, std::string> flags;
  std::string Get(const std::string& k, const std::string& def = "") const {
    auto it = flags.find(k);
    return it == flags.end() ? def : it->second;
  }
};

bool Parse(int argc, char** argv, Args* a, std::string* why) {
  static const char* kFlags[] = {"journal", "dir",  "seed",       "workload", "time",
                                 "wait",    "port", "mount-port", "proto",    "timeout"};
  if (argc < 3) return *why = "want a command and HOST:/export", false;
  a->command = argv[1];
  a->target = argv[2];
  for (int i = 3; i < argc; i += 2) {
    std::string f = argv[i];
    if (f.rfind("--", 0) != 0 || i + 1 >= argc) return *why = "bad argument " + f, false;
    f = f.substr(2);
    if (std::find(std::begin(kFlags), std::end(kFlags), f) == std::end(kFlags)) {
      return *why = "unknown option --" + f, false;
    }
    a->flags[f] = argv[i + 1];
  }
  if (a->command != "write" && a->command != "check") return *why = "unknown command", false;
  if (a->Get("journal").empty()) return *why = "--journal is required", false;
  if (a->command == "write" && a->Get("dir").empty()) return *why = "--dir is required", false;
  return true;
}

uint64_t Number(const Args& a, const std::string& k, uint64_t def) {
  uint64_t v = def;
  if (!a.Get(k).empty() && !absl::SimpleAtoi(a.Get(k), &v)) v = def;
  return v;
}

bench::SessionOptions SessionOptionsOf(const Args& a) {
  bench::SessionOptions o;
  o.transport = a.Get("proto", "tcp") == "udp" ? rpc::Transport::kUdp : rpc::Transport::kTcp;
  o.nfs_port = static_cast<uint16_t>(Number(a, "port", 0));
  o.mount_port = static_cast<uint16_t>(Number(a, "mount-port", 0));
  o.timeout = absl::Seconds(Number(a, "timeout", 10));
  return o;
}

int Write(const Args& a, const bench::Target& target) {
  absl::StatusOr<std::unique_ptr<bench::Session>> s =
      bench::Session::Open(target, SessionOptionsOf(a));
  if (!s.ok()) {
    std::fprintf(stderr, "nfs3powercut: %s\n", std::string(s.status().message()).c_str());
    return 3;
  }
  WriterOptions o;
  o.seed = Number(a, "seed", 1);
  o.dir = a.Get("dir");
  o.workload = a.Get("workload", "mixed");
  o.time = absl::Seconds(Number(a, "time", 600));
  o.journal = a.Get("journal");
  absl::Status st = RunWriter(**s, o);
  if (st.ok()) return 0;
  std::fprintf(stderr, "nfs3powercut: %s\n", std::string(st.message()).c_str());
  return 1;
}

int Check(const Args& a, const bench::Target& target) {
  absl::StatusOr<std::vector<Line>> lines = ReadJournal(a.Get("journal"));
  absl::StatusOr<Replay> replay =
      lines.ok() ? ReplayJournal(*lines) : absl::StatusOr<Replay>(lines.status());
  if (!replay.ok()) {
    std::fprintf(stderr, "nfs3powercut: %s\n", std::string(replay.status().message()).c_str());
    return 3;
  }
  // The server's machine may still be booting: try until --wait is over.
  const absl::Time deadline = absl::Now() + absl::Seconds(Number(a, "wait", 120));
  absl::StatusOr<std::unique_ptr<bench::Session>> s;
  do {
    s = bench::Session::Open(target, SessionOptionsOf(a));
    if (!s.ok()) absl::SleepFor(absl::Milliseconds(500));
  } while (!s.ok() && absl::Now() < deadline);
  absl::StatusOr<CheckReport> report =
      s.ok() ? RunCheck(**s, *replay) : absl::StatusOr<CheckReport>(s.status());
  if (!report.ok()) {
    std::fprintf(stderr, "nfs3powercut: %s\n", std::string(report.status().message()).c_str());
    return 3;
  }
  const size_t kShown = 30;  // enough to see the pattern of a loss
  for (size_t i = 0; i < report->problems.size() && i < kShown; ++i) {
    std::fprintf(stderr, "LOST: %s\n", report->problems[i].c_str());
  }
  if (report->problems.size() > kShown) {
    std::fprintf(stderr, "LOST: ... and %zu more\n", report->problems.size() - kShown);
  }
  std::printf("%s\n", report->Summary().c_str());
  return report->ok() ? 0 : 1;
}

}  // namespace
}  // namespace nfs3d::powercut

int main(int argc, char** argv) {
  using namespace nfs3d::powercut;  // NOLINT(google-build-using-namespace)
  Args a;
  std::string why;
  if (!Parse(argc, argv, &a, &why)) return Usage(why);
  absl::StatusOr<nfs3d::bench::Target> target = nfs3d::bench::ParseTarget(a.target);
  if (!target.ok()) return Usage(std::string(target.status().message()));
  return a.command == "write" ? Write(a, *target) : Check(a, *target);
}
