#include "daemon/exports_command.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "common/durable_files.h"
#include "conf/exports.h"
#include "conf/exports_edit.h"
#include "conf/ini_parser.h"
#include "daemon/check_exports.h"
#include "daemon/pid_file.h"
#include "stats/metrics_server.h"
#include "stats/prom_text.h"

namespace nfs3d::daemon {
namespace {

constexpr char kUsage[] =
    "usage: nfs3d exports [--config FILE] list\n"
    "       nfs3d exports [--config FILE] show PATH\n"
    "       nfs3d exports [--config FILE] add PATH CLIENT(OPTIONS)...\n"
    "       nfs3d exports [--config FILE] remove PATH\n"
    "       nfs3d exports [--config FILE] check [FILE]\n";

// "root@host1 at 2026-12-03T14:00:00Z".
std::string WhoAndWhen() {
  const passwd* pw = getpwuid(getuid());
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(pw ? pw->pw_name : absl::StrCat("uid ", getuid()), "@", host, " at ",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()));
}

std::string ControlSocket(const conf::ServerConfig& config) {
  return stats::ControlSocketTarget(config.state_dir);
}

// The reload counter of the running server ("ok" + "failed"), read from its
// control socket; nullopt when no server answers there.
std::optional<double> Reloads(const conf::ServerConfig& config) {
  absl::StatusOr<std::string> page = stats::HttpGet(ControlSocket(config), "/metrics");
  if (!page.ok()) return std::nullopt;
  absl::StatusOr<std::vector<stats::Sample>> samples = stats::ParsePrometheusText(*page);
  if (!samples.ok()) return std::nullopt;
  double sum = 0;
  for (const stats::Sample& sample : *samples) {
    if (sample.name == "nfs3d_config_reloads_total") sum += sample.value;
  }
  return sum;
}

// Makes the running server put the new file in force and waits until it
// has (or refused it). Returns what to tell the user.
std::string Notify(const conf::ServerConfig& config) {
  if (config.exports_poll > 0) {
    return absl::StrCat("the server follows the file: in force within ", config.exports_poll, " s");
  }
  // Root signals the pid in the state directory: only one nfs3d's user
  // wrote, of an nfs3d of that user (daemon/pid_file.h).
  absl::StatusOr<pid_t> found = ReadServerPid(PidFilePath(config));
  if (absl::IsPermissionDenied(found.status())) {
    return absl::StrCat("nfs3d not signalled: ", found.status().message(),
                        "; run systemctl reload nfs3d");
  }
  const pid_t pid = found.ok() ? *found : 0;
  if (pid <= 0 || kill(pid, 0) != 0) {
    return "no running nfs3d found (" + PidFilePath(config) + "): in force at its next start";
  }
  const std::optional<double> before = Reloads(config);
  if (kill(pid, SIGHUP) != 0) return "could not signal nfs3d: run systemctl reload nfs3d";
  if (!before) return absl::StrCat("sent SIGHUP to nfs3d (pid ", pid, ")");
  for (int i = 0; i < 100; ++i) {
    std::optional<double> now = Reloads(config);
    if (now && *now > *before) return absl::StrCat("in force (nfs3d pid ", pid, " reloaded)");
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::StrCat("sent SIGHUP to nfs3d (pid ", pid, "); it has not reloaded yet");
}

// Replaces the exports file with `text` (atomically, durable on return).
absl::Status WriteExports(const conf::ServerConfig& config, const std::string& text) {
  const std::string& path = config.exports_path;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  absl::StatusOr<std::unique_ptr<DurableFiles>> files = OpenLocalFiles(dir);
  if (!files.ok()) return files.status();
  return (*files)->Write(path.substr(slash + 1), text);
}

int Edit(const conf::ServerConfig& config, const std::string& what,
         const absl::StatusOr<std::string>& edited, std::FILE* out, std::FILE* err) {
  if (!edited.ok()) {
    std::fprintf(err, "nfs3d exports: %s\n", std::string(edited.status().message()).c_str());
    return 1;
  }
  const std::string text = conf::StampChange(*edited, absl::StrCat(WhoAndWhen(), ": ", what));
  if (absl::Status s = WriteExports(config, text); !s.ok()) {
    std::fprintf(err, "nfs3d exports: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::fprintf(out, "%s: %s; %s\n", config.exports_path.c_str(), what.c_str(),
               Notify(config).c_str());
  return 0;
}

// A fleet's exports live in the cluster: `add`/`remove` go to the running
// head's control socket, which edits the shared file and puts it in force;
// the other heads follow it.
int EditShared(const conf::ServerConfig& config, const std::string& command,
               const std::string& argument, std::FILE* out, std::FILE* err) {
  absl::StatusOr<std::string> answer =
      stats::HttpCall(ControlSocket(config), "POST", "/exports/" + command, WhoAndWhen(), argument);
  if (!answer.ok()) {
    std::fprintf(err, "nfs3d exports: %s: %s\n", ControlSocket(config).c_str(),
                 std::string(answer.status().message()).c_str());
    return 1;
  }
  std::fprintf(out, "shared exports: %s %s; %s", command.c_str(), argument.c_str(),
               answer->c_str());
  return 0;
}

// The exports text to list: the local file, or on a fleet the shared file
// in force on the running head.
absl::StatusOr<std::string> ExportsText(const conf::ServerConfig& config) {
  if (config.cluster_shared_exports) return stats::HttpGet(ControlSocket(config), "/exports");
  return conf::ReadConfigFile(config.exports_path);
}

}  // namespace

int RunExportsCommand(const std::vector<std::string>& args, const conf::ServerConfig& config,
                      std::FILE* out, std::FILE* err) {
  if (args.empty()) {
    std::fputs(kUsage, err);
    return 2;
  }
  const std::string& command = args[0];
  if (command == "check") {
    return CheckExports(args.size() > 1 ? args[1] : config.exports_path, config, out);
  }
  if (config.cluster_shared_exports && (command == "add" || command == "remove") &&
      args.size() >= 2) {
    const std::string argument = absl::StrJoin(args.begin() + 1, args.end(), " ");
    if (command == "add" ? args.size() >= 3 : args.size() == 2) {
      return EditShared(config, command, argument, out, err);
    }
  }
  absl::StatusOr<std::string> text = ExportsText(config);
  if (!text.ok() && (command != "add" || config.cluster_shared_exports)) {
    std::fprintf(err, "nfs3d exports: %s\n", std::string(text.status().message()).c_str());
    return 1;
  }
  if (command == "list" || (command == "show" && args.size() == 2)) {
    absl::StatusOr<conf::ExportTable> table = conf::ParseExports(*text, config.exports_path);
    if (!table.ok()) {
      std::fprintf(err, "nfs3d exports: %s\n", std::string(table.status().message()).c_str());
      return 1;
    }
    if (command == "show") {
      const conf::Export* exp = table->FindByPath(args[1]);
      if (!exp) {
        std::fprintf(err, "nfs3d exports: %s is not exported\n", args[1].c_str());
        return 1;
      }
      table->exports = {*exp};
      table->warnings.clear();
    }
    std::fputs(DescribeExportTable(*table).c_str(), out);
    return 0;
  }
  if (command == "add" && args.size() >= 3) {
    const std::string line = absl::StrJoin(args.begin() + 1, args.end(), " ");
    return Edit(config, absl::StrCat("add ", line),
                conf::AddExportLine(text.ok() ? *text : "", line), out, err);
  }
  if (command == "remove" && args.size() == 2) {
    return Edit(config, absl::StrCat("remove ", args[1]), conf::RemoveExportLine(*text, args[1]),
                out, err);
  }
  std::fputs(kUsage, err);
  return 2;
}

}  // namespace nfs3d::daemon
