#include "tools/nfs3bench/lab.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

#include "client/rpc_client.h"
#include "tools/nfs3bench/lab_drops.h"
#include "tools/nfs3bench/report.h"
#include "tools/nfs3bench/shortfall.h"

namespace nfs3d::bench {
namespace {

// Addresses exist only inside the namespaces this process creates.
constexpr char kServerNs[] = "nb-srv";
constexpr char kClientNs[] = "nb-cli";
constexpr char kServerIf[] = "nbs0";
constexpr char kClientIf[] = "nbc0";
constexpr char kServerAddr[] = "10.231.0.1";
constexpr char kClientAddr[] = "10.231.0.2";

absl::Duration kCmdLimit = absl::Seconds(20);

struct Child {
  std::string name;
  pid_t pid = -1;
};

class Lab {
 public:
  Lab(const CommandLine& cl, SweepConfig config, const std::atomic<bool>* stop)
      : cl_(cl), config_(std::move(config)), stop_(stop) {}
  ~Lab() { Teardown(); }

  int Run();

 private:
  bool Fail(const std::string& message) {
    std::fprintf(stderr, "nfs3bench lab: %s\n", message.c_str());
    return false;
  }
  bool Cmd(const std::vector<std::string>& argv, std::string* out = nullptr) {
    std::string output;
    int rc = RunCommand(argv, kCmdLimit, &output);
    if (out) *out = output;
    if (rc == 0) return true;
    std::string line;
    for (const std::string& a : argv) absl::StrAppend(&line, a, " ");
    return Fail(absl::StrCat(line, "failed (", rc, "): ", output));
  }
  bool Interrupted() const { return stop_ && stop_->load(); }
  bool ParseArgs();
  bool EnterPrivateWorld();
  bool BuildNetwork();
  bool ConfigureLink(uint32_t mtu);
  bool StartServer();
  void StopServer();
  // One MTU: the link, nuttcp, then the sweep once per --udp-pacing value
  // (the server restarted with it; TCP rows with the first value only).
  bool RunMtu(uint32_t mtu, const Target& target);
  std::string WithVariant(const std::string& path, size_t variant) const;
  bool WaitForServer();
  pid_t Spawn(const std::string& name, const std::vector<std::string>& argv, const char* netns,
              const std::string& log);
  double Nuttcp(bool udp, uint32_t mtu);
  DropCounts ReadDrops();
  void RecordDrops(const RunResult& r);
  bool ChildAlive(const Child& c);
  void PrintTable(const std::vector<RunResult>& rows);
  // UDP rows of every --udp-pacing value side by side.
  void PrintPacingComparison();
  // One figure of the runs with the most calls in flight; with several
  // --udp-pacing values, UDP series are named "udp pacing VALUE".
  bool PlotRuns();
  void Teardown();

  const CommandLine& cl_;
  SweepConfig config_;
  const std::atomic<bool>* stop_;
  std::vector<uint32_t> mtus_;
  std::string rate_, netem_;
  double rate_mbit_ = 0;
  int nuttcp_secs_ = 3;
  std::string work_;  // tmpfs with export/, state/, logs
  std::string export_dir_;
  bool work_mounted_ = false;
  int outer_ns_ = -1;
  bool netns_made_ = false;
  std::vector<Child> children_;
  std::map<std::pair<uint32_t, std::string>, double> wire_;  // (mtu, proto) -> Mbit/s
  pid_t server_pid_ = 0;
  // --udp-pacing values ("" alone: the server's default), the one running,
  // and the rows of each.
  std::vector<std::string> pacing_ = {""};
  size_t variant_ = 0;
  bool rpcbind_started_ = false;
  std::vector<std::vector<RunResult>> rows_;
  DropCounts drops_before_;  // of the run in progress
  // (variant, bs, proto, mtu, qd, workload) -> what each place dropped
  using RowKey = std::tuple<size_t, uint32_t, std::string, uint32_t, int, std::string>;
  std::map<RowKey, DropCounts> drops_;
  bool torn_down_ = false;
};

bool ParseRateMbit(const std::string& rate, double* mbit) {
  std::string digits = rate;
  double mult;
  auto ends = [&](const char* suffix) {
    size_t n = std::strlen(suffix);
    return digits.size() > n && digits.compare(digits.size() - n, n, suffix) == 0;
  };
  if (ends("gbit"))
    mult = 1000, digits.resize(digits.size() - 4);
  else if (ends("mbit"))
    mult = 1, digits.resize(digits.size() - 4);
  else if (ends("kbit"))
    mult = 0.001, digits.resize(digits.size() - 4);
  else
    return false;
  double v;
  if (!absl::SimpleAtod(digits, &v) || v <= 0) return false;
  *mbit = v * mult;
  return true;
}

bool Lab::ParseArgs() {
  for (const std::string& m : SplitList(cl_.Get("mtu", "1500"))) {
    uint32_t v;
    if (!absl::SimpleAtoi(m, &v) || v < 1280 || v > 65535) {
      return Fail(absl::StrCat("--mtu: want 1280..65535, got '", m, "'"));
    }
    mtus_.push_back(v);
  }
  rate_ = cl_.Get("rate");
  if (!rate_.empty() && !ParseRateMbit(rate_, &rate_mbit_)) {
    return Fail("--rate: want e.g. 100mbit or 1gbit");
  }
  netem_ = cl_.Get("netem");
  if (cl_.Has("udp-pacing")) {
    pacing_ = SplitList(cl_.Get("udp-pacing"));
    if (pacing_.empty()) return Fail("--udp-pacing: want e.g. off,auto or 1gbit");
    if (cl_.Has("server-cmd")) return Fail("--udp-pacing configures nfs3d: not with --server-cmd");
  }
  rows_.resize(pacing_.size());
  if (cl_.Has("nuttcp-time") && (!absl::SimpleAtoi(cl_.Get("nuttcp-time"), &nuttcp_secs_) ||
                                 nuttcp_secs_ < 1 || nuttcp_secs_ > 60)) {
    return Fail("--nuttcp-time: want 1..60 seconds");
  }
  return true;
}

// A network and mount namespace of our own: veths, netns bind mounts under
// /run and the tmpfs export vanish with this process whatever happens.
bool Lab::EnterPrivateWorld() {
  outer_ns_ = -1;
  if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) {
    return Fail(absl::StrCat("unshare(net, mount): ", std::strerror(errno)));
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Fail(absl::StrCat("make / private: ", std::strerror(errno)));
  }
  if (mount("tmpfs", "/run", "tmpfs", 0, "mode=755") != 0) {
    return Fail(absl::StrCat("tmpfs on /run: ", std::strerror(errno)));
  }
  mkdir("/run/netns", 0755);
  mkdir("/run/rpcbind", 0755);
  struct stat st;
  if (stat("/var/lib/nfs", &st) == 0) mount("tmpfs", "/var/lib/nfs", "tmpfs", 0, "mode=755");
  outer_ns_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  char tmpl[] = "/tmp/nfs3bench-lab.XXXXXX";
  if (!mkdtemp(tmpl)) return Fail("mkdtemp failed");
  work_ = tmpl;
  if (mount("tmpfs", work_.c_str(), "tmpfs", 0, "mode=755,size=50%") != 0) {
    return Fail(absl::StrCat("tmpfs on ", work_, ": ", std::strerror(errno)));
  }
  work_mounted_ = true;
  mkdir((work_ + "/export").c_str(), 0777);
  mkdir((work_ + "/state").c_str(), 0700);
  export_dir_ = cl_.Get("export-dir", work_ + "/export");
  return true;
}

bool Lab::BuildNetwork() {
  netns_made_ = true;
  if (!Cmd({"ip", "link", "set", "lo", "up"}) || !Cmd({"ip", "netns", "add", kServerNs}) ||
      !Cmd({"ip", "netns", "add", kClientNs}) ||
      !Cmd({"ip", "link", "add", kServerIf, "type", "veth", "peer", "name", kClientIf}) ||
      !Cmd({"ip", "link", "set", kServerIf, "netns", kServerNs}) ||
      !Cmd({"ip", "link", "set", kClientIf, "netns", kClientNs})) {
    return false;
  }
  for (auto [ns, dev, addr] : {std::tuple{kServerNs, kServerIf, kServerAddr},
                               std::tuple{kClientNs, kClientIf, kClientAddr}}) {
    if (!Cmd({"ip", "-n", ns, "link", "set", "lo", "up"}) ||
        !Cmd({"ip", "-n", ns, "addr", "add", absl::StrCat(addr, "/24"), "dev", dev}) ||
        !Cmd({"ip", "-n", ns, "link", "set", dev, "up"})) {
      return false;
    }
  }
  // A reassembly that lacks a fragment fails after ipfrag_time (30 s by
  // default): that long, its ReasmTimeout would land in a later row. 1 s is
  // still far beyond any reply's fragments on this link (and the client's
  // retransmit timeout); RecordDrops waits it out after a UDP run.
  for (const char* ns : {kServerNs, kClientNs}) {
    if (!Cmd({"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ipfrag_time=1"})) return false;
  }
  // This process runs the clients: move it into the client namespace.
  int fd = open(absl::StrCat("/run/netns/", kClientNs).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
    if (fd >= 0) close(fd);
    return Fail(absl::StrCat("setns client: ", std::strerror(errno)));
  }
  close(fd);
  if (!netem_.empty()) {
    // Probe once on the client's loopback-free veth so the message is clear.
    std::string out;
    RunCommand({"modprobe", "sch_netem"}, kCmdLimit);
    if (RunCommand({"tc", "-n", kClientNs, "qdisc", "add", "dev", kClientIf, "root", "netem",
                    "delay", "0ms"},
                   kCmdLimit, &out) != 0) {
      return Fail("--netem: this kernel has no sch_netem (tc says: " + out +
                  "). Run without --netem, or use shared/lab/nfs-lab mount-run --netem, which "
                  "applies netem inside a VM.");
    }
    RunCommand({"tc", "-n", kClientNs, "qdisc", "del", "dev", kClientIf, "root"}, kCmdLimit);
  }
  return true;
}

bool Lab::ConfigureLink(uint32_t mtu) {
  for (auto [ns, dev] : {std::pair{kServerNs, kServerIf}, std::pair{kClientNs, kClientIf}}) {
    if (!Cmd({"ip", "-n", ns, "link", "set", "dev", dev, "mtu", absl::StrCat(mtu)})) return false;
    RunCommand({"tc", "-n", ns, "qdisc", "del", "dev", dev, "root"}, kCmdLimit);
    std::vector<std::string> tbf;
    if (!rate_.empty()) {
      // burst holds a 64 KiB GSO packet; latency bounds the queue.
      tbf = {
          "tbf",     "rate", rate_, "burst", absl::StrCat(std::max<uint32_t>(128 * 1024, 4 * mtu)),
          "latency", "20ms"};
    }
    if (!netem_.empty()) {
      std::vector<std::string> cmd = {"tc", "-n",   ns,       "qdisc", "add",  "dev",
                                      dev,  "root", "handle", "1:",    "netem"};
      for (absl::string_view w : absl::StrSplit(netem_, ' ', absl::SkipEmpty()))
        cmd.emplace_back(w);
      if (!Cmd(cmd)) return false;
      if (!tbf.empty()) {
        std::vector<std::string> child = {"tc", "-n",     ns,   "qdisc",  "add", "dev",
                                          dev,  "parent", "1:", "handle", "2:"};
        child.insert(child.end(), tbf.begin(), tbf.end());
        if (!Cmd(child)) return false;
      }
    } else if (!tbf.empty()) {
      std::vector<std::string> cmd = {"tc", "-n", ns, "qdisc", "add", "dev", dev, "root"};
      cmd.insert(cmd.end(), tbf.begin(), tbf.end());
      if (!Cmd(cmd)) {
        return Fail("tbf rate limit failed: this kernel may lack sch_tbf");
      }
    }
  }
  return true;
}

pid_t Lab::Spawn(const std::string& name, const std::vector<std::string>& argv, const char* netns,
                 const std::string& log) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    setpgid(0, 0);  // Ctrl-C reaches nfs3bench only; it stops children in order
    if (netns) {
      int fd = open(absl::StrCat("/run/netns/", netns).c_str(), O_RDONLY);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) _exit(126);
    }
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  children_.push_back(Child{name, pid});
  return pid;
}

bool Lab::ChildAlive(const Child& c) {
  int status;
  return c.pid > 0 && waitpid(c.pid, &status, WNOHANG) == 0;
}

std::string FindNfs3d(const std::string& flag) {
  if (!flag.empty()) return flag;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    self[n] = 0;
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    for (const std::string& c : {dir + "/../../daemon/nfs3d", dir + "/nfs3d"}) {
      if (access(c.c_str(), X_OK) == 0) return c;
    }
  }
  return "nfs3d";
}

bool Lab::StartServer() {
  if (cl_.Has("rpcbind") && !rpcbind_started_) {
    rpcbind_started_ = true;
    Spawn("rpcbind", {"rpcbind", "-f", "-w"}, kServerNs, work_ + "/rpcbind.log");
    usleep(300000);
  }
  std::string log = work_ + "/server.log";
  if (cl_.Has("server-cmd")) {
    std::string cmd =
        absl::StrReplaceAll(cl_.Get("server-cmd"), {{"{export}", export_dir_}, {"{work}", work_}});
    std::printf("# server: %s\n", cmd.c_str());
    Spawn("server", {"/bin/sh", "-c", "exec " + cmd}, kServerNs, log);
  } else {
    std::string nfs3d = FindNfs3d(cl_.Get("nfs3d"));
    std::string conf = work_ + "/nfs3d.conf";
    std::ofstream f(conf);
    f << "[nfsd]\nlisten = 0.0.0.0\nport = " << config_.session.nfs_port
      << "\nmountd_port = " << config_.session.mount_port
      << "\nportmapper = off\nthreads = 8\n[paths]\nstate_dir = " << work_ << "/state\n"
      << "exports = " << work_ << "/exports\n";
    if (!pacing_[variant_].empty()) f << "[udp]\npacing = " << pacing_[variant_] << "\n";
    f.close();
    std::ofstream e(work_ + "/exports");
    e << export_dir_ << " 10.231.0.0/24(rw,insecure,no_root_squash)\n";
    e.close();
    std::printf("# server: %s --config %s --foreground\n", nfs3d.c_str(), conf.c_str());
    Spawn("server", {nfs3d, "--config", conf, "--foreground"}, kServerNs, log);
  }
  server_pid_ = children_.back().pid;
  return WaitForServer();
}

bool Lab::WaitForServer() {
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  const Child& server = children_.back();
  while (absl::Now() < deadline && !Interrupted()) {
    if (!ChildAlive(server)) {
      std::string tail;
      RunCommand({"tail", "-20", work_ + "/server.log"}, kCmdLimit, &tail);
      return Fail("the server exited at startup; its log:\n" + tail);
    }
    client::RpcClientOptions o;
    o.transport = rpc::Transport::kTcp;
    o.timeout = absl::Milliseconds(500);
    auto c = client::RpcClient::Connect(kServerAddr, config_.session.mount_port, o);
    if (c.ok()) {
      auto r = (*c)->Call(100005, 3, 0, {});
      if (r.ok()) return true;
    }
    usleep(200000);
  }
  return Fail("the server did not answer MOUNT NULL within 20 s (log: " + work_ + "/server.log)");
}

double Lab::Nuttcp(bool udp, uint32_t mtu) {
  std::vector<std::string> argv = {"nuttcp", absl::StrCat("-T", nuttcp_secs_), "-fparse"};
  if (udp) {
    argv.push_back("-u");
    argv.push_back(absl::StrCat("-l", mtu - 28));  // one unfragmented datagram per frame
    // At the payload share of the shaped rate: tbf counts the
    // 42 bytes of Ethernet + IP + UDP headers too, so sending the payload at
    // the full rate would measure tbf's drops instead of the link.
    double r = rate_mbit_ > 0 ? rate_mbit_ * (mtu - 28.0) / (mtu + 14.0) : 10000;
    argv.push_back(absl::StrCat("-R", static_cast<int>(r), "m"));
    argv.push_back("-w4m");  // receiver socket buffer: losses should be the link's
  }
  argv.push_back(kServerAddr);
  std::string out;
  int rc = RunCommand(argv, absl::Seconds(nuttcp_secs_ + 15), &out);
  size_t pos = out.find("rate_Mbps=");
  if (rc != 0 || pos == std::string::npos) {
    Fail(absl::StrCat("nuttcp ", udp ? "udp" : "tcp", " failed: ", out));
    return 0;
  }
  double v = 0;
  size_t end = out.find_first_of(" \n", pos);
  (void)absl::SimpleAtod(out.substr(pos + 10, end - pos - 10), &v);
  std::string loss;
  size_t lp = out.find("data_loss=");
  if (lp != std::string::npos) loss = out.substr(lp + 10, out.find_first_of(" \n", lp) - lp - 10);
  std::printf("# nuttcp %s mtu=%u: %.1f Mbit/s%s\n", udp ? "udp" : "tcp", mtu, v,
              loss.empty() ? "" : absl::StrCat(" (loss ", loss, "%)").c_str());
  return v;
}

void Lab::StopServer() {
  for (auto it = children_.begin(); it != children_.end(); ++it) {
    if (it->pid != server_pid_) continue;
    kill(it->pid, SIGTERM);
    absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (ChildAlive(*it) && absl::Now() < deadline) usleep(50000);
    if (ChildAlive(*it)) {
      kill(it->pid, SIGKILL);
      waitpid(it->pid, nullptr, 0);
    }
    children_.erase(it);
    break;
  }
  server_pid_ = 0;
}

bool Lab::RunMtu(uint32_t mtu, const Target& target) {
  if (!ConfigureLink(mtu)) return false;
  std::printf("# link: veth mtu %u, rate %s, netem %s\n", mtu,
              rate_.empty() ? "unlimited" : rate_.c_str(),
              netem_.empty() ? "none" : netem_.c_str());
  usleep(200000);
  wire_[{mtu, "tcp"}] = Nuttcp(false, mtu);
  wire_[{mtu, "udp"}] = Nuttcp(true, mtu);
  bool ok = true;
  for (size_t v = 0; v < pacing_.size() && !Interrupted(); ++v) {
    if (v != variant_ || server_pid_ == 0) {
      StopServer();
      variant_ = v;
      if (!StartServer()) return false;
    }
    if (!pacing_[v].empty()) std::printf("# nfs3d [udp] pacing = %s\n", pacing_[v].c_str());
    SweepConfig c = config_;
    c.mtu = mtu;
    if (c.base.server_pid == 0 || !cl_.Has("server-pid")) c.base.server_pid = server_pid_;
    if (v > 0) c.protos = {rpc::Transport::kUdp};  // pacing is UDP's alone
    if (c.protos.empty()) continue;
    c.wire_mbps = [this, mtu](const std::string& proto) { return wire_[{mtu, proto}]; };
    c.before_run = [this] { drops_before_ = ReadDrops(); };
    c.after_run = [this](const RunResult& r) { RecordDrops(r); };
    if (!RunSweep(target, c, stop_, &rows_[v])) ok = false;
    const Child* server = nullptr;
    for (const Child& ch : children_) {
      if (ch.pid == server_pid_) server = &ch;
    }
    if (server == nullptr || !ChildAlive(*server)) {
      Fail("the server died during the run (log: " + work_ + "/server.log)");
      return false;
    }
  }
  return ok;
}

std::string Lab::WithVariant(const std::string& path, size_t variant) const {
  if (pacing_.size() < 2) return path;
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot < path.rfind('/') + 1) dot = path.size();
  return absl::StrCat(path.substr(0, dot), "-pacing-", pacing_[variant], path.substr(dot));
}

DropCounts Lab::ReadDrops() {
  DropCounts counts;
  ReadEnd("server", server_pid_, kServerNs, kServerIf, &counts);
  ReadEnd("client", 0, kClientNs, kClientIf, &counts);
  return counts;
}

void Lab::RecordDrops(const RunResult& r) {
  if (r.proto == "udp") usleep(1100000);  // ipfrag_time: reassemblies still waiting fail
  DropCounts delta = DropDelta(drops_before_, ReadDrops());
  std::string text = DescribeDrops(delta);
  if (!text.empty()) std::printf("#   dropped during the run: %s\n", text.c_str());
  drops_[RowKey{variant_, r.bs, r.proto, r.mtu, r.outstanding, r.workload}] = std::move(delta);
}

void Lab::PrintTable(const std::vector<RunResult>& rows) {
  std::vector<std::string> io;
  for (const std::string& w : config_.workloads) {
    if (w == "write" || w == "read" || w == "randread" || w == "randwrite") io.push_back(w);
  }
  std::printf(
      "\n== nfs3bench lab: rate %s, netem %s; MB/s = 10^6 B/s; %%wire = NFS Mbit/s / "
      "nuttcp Mbit/s (same proto, same MTU)\n",
      rate_.empty() ? "unlimited" : rate_.c_str(), netem_.empty() ? "none" : netem_.c_str());
  std::string head = absl::StrFormat("%-5s %-5s %-6s %-4s %-5s", "bs", "proto", "mtu", "qd", "rpc");
  for (const std::string& w : io) absl::StrAppendFormat(&head, " %10s %6s", w + " MB/s", "%wire");
  absl::StrAppendFormat(&head, " %9s %8s", "nuttcp", "retrans");
  std::printf("%s\n", head.c_str());
  // One line per (bs, proto, mtu, qd), sorted by bs.
  using Key = std::tuple<uint32_t, std::string, uint32_t, int>;
  std::map<Key, std::map<std::string, RunResult>> grid;
  for (const RunResult& r : rows) grid[{r.bs, r.proto, r.mtu, r.outstanding}][r.workload] = r;
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  for (const auto& [key, runs] : grid) {
    const auto& [bs, proto, mtu, qd] = key;
    const RunResult& any = runs.begin()->second;
    std::string line = absl::StrFormat("%-5s %-5s %-6d %-4d %-5s", BlockSizeName(bs), proto, mtu,
                                       qd, SizeName(any.xfer));
    std::string why;  // one line per run below kWireShareExplained
    uint64_t retrans = 0;
    for (const std::string& w : io) {
      auto it = runs.find(w);
      if (it == runs.end() || !it->second.error.empty()) {
        absl::StrAppendFormat(&line, " %10s %6s", it == runs.end() ? "-" : "ERROR", "-");
        continue;
      }
      const RunResult& r = it->second;
      retrans += r.retransmits;
      auto stop_and_wait = grid.find(Key{bs, proto, mtu, 1});
      const RunResult* base = nullptr;
      if (stop_and_wait != grid.end() && stop_and_wait->second.count(w)) {
        base = &stop_and_wait->second.at(w);
      }
      const std::string drops = DescribeDrops(drops_[RowKey{variant_, bs, proto, mtu, qd, w}]);
      std::string reason = ExplainShortfall(r, base, cores, drops);
      if (!reason.empty()) {
        absl::StrAppend(&why, "      ", w, " below 90%: ", reason, "\n");
      } else if (!drops.empty()) {
        absl::StrAppend(&why, "      ", w, " dropped at: ", drops, "\n");
      }
      if (r.wire_mbps > 0) {
        absl::StrAppendFormat(&line, " %10.1f %5.0f%%", r.MBps(), 100 * r.Mbitps() / r.wire_mbps);
      } else {
        absl::StrAppendFormat(&line, " %10.1f %6s", r.MBps(), "-");
      }
    }
    absl::StrAppendFormat(&line, " %9.1f %8d", any.wire_mbps / 8, retrans);
    std::printf("%s\n%s", line.c_str(), why.c_str());
  }
  std::printf(
      "(nuttcp column: MB/s the raw link carried with nuttcp over that proto; "
      "bs pref: the server's FSINFO preferred size, as a Linux mount without "
      "rsize/wsize uses)\n");
}

void Lab::PrintPacingComparison() {
  using Key = std::tuple<uint32_t, uint32_t, int, std::string>;  // mtu, bs, qd, workload
  std::map<Key, std::vector<const RunResult*>> grid;
  for (size_t v = 0; v < rows_.size(); ++v) {
    for (const RunResult& r : rows_[v]) {
      if (r.proto != "udp" || !r.error.empty()) continue;
      auto& cells = grid[Key{r.mtu, r.bs, r.outstanding, r.workload}];
      cells.resize(rows_.size(), nullptr);
      cells[v] = &r;
    }
  }
  std::printf(
      "\n== UDP side by side: %%wire / retransmits / where datagrams dropped, per "
      "[udp] pacing value\n");
  std::string head = absl::StrFormat("%-6s %-5s %-4s %-6s", "mtu", "bs", "qd", "work");
  for (const std::string& p : pacing_) absl::StrAppendFormat(&head, " | %-28s", "pacing " + p);
  std::printf("%s\n", head.c_str());
  for (const auto& [key, cells] : grid) {
    const auto& [mtu, bs, qd, w] = key;
    std::string line = absl::StrFormat("%-6d %-5s %-4d %-6s", mtu, BlockSizeName(bs), qd, w);
    std::string drops;
    for (size_t v = 0; v < cells.size(); ++v) {
      const RunResult* r = cells[v];
      if (r == nullptr) {
        absl::StrAppendFormat(&line, " | %-28s", "-");
        continue;
      }
      const double share = r->wire_mbps > 0 ? 100 * r->Mbitps() / r->wire_mbps : 0;
      absl::StrAppendFormat(&line, " | %4.0f%% %4d retr %-14s", share, r->retransmits, "");
      std::string d =
          DescribeDrops(drops_[RowKey{v, r->bs, r->proto, r->mtu, r->outstanding, r->workload}]);
      if (!d.empty()) absl::StrAppend(&drops, "      pacing ", pacing_[v], ": ", d, "\n");
    }
    std::printf("%s\n%s", line.c_str(), drops.c_str());
  }
}

bool Lab::PlotRuns() {
  // The most calls in flight only: a line per qd would bury the figure.
  const int qd = *std::max_element(config_.outstanding.begin(), config_.outstanding.end());
  std::vector<RunResult> plotted;
  for (size_t v = 0; v < rows_.size(); ++v) {
    for (RunResult r : rows_[v]) {
      if (r.outstanding != qd) continue;
      if (pacing_.size() > 1 && r.proto == "udp") r.proto = "udp pacing " + pacing_[v];
      plotted.push_back(std::move(r));
    }
  }
  if (plotted.empty()) return true;
  std::string title = absl::StrCat("nfs3bench lab, rate ", rate_.empty() ? "unlimited" : rate_,
                                   ", ", qd, " calls in flight");
  const std::string plot = cl_.Get("plot");
  std::string err = Plot(plot, title, plotted);
  if (!err.empty()) return Fail("plot: " + err);
  std::printf("# plot: %s\n", plot.c_str());
  return true;
}

int Lab::Run() {
  if (!ParseArgs()) return 2;
  if (geteuid() != 0) {
    Fail("lab needs root (network namespaces, veth, tc)");
    return 3;
  }
  for (const char* tool : {"ip", "tc", "nuttcp"}) {
    std::string out;
    if (RunCommand({"sh", "-c", absl::StrCat("command -v ", tool)}, kCmdLimit, &out) != 0) {
      Fail(absl::StrCat(tool, " not found (apt-get install iproute2 nuttcp)"));
      return 3;
    }
  }
  if (config_.session.nfs_port == 0) config_.session.nfs_port = 2049;
  if (config_.session.mount_port == 0) config_.session.mount_port = 20048;
  if (!cl_.Has("size") && !cl_.Has("time")) {
    config_.base.size = 0;
    config_.base.time = absl::Seconds(3);
  }
  if (!EnterPrivateWorld() || !BuildNetwork()) return 3;
  if (!StartServer()) return 3;
  Spawn("nuttcp-server", {"nuttcp", "-S", "--nofork"}, kServerNs, work_ + "/nuttcp.log");
  Target target{kServerAddr, cl_.Get("export-path", export_dir_)};
  bool ok = true;
  for (uint32_t mtu : mtus_) {
    if (Interrupted()) break;
    if (!RunMtu(mtu, target)) {
      ok = false;
      if (server_pid_ == 0 || Interrupted()) break;
    }
  }
  for (variant_ = 0; variant_ < pacing_.size(); ++variant_) {
    const std::vector<RunResult>& rows = rows_[variant_];
    if (!pacing_[variant_].empty()) {
      std::printf("\n#### nfs3d [udp] pacing = %s\n", pacing_[variant_].c_str());
    }
    PrintTable(rows);
    if (cl_.Has("csv")) {
      const std::string csv = WithVariant(cl_.Get("csv"), variant_);
      if (WriteCsv(csv, rows))
        std::printf("# csv: %s\n", csv.c_str());
      else
        ok = Fail("cannot write " + csv);
    }
  }
  if (cl_.Has("plot") && !PlotRuns()) ok = false;
  if (pacing_.size() > 1) PrintPacingComparison();
  if (Interrupted()) {
    Fail("interrupted");
    return 1;
  }
  return ok ? 0 : 1;
}

void Lab::Teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  // Children: SIGTERM, 5 s grace, then SIGKILL.
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
    if (ChildAlive(*it)) kill(it->pid, SIGTERM);
  }
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
    while (ChildAlive(*it) && absl::Now() < deadline) usleep(50000);
    if (ChildAlive(*it)) {
      kill(it->pid, SIGKILL);
      waitpid(it->pid, nullptr, 0);
    }
  }
  children_.clear();
  if (outer_ns_ >= 0) {
    setns(outer_ns_, CLONE_NEWNET);
    close(outer_ns_);
    outer_ns_ = -1;
  }
  if (netns_made_) {
    // Deleting the namespaces removes the veth pair with them.
    RunCommand({"ip", "netns", "del", kServerNs}, kCmdLimit);
    RunCommand({"ip", "netns", "del", kClientNs}, kCmdLimit);
  }
  if (work_mounted_) umount2(work_.c_str(), MNT_DETACH);
  if (!work_.empty()) rmdir(work_.c_str());
}

}  // namespace

int RunLab(const CommandLine& cl, SweepConfig config, const std::atomic<bool>* stop) {
  Lab lab(cl, std::move(config), stop);
  return lab.Run();
}

}  // namespace nfs3d::bench
