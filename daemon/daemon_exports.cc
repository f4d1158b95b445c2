// Where the exports come from and how a new table is put in force: the local
// exports file or, on a cluster with [cluster] shared_exports, one file in
// CephFS that every head follows; SIGHUP, the follower and `nfs3d exports`
// all end in ApplyExportTable. On a cluster, `nfs3d exports add|remove`
// edits the shared file through a running head's control socket
// (AnswerExportsCall).
#include <unistd.h>

#include "absl/strings/escaping.h"

#include "conf/exports_edit.h"
#include "conf/ini_parser.h"
#include "daemon/daemon_impl.h"
#include "daemon/daemon_settings.h"

namespace nfs3d::daemon {
namespace {

constexpr char kSharedExportsName[] = "exports";

// A control call's body as it may go into a log line or the exports file's
// change stamp: control characters (a newline would forge a line) escaped,
// at most 256 bytes of it.
std::string Loggable(absl::string_view text) {
  constexpr size_t kLimit = 256;
  return absl::StrCat(absl::CHexEscape(text.substr(0, kLimit)), text.size() > kLimit ? "..." : "");
}

}  // namespace

std::string Daemon::Impl::ExportsSource(const conf::ServerConfig& c) const {
  if (c.cluster_shared_exports && cluster_files) {
    return absl::StrCat(cluster_files->where(), "/", kSharedExportsName);
  }
  return c.exports_path;
}

absl::StatusOr<std::string> Daemon::Impl::ReadExportsText(const conf::ServerConfig& c) {
  if (c.cluster_shared_exports) {
    if (!cluster_files) return absl::FailedPreconditionError("the cluster's files are not open");
    absl::StatusOr<std::optional<std::string>> text = cluster_files->Read(kSharedExportsName);
    if (!text.ok()) return text.status();
    if (!*text) return absl::NotFoundError(absl::StrCat("no ", ExportsSource(c)));
    return **text;
  }
  return conf::ReadConfigFile(c.exports_path);
}

absl::StatusOr<std::string> Daemon::Impl::LoadSharedExportsText() {
  if (config.cluster_node_id.empty()) {
    return absl::InvalidArgumentError("[cluster] shared_exports needs [cluster] node_id");
  }
  if (absl::Status s = ConnectCeph(); !s.ok()) return s;
  if (absl::Status s = OpenClusterFiles(); !s.ok()) return s;
  absl::StatusOr<std::string> text = ReadExportsText(config);
  if (text.ok() || !absl::IsNotFound(text.status())) return text;
  // The first head of a new cluster: the shared file starts as its local
  // file (or empty), and from then on every head follows the shared one.
  absl::StatusOr<std::string> seed = conf::ReadConfigFile(config.exports_path);
  std::string contents = seed.ok() ? *seed : "";
  if (absl::Status s = cluster_files->Write(kSharedExportsName, contents); !s.ok()) return s;
  NFS3D_LOG_INFO("shared exports %s created from %s", ExportsSource(config),
                 seed.ok() ? config.exports_path : "nothing (no local exports file)");
  return contents;
}

absl::Status Daemon::Impl::ApplyExportTable(conf::ExportTable table, const std::string& source,
                                            const std::string& text) {
  if (absl::Status s = AddNewExports(table); !s.ok()) return s;
  for (const std::string& warning : table.warnings) NFS3D_LOG_WARNING("%s", warning);
  // At start this refuses to run; a reload keeps the table (the export is
  // then reachable by no connection that its xprtsec= admits) and says so.
  if (std::string problem = TlsConfigProblem(table, config); !problem.empty()) {
    NFS3D_LOG_WARNING("%s: the export refuses every call until [tls] is set", problem);
  }
  const size_t count = table.exports.size();
  nfs->SetExports(std::make_shared<const conf::ExportTable>(std::move(table)));
  export_count = count;
  exports_text = text;
  if (follower) follower->Saw(text);
  const std::string change = conf::ChangeOf(text);
  NFS3D_LOG_INFO("exports from %s: %d in force%s%s", source, count,
                 change.empty() ? "" : "; last change: ", change);
  return absl::OkStatus();
}

absl::Status Daemon::ApplyExports(const std::string& text, const std::string& source) {
  Impl& d = *impl_;
  absl::MutexLock lock(&d.reload_mu);
  if (text == d.exports_text) return absl::OkStatus();
  absl::StatusOr<conf::ExportTable> table = conf::ParseExports(text, source);
  absl::Status s =
      table.ok() ? d.ApplyExportTable(std::move(*table), source, text) : table.status();
  if (!s.ok()) {
    ++d.reloads_failed;
    NFS3D_LOG_ERROR("exports from %s refused, keeping the exports in force: %s", source,
                    s.message());
    return s;
  }
  ++d.reloads_ok;
  return absl::OkStatus();
}

absl::StatusOr<std::string> Daemon::EditSharedExports(std::string_view command,
                                                      const std::string& argument,
                                                      std::string_view who) {
  Impl& d = *impl_;
  conf::ServerConfig c;
  {
    absl::MutexLock lock(&d.reload_mu);
    c = d.config;
  }
  if (!c.cluster_shared_exports || !d.cluster_files) {
    return absl::FailedPreconditionError(
        "this head reads a local exports file: edit it with nfs3d exports on this machine");
  }
  // The file as it is now (another head may have changed it since this one
  // last looked), not the text in force here.
  absl::StatusOr<std::string> text = d.ReadExportsText(c);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::string> edited = command == "add" ? conf::AddExportLine(*text, argument)
                                                        : conf::RemoveExportLine(*text, argument);
  if (!edited.ok()) return edited.status();
  const std::string change =
      absl::StrCat(std::string(who), ": ", std::string(command), " ", Loggable(argument));
  const std::string stamped = conf::StampChange(*edited, change);
  if (absl::Status s = d.cluster_files->Write(kSharedExportsName, stamped); !s.ok()) return s;
  if (absl::Status s = ApplyExports(stamped, d.ExportsSource(c)); !s.ok()) return s;
  return absl::StrCat("in force on this head; the other heads follow within ",
                      c.cluster_exports_poll, " s");
}

stats::MetricsServer::ControlAnswer Daemon::AnswerExportsCall(std::string_view method,
                                                              std::string_view target,
                                                              std::string_view who,
                                                              const std::string& body) {
  if (method == "GET" && target == "/exports") {
    absl::MutexLock lock(&impl_->reload_mu);
    return {200, impl_->exports_text};
  }
  if (method == "POST" && (target == "/exports/add" || target == "/exports/remove")) {
    const std::string_view command = target.substr(target.rfind('/') + 1);
    // `who` comes from the kernel (SO_PEERCRED), already escaped.
    const std::string caller =
        who.empty() ? std::string("someone on the control socket") : std::string(who);
    absl::StatusOr<std::string> done = EditSharedExports(command, body, caller);
    if (done.ok()) return {200, *done + "\n"};
    NFS3D_LOG_WARNING("exports %s %s by %s refused: %s", command, Loggable(body), caller,
                      Loggable(done.status().message()));
    const int status = absl::IsFailedPrecondition(done.status()) ? 409
                       : absl::IsNotFound(done.status())         ? 404
                       : absl::IsInvalidArgument(done.status())  ? 400
                                                                 : 503;
    return {status, std::string(done.status().message()) + "\n"};
  }
  return {404, "no such control call\n"};
}

void Daemon::StartFollowingExports() {
  Impl& d = *impl_;
  const conf::ServerConfig& c = d.config;
  const uint32_t period = c.cluster_shared_exports ? c.cluster_exports_poll : c.exports_poll;
  if (period == 0) return;
  // --export DIR and the embedded default have no file to follow.
  if (!c.cluster_shared_exports && access(c.exports_path.c_str(), R_OK) != 0) return;
  std::string seen;
  {
    absl::MutexLock lock(&d.reload_mu);
    seen = d.exports_text;
  }
  const std::string source = d.ExportsSource(c);
  d.follower = std::make_unique<ExportsFollower>(
      source, absl::Seconds(period),
      [&d] {
        conf::ServerConfig c;
        {
          absl::MutexLock lock(&d.reload_mu);
          c = d.config;
        }
        return d.ReadExportsText(c);
      },
      [this, source](const std::string& text) { (void)ApplyExports(text, source); },
      std::move(seen));
  NFS3D_LOG_INFO("following the exports in %s (every %d s)", source, period);
}

}  // namespace nfs3d::daemon
