// nfs3d: a userspace NFSv3 server. Reads the configuration, builds the
// server, then waits for signals: SIGHUP reloads the exports, SIGTERM/SIGINT
// stop it cleanly (unregistering from rpcbind).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

#include "common/command_line.h"
#include "common/log.h"
#include "common/version.h"
#include "conf/exports.h"
#include "conf/server_config.h"
#include "daemon/backend_plugins.h"
#include "daemon/check_exports.h"
#include "daemon/daemon.h"
#include "daemon/exports_command.h"
#include "daemon/pid_file.h"
#include "daemon/privileges.h"
#include "daemon/start_signal_watch.h"
#include "vfs/state_dir.h"

namespace nfs3d {
namespace {

constexpr char kDefaultConfigPath[] = "/etc/nfs3d/nfs3d.conf";

// The command line; empty strings mean "as the config file says".
struct Flags {
  std::string config = kDefaultConfigPath;
  std::string exports;
  std::string export_dir;
  std::string state_dir;
  std::string log_level;
  std::string check_exports;  // print how this exports file is read, then exit
  int shutdown_timeout = 30;
  bool foreground = false;
  bool takeover = false;
  bool help = false;
  bool version = false;
};
Flags flags;

// Every option, in the order --help lists them (nfs3d(8) includes --help).
const cli::Option kOptions[] = {
    {"config", 0, "FILE", "configuration (default /etc/nfs3d/nfs3d.conf)",
     cli::Store(&flags.config)},
    {"exports", 0, "FILE", "exports file, instead of [paths] exports", cli::Store(&flags.exports)},
    {"export", 0, "DIR", "quick start: export DIR read-write to all",
     cli::Store(&flags.export_dir)},
    {"state-dir", 0, "DIR", "state directory, instead of [paths] state_dir",
     cli::Store(&flags.state_dir)},
    {"foreground", 0, "", "stay in the foreground, log to stderr", cli::SetTrue(&flags.foreground)},
    {"takeover", 0, "", "take over from the nfs3d running on the same state directory",
     cli::SetTrue(&flags.takeover)},
    {"log-level", 0, "LEVEL", "debug|info|warning|error, not [log] level",
     [](absl::string_view value) {
       std::string text(value);
       log::Level level;
       if (!log::ParseLevel(text == "warn" ? "warning" : text, &level)) {
         return absl::InvalidArgumentError(
             absl::StrCat("'", text, "' is not debug, info, warning or error"));
       }
       flags.log_level = text;
       return absl::OkStatus();
     }},
    {"shutdown-timeout", 0, "SECONDS", "on SIGTERM, exit after this long anyway (30)",
     cli::StoreInt(&flags.shutdown_timeout, 1, 3600)},
    {"check-exports", 0, "FILE", "print how each exports line is read, then exit",
     cli::Store(&flags.check_exports)},
    {"version", 0, "", "print the version and build options", cli::SetTrue(&flags.version)},
    {"help", 'h', "", "print this help", cli::SetTrue(&flags.help)},
};

constexpr char kSynopsis[] =
    "nfs3d [options]\n"
    "       nfs3d stat [nfs3stat options]   (statistics: see nfs3stat(8))\n"
    "       nfs3d top [nfs3top options]     (live view: see nfs3top(8))\n"
    "       nfs3d exports list|show|add|remove|check ...   (exports at run time)\n"
    "A userspace NFSv3 server; see nfs3d(8), nfs3d.conf(5), nfs3d-exports(5).";

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// With no exports file at all, nfs3d exports <state_dir>/export to this host
// only. Root on localhost already owns the machine, so root is not squashed.
absl::StatusOr<conf::ExportTable> EmbeddedDefaultExports(const std::string& state_dir) {
  std::string dir = absl::StrCat(state_dir, "/export");
  mkdir(state_dir.c_str(), 0700);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create ", dir));
  }
  return conf::ParseExports(absl::StrCat("\"", dir,
                                         "\" 127.0.0.1(rw,insecure,no_root_squash) "
                                         "::1(rw,insecure,no_root_squash)\n"),
                            "<embedded default exports>");
}

absl::StatusOr<conf::ServerConfig> LoadConfig() {
  std::string path = flags.config;
  absl::StatusOr<conf::ServerConfig> config = (path == kDefaultConfigPath && !FileExists(path))
                                                  ? conf::DefaultServerConfig()
                                                  : conf::LoadServerConfig(path);
  if (!config.ok()) return config.status();
  if (!flags.state_dir.empty()) config->state_dir = flags.state_dir;
  if (!flags.exports.empty()) config->exports_path = flags.exports;
  if (std::string level = flags.log_level; !level.empty()) {
    if (level == "warn") level = "warning";
    if (!log::ParseLevel(level, &config->log_level)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--log-level: '", level, "' is not debug, info, warning or error"));
    }
  }
  return config;
}

absl::StatusOr<conf::ExportTable> LoadExportTable(const conf::ServerConfig& config) {
  if (!flags.export_dir.empty()) return conf::MakeQuickExport(flags.export_dir);
  // The daemon reads them from the cluster (seeded from the local file).
  if (config.cluster_shared_exports) return conf::ExportTable();
  bool explicit_file = !flags.exports.empty();
  if (!explicit_file && !FileExists(config.exports_path)) {
    NFS3D_LOG_INFO("no exports file %s: using the embedded default", config.exports_path);
    return EmbeddedDefaultExports(config.state_dir);
  }
  return conf::LoadExports(config.exports_path);
}

// With --takeover and without --foreground, the parent waits for the
// daemon to serve (or fail) and exits 0 (or 1): what systemctl reload
// reports. The daemon writes one byte on this pipe when it knows.
int started_pipe = -1;

void ReportStarted(bool ok) {
  if (started_pipe < 0) return;
  const char byte = ok ? 1 : 0;
  (void)!write(started_pipe, &byte, 1);
  close(started_pipe);
  started_pipe = -1;
}

// Detaches from the terminal: fork, new session, stdio to /dev/null.
void Daemonize(bool wait_for_start) {
  int fds[2] = {-1, -1};
  if (wait_for_start && pipe2(fds, O_CLOEXEC) != 0) wait_for_start = false;
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid > 0) {
    if (!wait_for_start) std::_Exit(0);
    close(fds[1]);
    char byte = 0;
    ssize_t n;
    do {
      n = read(fds[0], &byte, 1);
    } while (n < 0 && errno == EINTR);
    std::_Exit(n == 1 && byte == 1 ? 0 : 1);
  }
  if (wait_for_start) {
    close(fds[0]);
    started_pipe = fds[1];
  }
  setsid();
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    if (null > STDERR_FILENO) close(null);
  }
}

// Every TCP connection is a descriptor, and so is every file the backend
// keeps open: the soft limit (often 1024) is raised as far as the hard one
// allows (LimitNOFILE=65536 in the unit), and a limit that leaves less room
// than max_connections is named in the log rather than found by a client.
void RaiseFileLimit(const conf::ServerConfig& config) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur != rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  constexpr rlim_t kReserve = 4096;  // listeners, the backend's caches, files
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < config.max_connections + kReserve) {
    NFS3D_LOG_WARNING(
        "RLIMIT_NOFILE is %llu: fewer than max_connections (%d) + %llu; raise LimitNOFILE",
        static_cast<unsigned long long>(rl.rlim_cur), config.max_connections,
        static_cast<unsigned long long>(kReserve));
  }
}

// Answers the signals until one ends the process: SIGHUP reloads, SIGUSR1
// (a successor took over) exits at once, SIGTERM/SIGINT stop cleanly.
int ServeUntilSignalled(daemon::Daemon& server, const sigset_t& signals,
                        const std::string& pid_file) {
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGUSR1) {
      // The successor serves the sockets, the pid file and the state
      // directory's sockets now: nothing of them is removed here.
      NFS3D_LOG_INFO("handed over to a successor; nfs3d %d exits", getpid());
      std::fflush(stderr);
      std::_Exit(0);
    }
    if (sig == SIGHUP) {
      // Re-read the config file (transfer sizes, log level) and, unless the
      // export came from --export, the exports file it names.
      NFS3D_LOG_INFO("SIGHUP: reloading the configuration");
      absl::StatusOr<conf::ServerConfig> fresh = LoadConfig();
      absl::Status reloaded =
          fresh.ok() ? server.Reload(*fresh, flags.export_dir.empty()) : fresh.status();
      if (!reloaded.ok()) {
        if (!fresh.ok()) server.CountFailedReload();
        NFS3D_LOG_ERROR("reload failed, keeping the old configuration and exports: %s",
                        reloaded.message());
      }
      continue;
    }
    NFS3D_LOG_INFO("signal %d (%s): shutting down", sig, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    // Bounded: a call stuck in the file system must not keep nfs3d alive.
    const int timeout = flags.shutdown_timeout;
    std::thread watchdog([timeout] {
      sleep(static_cast<unsigned>(timeout > 0 ? timeout : 1));
      NFS3D_LOG_ERROR("shutdown did not finish in %d s; exiting anyway", timeout);
      std::_Exit(1);
    });
    watchdog.detach();
    server.Stop();
    unlink(pid_file.c_str());
    NFS3D_LOG_INFO("nfs3d stopped");
    return 0;
  }
}

int Run() {
  // Debian's abseil is built without NDEBUG, so every Mutex::Lock would feed
  // a global lock-order graph (GraphCycles under one spinlock: seen in perf of
  // metadata calls). The unit tests keep the check; the server does not.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::StatusOr<conf::ServerConfig> config = LoadConfig();
  if (!config.ok()) {
    std::fprintf(stderr, "nfs3d: %s\n", std::string(config.status().message()).c_str());
    return 1;
  }
  log::SetLevel(config->log_level);
  daemon::UsePluginDir(config->plugin_dir);
  if (config->syslog) log::UseSyslog(true);
  if (!flags.export_dir.empty()) config->exports_poll = 0;  // no file to follow
  // Before anything is made or read there: the pid file, the sockets and the
  // handover's predecessor are trusted for being in it.
  if (absl::Status safe = vfs::EnsurePrivateStateDir(config->state_dir); !safe.ok()) {
    NFS3D_LOG_ERROR("%s", safe.message());
    return 1;
  }
  absl::StatusOr<conf::ExportTable> exports = LoadExportTable(*config);
  if (!exports.ok()) {
    std::fprintf(stderr, "nfs3d: %s\n", std::string(exports.status().message()).c_str());
    return 1;
  }
  NFS3D_LOG_INFO("nfs3d %s starting: %s", kVersion, conf::Describe(*config));
  RaiseFileLimit(*config);
  for (const conf::Export& exp : exports->exports) {
    std::vector<std::string> clients;
    for (const conf::ExportClient& c : exp.clients) clients.push_back(c.spec);
    NFS3D_LOG_INFO("export %s to %s", exp.path, absl::StrJoin(clients, " "));
  }
  // Before the first thread starts: every thread inherits the reduced set.
  if (absl::Status dropped = daemon::DropPrivileges(*config); !dropped.ok()) {
    NFS3D_LOG_ERROR("%s", dropped.message());
    ReportStarted(false);
    return 1;
  }

  // Signals are handled synchronously by this thread; every thread the
  // server starts inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // For `nfs3d exports`, which signals the server after changing its exports.
  const std::string pid_file = daemon::PidFilePath(*config);
  auto write_pid_file = [&pid_file] {
    if (absl::Status s = daemon::WritePidFile(pid_file); !s.ok()) {
      NFS3D_LOG_WARNING("pid file: %s; nfs3d exports cannot signal this process", s.message());
    }
  };
  absl::StatusOr<std::unique_ptr<daemon::Daemon>> server;
  absl::Status started;
  {
    // Until it serves, a stop signal ends nfs3d at once (start_signal_watch.h).
    // Not during a takeover's handover, which the predecessor must see through.
    sigset_t stop;
    sigemptyset(&stop);
    for (int sig : {SIGTERM, SIGINT}) sigaddset(&stop, sig);
    daemon::StartSignalWatch watch(stop, [] { ReportStarted(false); });
    server = daemon::Daemon::Create(*config, std::move(*exports), flags.takeover);
    if (server.ok()) {
      // A successor took over: SIGUSR1 to the main thread, which then exits.
      (*server)->OnHandedOver([] { kill(getpid(), SIGUSR1); });
      if (!flags.takeover) {
        // Written before the server answers, so that a command run as soon
        // as it answers finds it (a SIGHUP until then waits, blocked, for
        // sigwait below); but while it names another nfs3d that runs, only
        // once this one has started (a second start with the same
        // configuration fails on its ports and must not take the file).
        const bool early = !daemon::ReadServerPid(pid_file).ok();
        if (early) write_pid_file();
        started = (*server)->Start();
        if (started.ok() && !early) write_pid_file();
        if (!started.ok() && early) unlink(pid_file.c_str());
      }
    }
  }
  if (!server.ok()) {
    NFS3D_LOG_ERROR("%s", server.status().message());
    ReportStarted(false);
    return 1;
  }
  if (flags.takeover) {
    // The predecessor's pid stays in the file until this process serves.
    started = (*server)->TakeOver();
    if (started.ok()) write_pid_file();
  }
  ReportStarted(started.ok());
  if (!started.ok()) {
    NFS3D_LOG_ERROR("%s%s", flags.takeover ? "takeover failed: " : "", started.message());
    return 1;
  }
  return ServeUntilSignalled(**server, signals, pid_file);
}

// `nfs3d stat ARGS` runs nfs3stat ARGS (and `nfs3d top` nfs3top): the one
// installed next to nfs3d, the one in the build tree, or the first on PATH.
[[noreturn]] void ExecTool(const std::string& tool, int argc, char** argv) {
  std::vector<std::string> candidates;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir.resize(dir.rfind('/'));
    candidates.push_back(dir + "/" + tool);
    candidates.push_back(dir + "/../tools/" + tool + "/" + tool);
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>(tool.c_str()));
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  for (const std::string& path : candidates) {
    if (access(path.c_str(), X_OK) == 0) execv(path.c_str(), args.data());
  }
  execvp(tool.c_str(), args.data());
  std::perror(("nfs3d: cannot run " + tool).c_str());
  std::exit(2);
}

// `nfs3d exports SUBCOMMAND [--config FILE] ARGS` (daemon/exports_command.h).
int ExportsCommand(int argc, char** argv) {
  absl::StatusOr<std::vector<std::string>> args = cli::Parse(argc - 1, argv + 1, kOptions);
  absl::StatusOr<conf::ServerConfig> config =
      args.ok() ? LoadConfig() : absl::StatusOr<conf::ServerConfig>(args.status());
  if (!config.ok()) {
    std::fprintf(stderr, "nfs3d exports: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  return daemon::RunExportsCommand(*args, *config, stdout, stderr);
}

}  // namespace
}  // namespace nfs3d

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "stat") nfs3d::ExecTool("nfs3stat", argc, argv);
  if (argc > 1 && std::string_view(argv[1]) == "top") nfs3d::ExecTool("nfs3top", argc, argv);
  if (argc > 1 && std::string_view(argv[1]) == "exports") return nfs3d::ExportsCommand(argc, argv);
  absl::StatusOr<std::vector<std::string>> rest = nfs3d::cli::Parse(argc, argv, nfs3d::kOptions);
  if (rest.ok() && !rest->empty()) {
    rest = absl::InvalidArgumentError(absl::StrCat("unexpected argument '", rest->front(), "'"));
  }
  if (!rest.ok()) {
    std::fprintf(stderr, "nfs3d: %s (nfs3d --help lists the options)\n",
                 std::string(rest.status().message()).c_str());
    return 2;
  }
  if (nfs3d::flags.help) {
    std::fputs(nfs3d::cli::Usage(nfs3d::kSynopsis, nfs3d::kOptions).c_str(), stdout);
    return 0;
  }
  if (nfs3d::flags.version) {
    std::fputs(nfs3d::VersionText("nfs3d").c_str(), stdout);
    return 0;
  }
  if (!nfs3d::flags.check_exports.empty()) {
    // The plugins the exports need are looked for where the configuration
    // says, and xprtsec= is checked against its [tls].
    auto config = nfs3d::LoadConfig();
    if (config.ok()) nfs3d::daemon::UsePluginDir(config->plugin_dir);
    return nfs3d::daemon::CheckExports(nfs3d::flags.check_exports,
                                       config.ok() ? *config : nfs3d::conf::DefaultServerConfig(),
                                       stdout);
  }
  // Every file and socket nfs3d makes has an explicit mode; this umask only
  // keeps an oversight from making one writable by others. Clients' modes
  // are applied exactly all the same (vfs/posix/thread_credentials.h).
  umask(022);
  if (!nfs3d::flags.foreground) {
    nfs3d::Daemonize(nfs3d::flags.takeover);
    nfs3d::log::UseSyslog(true);
  }
  return nfs3d::Run();
}
