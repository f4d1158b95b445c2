#include "nfsd/daemon.h"

#include <sys/stat.h>

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "nfsd/mount_program.h"
#include "nfsd/nfs3_program.h"
#include "nfsd/nfs_server.h"
#include "nlm/nfs_file_resolver.h"
#include "nlm/nlm_program.h"
#include "nlm/nsm_program.h"
#include "nlm/status_store.h"
#include "rpc/dispatcher.h"
#include "rpc/portmap_program.h"
#include "rpc/portmap_registry.h"
#include "rpc/rpc_server.h"
#include "rpc/rpcbind_client.h"
#include "vfs/posix_backend.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd {
namespace {

constexpr uint16_t kPortmapPort = 111;

TransferSettings ToTransferSettings(const conf::ServerConfig& config) {
  TransferSettings s;
  const conf::TransferSizes& t = config.tcp_sizes;
  const conf::TransferSizes& u = config.udp_sizes;
  s.tcp = {t.rsize_max, t.rsize_pref, t.wsize_max, t.wsize_pref};
  s.udp = {u.rsize_max, u.rsize_pref, u.wsize_max, u.wsize_pref};
  s.udp_auto = u.rsize_pref_auto;
  s.udp_auto_fragments = config.udp_fragments;
  return s;
}

}  // namespace

struct Daemon::Impl {
  conf::ServerConfig config;
  std::unique_ptr<vfs::PosixBackend> backend;
  std::set<uint32_t> backend_exports;  // export ids already added to the backend
  std::unique_ptr<NfsServer> nfs;
  std::unique_ptr<MountService> mount;
  rpc::Program nfs_program;
  rpc::Program mount_program;
  rpc::PortmapRegistry portmap_registry;
  rpc::Program portmap_program;
  // Lock manager (NLM + NSM on the NFS port) when [nlm] enable; see nlm/.
  std::unique_ptr<nlm::StatusStore> nsm_store;
  std::unique_ptr<nlm::RpcPeerCaller> peer_caller;  // outlives nlm
  std::unique_ptr<nlm::NlmService> nlm;
  std::unique_ptr<nsm::NsmService> nsm;
  rpc::Program nlm_program;
  rpc::Program nsm_program;
  std::unique_ptr<rpc::Dispatcher> dispatcher;
  std::unique_ptr<rpc::RpcServer> server;
  bool registered_with_rpcbind = false;
  bool stopped = false;

  // Adds the roots of exports the backend does not know yet.
  absl::Status AddNewExports(const conf::ExportTable& table) {
    for (const conf::Export& exp : table.exports) {
      if (backend_exports.count(exp.export_id)) continue;
      absl::Status added = backend->AddExport(exp.export_id, exp.path);
      if (!added.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("export ", exp.path, ": ", added.message()));
      }
      backend_exports.insert(exp.export_id);
    }
    return absl::OkStatus();
  }
};

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Daemon::~Daemon() { Stop(); }

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Create(const conf::ServerConfig& config,
                                                      conf::ExportTable exports) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  if (mkdir(config.state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create state directory ", config.state_dir));
  }
  vfs::PosixBackendOptions backend_options;
  backend_options.state_dir = config.state_dir;
  absl::StatusOr<std::unique_ptr<vfs::PosixBackend>> backend =
      vfs::PosixBackend::Create(backend_options);
  if (!backend.ok()) return backend.status();
  impl->backend = std::move(*backend);
  if (absl::Status s = impl->AddNewExports(exports); !s.ok()) return s;
  for (const std::string& warning : exports.warnings) NFS3D_LOG_WARNING("%s", warning);

  auto table = std::make_shared<const conf::ExportTable>(std::move(exports));
  impl->nfs = std::make_unique<NfsServer>(impl->backend.get(), table, ToTransferSettings(config));
  impl->mount = std::make_unique<MountService>(impl->nfs.get());
  impl->nfs_program = Nfs3Program(impl->nfs.get());
  impl->mount_program = MakeMountProgram(impl->mount.get());
  impl->portmap_program = rpc::MakePortmapProgram(&impl->portmap_registry);
  impl->dispatcher = std::make_unique<rpc::Dispatcher>();
  impl->dispatcher->AddProgram(&impl->nfs_program);
  impl->dispatcher->AddProgram(&impl->mount_program);
  if (config.nlm) {
    absl::StatusOr<std::unique_ptr<nlm::StatusStore>> store =
        nlm::StatusStore::Open(config.state_dir);
    if (!store.ok()) return store.status();
    impl->nsm_store = std::move(*store);
    nlm::NlmOptions nlm_options;
    nlm_options.grace_period = absl::Seconds(config.nlm_grace_period);
    nlm_options.limits.max_total = config.nlm_max_locks;
    nlm_options.limits.max_per_host = config.nlm_max_locks_per_client;
    impl->peer_caller = std::make_unique<nlm::RpcPeerCaller>();
    impl->nlm = std::make_unique<nlm::NlmService>(
        nlm_options, nlm::MakeNfsFileResolver(impl->nfs.get()), impl->peer_caller.get(),
        impl->nsm_store.get());
    impl->nsm = std::make_unique<nsm::NsmService>(impl->nlm.get());
    impl->nlm_program = nlm::MakeNlmProgram(impl->nlm.get());
    impl->nsm_program = nsm::MakeNsmProgram(impl->nsm.get());
    impl->dispatcher->AddProgram(&impl->nlm_program);
    impl->dispatcher->AddProgram(&impl->nsm_program);
  }
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

absl::Status Daemon::Start() {
  Impl& d = *impl_;
  const conf::ServerConfig& c = d.config;
  rpc::RpcServerOptions options;
  options.io_threads = c.io_threads;
  options.worker_threads = c.threads;
  options.max_record_size = c.max_record_size;
  options.max_connections = c.max_connections;
  d.server = std::make_unique<rpc::RpcServer>(options, d.dispatcher.get());

  // Binds one service port on every listen address and transport; with port
  // 0 the first bind picks the port and the others reuse it.
  auto listen_all = [&](uint16_t port, uint16_t* bound) -> absl::Status {
    for (const std::string& address : c.listen) {
      if (c.tcp) {
        absl::StatusOr<uint16_t> p = d.server->ListenTcp(address, port);
        if (!p.ok()) return p.status();
        port = *p;
      }
      if (c.udp) {
        absl::StatusOr<uint16_t> p = d.server->ListenUdp(address, port);
        if (!p.ok()) return p.status();
        port = *p;
      }
    }
    *bound = port;
    return absl::OkStatus();
  };
  if (absl::Status s = listen_all(c.port, &ports_.nfs); !s.ok()) return s;
  if (c.mountd_port == c.port && c.port != 0) {
    ports_.mount = ports_.nfs;  // one port serves both programs
  } else if (absl::Status s = listen_all(c.mountd_port, &ports_.mount); !s.ok()) {
    return s;
  }

  // What the portmapper (ours or the system's) must know, on which netids.
  struct Mapping {
    uint32_t prog, vers;
    uint16_t port;
  };
  std::vector<Mapping> mappings = {{nfs3::kProgram, nfs3::kVersion, ports_.nfs},
                                   {mount3::kProgram, mount3::kVersion1, ports_.mount},
                                   {mount3::kProgram, mount3::kVersion3, ports_.mount}};
  if (d.nlm) {  // NLM and NSM share the NFS port
    for (uint32_t vers : {nlm::kVersion1, nlm::kVersion3, nlm::kVersion4}) {
      mappings.push_back({nlm::kProgram, vers, ports_.nfs});
    }
    mappings.push_back({nsm::kProgram, nsm::kVersion, ports_.nfs});
  }
  bool v4 = false, v6 = false;
  for (const std::string& address : c.listen) {
    (address.find(':') != std::string::npos ? v6 : v4) = true;
  }
  std::vector<std::string> netids;
  for (const char* proto : {"tcp", "udp"}) {
    if (std::string_view(proto) == "tcp" ? !c.tcp : !c.udp) continue;
    if (v4) netids.push_back(proto);
    if (v6) netids.push_back(absl::StrCat(proto, "6"));
  }

  bool use_rpcbind = false, own_portmapper = false;
  switch (c.portmapper) {
    case conf::PortmapperMode::kOff: break;
    case conf::PortmapperMode::kOn: own_portmapper = true; break;
    case conf::PortmapperMode::kAuto:
      use_rpcbind = rpc::RpcbindAvailable();
      own_portmapper = !use_rpcbind;
      break;
  }
  if (own_portmapper) {
    d.dispatcher->AddProgram(&d.portmap_program);
    uint16_t port = 0;
    if (absl::Status s = listen_all(kPortmapPort, &port); !s.ok()) {
      return absl::UnavailableError(
          absl::StrCat("cannot serve the portmapper on port 111: ", s.message()));
    }
    for (const std::string& netid : netids) {
      for (uint32_t vers : {2, 3, 4}) {
        d.portmap_registry.AddLocal(rpc::kPortmapProgram, vers, netid, kPortmapPort);
      }
      for (const Mapping& m : mappings) {
        d.portmap_registry.AddLocal(m.prog, m.vers, netid, m.port, "nfs3d");
      }
    }
    ports_.own_portmapper = true;
  }
  d.server->Start();
  if (use_rpcbind) {
    for (const Mapping& m : mappings) {
      for (const std::string& netid : netids) {
        absl::Status s = rpc::RegisterWithRpcbind(m.prog, m.vers, netid, m.port);
        if (!s.ok()) NFS3D_LOG_WARNING("rpcbind registration: %s", s.ToString());
      }
    }
    d.registered_with_rpcbind = true;
    ports_.rpcbind = true;
  }
  if (d.nlm) {
    // Reachable and registered now: tell the clients that held locks before
    // this start to reclaim them, and give them the grace period for it.
    bool grace = !d.nsm_store->previous_hosts().empty() && c.nlm_grace_period > 0;
    d.nlm->Start(grace);
    NFS3D_LOG_INFO("lock manager: NLM v1/v3/v4 and NSM on port %d, NSM state %d%s", ports_.nfs,
                   d.nsm_store->state(), grace ? ", in grace period" : "");
  }
  NFS3D_LOG_INFO("serving NFSv3 on port %d, MOUNT v1/v3 on port %d (%s%s%s); portmapper: %s",
                 ports_.nfs, ports_.mount, c.tcp ? "tcp" : "", c.tcp && c.udp ? "+" : "",
                 c.udp ? "udp" : "",
                 ports_.own_portmapper ? "nfs3d's own on port 111"
                 : ports_.rpcbind      ? "registered with rpcbind"
                                       : "none");
  return absl::OkStatus();
}

absl::Status Daemon::ReloadExports() {
  Impl& d = *impl_;
  absl::StatusOr<conf::ExportTable> table = conf::LoadExports(d.config.exports_path);
  if (!table.ok()) return table.status();
  if (absl::Status s = d.AddNewExports(*table); !s.ok()) return s;
  size_t count = table->exports.size();
  d.nfs->SetExports(std::make_shared<const conf::ExportTable>(std::move(*table)));
  NFS3D_LOG_INFO("reloaded %s: %d exports", d.config.exports_path, count);
  return absl::OkStatus();
}

void Daemon::Stop() {
  Impl& d = *impl_;
  if (d.stopped) return;
  d.stopped = true;
  if (d.registered_with_rpcbind) rpc::UnregisterAll();
  if (d.server) d.server->Stop();
  if (d.nlm) d.nlm->Stop();
}

}  // namespace nfs3d::nfsd
