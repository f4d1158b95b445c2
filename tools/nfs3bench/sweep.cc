#include "tools/nfs3bench/sweep.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "tools/nfs3bench/report.h"

namespace nfs3d::bench {

int RunCommand(const std::vector<std::string>& argv, absl::Duration limit, std::string* output) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return -1;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipefd[1]);
  fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
  absl::Time deadline = absl::Now() + limit;
  std::string out;
  int status = 0;
  bool exited = false;
  while (!exited) {
    char buf[4096];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      exited = true;
      break;
    }
    if (absl::Now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(pipefd[0]);
      if (output) *output = out + "\n(killed: time limit)";
      return -1;
    }
    usleep(10000);
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  if (output) *output = out;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return -1;
}

bool RunSweep(const Target& target, const SweepConfig& c, const std::atomic<bool>* stop,
              std::vector<RunResult>* rows) {
  bool ok = true;
  for (rpc::Transport proto : c.protos) {
    if (stop && stop->load()) return false;
    SessionOptions so = c.session;
    so.transport = proto;
    const char* proto_name = proto == rpc::Transport::kTcp ? "tcp" : "udp";
    auto session = Session::Open(target, so);
    if (!session.ok()) {
      std::fprintf(stderr, "nfs3bench: %s: %s\n", proto_name,
                   std::string(session.status().message()).c_str());
      return false;
    }
    auto dir = (*session)->MkdirOrLookup((*session)->root(), c.dir_name);
    if (!dir.ok()) {
      std::fprintf(stderr, "nfs3bench: work directory %s: %s\n", c.dir_name.c_str(),
                   std::string(dir.status().message()).c_str());
      return false;
    }
    std::printf("# %s %s:%s rtmax=%u wtmax=%u dir=%s\n", proto_name, target.host.c_str(),
                target.export_path.c_str(), (*session)->rtmax(), (*session)->wtmax(),
                c.dir_name.c_str());
    BenchContext ctx(session->get(), *dir, c.seed, stop);
    double wire = c.wire_mbps ? c.wire_mbps(proto_name) : 0;
    for (uint64_t bs : c.block_sizes) {
      for (int qd : c.outstanding) {
        for (const std::string& w : c.workloads) {
          if (stop && stop->load()) break;
          WorkloadOptions o = c.base;
          o.name = w;
          o.bs = static_cast<uint32_t>(bs);
          o.outstanding = qd;
          if (c.before_run) c.before_run();
          RunResult r = ctx.Run(o);
          r.mtu = c.mtu;
          r.wire_mbps = wire;
          std::printf("%s\n", HumanLine(r).c_str());
          if (c.json) std::printf("%s\n", JsonLine(r).c_str());
          if (c.after_run) c.after_run(r);
          std::fflush(stdout);
          rows->push_back(r);
          if (!r.error.empty()) ok = false;
          // A broken connection fails every later run the same way: stop.
          if ((*session)->rpc().broken()) return false;
        }
      }
    }
    absl::Status cleaned = ctx.Cleanup(c.keep);
    if (!c.keep && cleaned.ok()) cleaned = (*session)->Rmdir((*session)->root(), c.dir_name);
    if (!cleaned.ok()) {
      std::fprintf(stderr, "nfs3bench: cleanup: %s\n", std::string(cleaned.message()).c_str());
    }
  }
  return ok && !(stop && stop->load());
}

bool WriteCsv(const std::string& path, const std::vector<RunResult>& rows) {
  std::ofstream f(path);
  if (!f) return false;
  f << CsvHeader() << "\n";
  for (const RunResult& r : rows) f << CsvRow(r) << "\n";
  return static_cast<bool>(f);
}

std::string Plot(const std::string& path, const std::string& title,
                 const std::vector<RunResult>& rows) {
  // One series per proto/MTU/workload/outstanding, points ordered by the size
  // of the calls sent (a requested 1m is 32k over UDP). Runs with the
  // server's preferred sizes (--bs pref) are also circled, in one series:
  // where a mount without rsize/wsize lands.
  std::map<std::string, std::map<uint64_t, double>> series;
  std::vector<std::pair<uint64_t, double>> preferred;
  std::set<uint64_t> sizes;
  for (const RunResult& r : rows) {
    if (r.xfer == 0 || !r.error.empty()) continue;
    std::string name = absl::StrCat(r.workload, " ", r.proto);
    if (r.mtu) absl::StrAppend(&name, " mtu", r.mtu);
    absl::StrAppend(&name, " qd", r.outstanding);
    if (r.bs == kPreferredSize) {
      preferred.emplace_back(r.xfer, r.MBps());
      if (series[name].count(r.xfer)) continue;  // a fixed size measured it too
    }
    series[name][r.xfer] = r.MBps();
    sizes.insert(r.xfer);
  }
  if (series.empty()) return "nothing to plot";
  std::string script = path + ".gp";
  std::ofstream f(script);
  if (!f) return absl::StrCat("cannot write ", script);
  bool svg = absl::EndsWith(path, ".svg");
  f << (svg ? "set terminal svg size 960,600 dynamic\n" : "set terminal png size 960,600\n");
  f << "set output '" << path << "'\n";
  f << "set title '" << title << "'\n";
  f << "set xlabel 'bytes per READ/WRITE call'\n";
  f << "set ylabel 'MB/s (10^6 bytes/s)'\nset yrange [0:*]\nset logscale x 2\nset grid\nset key "
       "outside right\n";
  f << "set xtics (";
  bool first = true;
  for (uint64_t s : sizes) {
    f << (first ? "" : ", ") << "'" << SizeName(s) << "' " << s;
    first = false;
  }
  f << ")\n";
  int i = 0;
  for (const auto& [name, points] : series) {
    f << "$s" << i << " << EOD\n";
    for (const auto& [bs, mbps] : points) f << bs << " " << mbps << "\n";
    f << "EOD\n";
    ++i;
  }
  if (!preferred.empty()) {
    f << "$pref << EOD\n";
    for (const auto& [xfer, mbps] : preferred) f << xfer << " " << mbps << "\n";
    f << "EOD\n";
  }
  f << "plot ";
  i = 0;
  for (const auto& [name, points] : series) {
    f << (i ? ", \\\n     " : "") << "$s" << i << " with linespoints lw 2 title '" << name << "'";
    ++i;
  }
  if (!preferred.empty()) {
    f << ", \\\n     $pref with points pt 6 ps 3 lw 2 lc rgb 'black' "
      << "title 'bs pref: a mount without rsize/wsize'";
  }
  f << "\n";
  f.close();
  std::string out;
  int rc = RunCommand({"gnuplot", script}, absl::Seconds(60), &out);
  if (rc == 127) return "gnuplot not found (apt-get install gnuplot-nox)";
  if (rc != 0) return absl::StrCat("gnuplot failed: ", out);
  return "";
}

}  // namespace nfs3d::bench
