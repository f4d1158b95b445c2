// nfs3d: a userspace NFSv3 server. Reads the configuration, builds the
// server, then waits for signals: SIGHUP reloads the exports, SIGTERM/SIGINT
// stop it cleanly (unregistering from rpcbind).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "conf/exports.h"
#include "conf/server_config.h"
#include "nfsd/check_exports.h"
#include "nfsd/daemon.h"

ABSL_FLAG(std::string, config, "/etc/nfs3d/nfs3d.conf",
          "Server configuration file (INI, see conf/nfs3d.conf). When this default path does not "
          "exist, built-in defaults are used.");
ABSL_FLAG(std::string, exports, "",
          "Exports file in exports(5) syntax; overrides [paths] exports of the config.");
ABSL_FLAG(std::string, export, "",
          "Quick start: export this one directory read-write to everyone (insecure, root_squash) "
          "instead of reading an exports file.");
ABSL_FLAG(std::string, state_dir, "",
          "State directory (file handle key); overrides [paths] state_dir of the config.");
ABSL_FLAG(bool, foreground, false, "Stay in the foreground and log to stderr.");
ABSL_FLAG(bool, version, false, "Print the version and exit.");
ABSL_FLAG(std::string, log_level, "",
          "Log level (debug, info, warning, error); overrides [log] level of the config.");
ABSL_FLAG(std::string, check_exports, "",
          "Print how nfs3d reads this exports file (like exportfs -v) and exit: 0 if valid.");
ABSL_FLAG(int, shutdown_timeout, 30,
          "Seconds SIGTERM/SIGINT waits for running calls and the final sync before nfs3d "
          "exits anyway (with status 1).");

namespace nfs3d {
namespace {

constexpr char kVersion[] = "0.1.0";
constexpr char kDefaultConfigPath[] = "/etc/nfs3d/nfs3d.conf";

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
  return conf::ParseExports(absl::StrCat("\"", dir, "\" 127.0.0.1(rw,insecure,no_root_squash) "
                                         "::1(rw,insecure,no_root_squash)\n"),
                            "<embedded default exports>");
}

absl::StatusOr<conf::ServerConfig> LoadConfig() {
  std::string path = absl::GetFlag(FLAGS_config);
  absl::StatusOr<conf::ServerConfig> config =
      (path == kDefaultConfigPath && !FileExists(path)) ? conf::DefaultServerConfig()
                                                        : conf::LoadServerConfig(path);
  if (!config.ok()) return config.status();
  if (!absl::GetFlag(FLAGS_state_dir).empty()) config->state_dir = absl::GetFlag(FLAGS_state_dir);
  if (!absl::GetFlag(FLAGS_exports).empty()) config->exports_path = absl::GetFlag(FLAGS_exports);
  if (std::string level = absl::GetFlag(FLAGS_log_level); !level.empty()) {
    if (level == "warn") level = "warning";
    if (!log::ParseLevel(level, &config->log_level)) {
      return absl::InvalidArgumentError(absl::StrCat("--log_level: '", level,
                                                     "' is not debug, info, warning or error"));
    }
  }
  return config;
}

absl::StatusOr<conf::ExportTable> LoadExportTable(const conf::ServerConfig& config) {
  if (!absl::GetFlag(FLAGS_export).empty()) return conf::MakeQuickExport(absl::GetFlag(FLAGS_export));
  bool explicit_file = !absl::GetFlag(FLAGS_exports).empty();
  if (!explicit_file && !FileExists(config.exports_path)) {
    NFS3D_LOG_INFO("no exports file %s: using the embedded default", config.exports_path);
    return EmbeddedDefaultExports(config.state_dir);
  }
  return conf::LoadExports(config.exports_path);
}

// Detaches from the terminal: fork, new session, stdio to /dev/null.
void Daemonize() {
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid > 0) std::_Exit(0);
  setsid();
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    if (null > STDERR_FILENO) close(null);
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
  if (config->syslog) log::UseSyslog(true);
  absl::StatusOr<conf::ExportTable> exports = LoadExportTable(*config);
  if (!exports.ok()) {
    std::fprintf(stderr, "nfs3d: %s\n", std::string(exports.status().message()).c_str());
    return 1;
  }
  NFS3D_LOG_INFO("nfs3d %s starting: %s", kVersion, conf::Describe(*config));
  for (const conf::Export& exp : exports->exports) {
    std::vector<std::string> clients;
    for (const conf::ExportClient& c : exp.clients) clients.push_back(c.spec);
    NFS3D_LOG_INFO("export %s to %s", exp.path, absl::StrJoin(clients, " "));
  }

  // Signals are handled synchronously by this thread; every thread the
  // server starts inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<nfsd::Daemon>> daemon =
      nfsd::Daemon::Create(*config, std::move(*exports));
  if (!daemon.ok()) {
    NFS3D_LOG_ERROR("%s", daemon.status().message());
    return 1;
  }
  if (absl::Status started = (*daemon)->Start(); !started.ok()) {
    NFS3D_LOG_ERROR("%s", started.message());
    return 1;
  }
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      // Re-read the config file (transfer sizes, log level) and, unless the
      // export came from --export, the exports file it names.
      NFS3D_LOG_INFO("SIGHUP: reloading the configuration");
      absl::StatusOr<conf::ServerConfig> fresh = LoadConfig();
      absl::Status reloaded =
          fresh.ok() ? (*daemon)->Reload(*fresh, absl::GetFlag(FLAGS_export).empty())
                     : fresh.status();
      if (!reloaded.ok()) {
        if (!fresh.ok()) (*daemon)->CountFailedReload();
        NFS3D_LOG_ERROR("reload failed, keeping the old configuration and exports: %s",
                        reloaded.message());
      }
      continue;
    }
    NFS3D_LOG_INFO("signal %d (%s): shutting down", sig, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    // Bounded: a call stuck in the file system must not keep nfs3d alive.
    const int timeout = absl::GetFlag(FLAGS_shutdown_timeout);
    std::thread watchdog([timeout] {
      sleep(static_cast<unsigned>(timeout > 0 ? timeout : 1));
      NFS3D_LOG_ERROR("shutdown did not finish in %d s; exiting anyway", timeout);
      std::_Exit(1);
    });
    watchdog.detach();
    (*daemon)->Stop();
    NFS3D_LOG_INFO("nfs3d stopped");
    return 0;
  }
}

// abseil spells multi-word flags with '_'; nfs3d documents them with '-'
// (--state-dir) like other daemons. Accept both by rewriting the flag name.
void NormalizeFlagNames(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* arg = argv[i];
    if (arg[0] != '-' || arg[1] != '-') continue;
    if (arg[2] == '\0') break;  // "--" ends the flags
    for (char* p = arg + 2; *p != '\0' && *p != '='; ++p) {
      if (*p == '-') *p = '_';
    }
  }
}

// `nfs3d stat ARGS` runs nfs3stat ARGS: the one installed next to nfs3d,
// the one in the build tree, or the first on PATH.
[[noreturn]] void ExecStat(int argc, char** argv) {
  std::vector<std::string> candidates;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir.resize(dir.rfind('/'));
    candidates.push_back(dir + "/nfs3stat");
    candidates.push_back(dir + "/../tools/nfs3stat/nfs3stat");
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>("nfs3stat"));
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  for (const std::string& path : candidates) {
    if (access(path.c_str(), X_OK) == 0) execv(path.c_str(), args.data());
  }
  execvp("nfs3stat", args.data());
  std::perror("nfs3d stat: cannot run nfs3stat");
  std::exit(2);
}

}  // namespace
}  // namespace nfs3d

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "stat") nfs3d::ExecStat(argc, argv);
  nfs3d::NormalizeFlagNames(argc, argv);
  absl::SetProgramUsageMessage(
      "a userspace NFSv3 server.\n"
      "  nfs3d [--config FILE] [--exports FILE | --export DIR] [--state-dir DIR] [--foreground]\n"
      "        [--log-level LEVEL] [--shutdown-timeout SECONDS]\n"
      "  nfs3d --check-exports FILE   print how each exports line is understood\n"
      "  nfs3d stat [-i SECONDS] [--server TARGET]   statistics of a running server (runs nfs3stat,\n"
      "        see docs/operations.md)");
  absl::FlagsUsageConfig usage;
  usage.version_string = [] { return std::string("nfs3d ") + nfs3d::kVersion + "\n"; };
  // --help lists the flags defined in this file (absl's default looks for a
  // file named after the binary).
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "nfsd/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_version)) {
    std::printf("nfs3d %s\n", nfs3d::kVersion);
    return 0;
  }
  if (std::string file = absl::GetFlag(FLAGS_check_exports); !file.empty()) {
    return nfs3d::nfsd::CheckExports(file, stdout);
  }
  if (!absl::GetFlag(FLAGS_foreground)) {
    nfs3d::Daemonize();
    nfs3d::log::UseSyslog(true);
  }
  return nfs3d::Run();
}
