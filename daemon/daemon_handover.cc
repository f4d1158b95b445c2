// Both sides of a handover as the daemon sees them (daemon/handover.h): the
// predecessor pauses, passes its sockets and, once the successor is ready,
// stops and passes its state; the successor adopts the sockets and state.
#include "daemon/daemon_impl.h"

namespace nfs3d::daemon {

void Daemon::OnHandedOver(std::function<void()> done) { impl_->handed_over = std::move(done); }

void Daemon::StartHandoverServer() {
  Impl& d = *impl_;
  std::optional<OwnedFd> socket = d.inherited.Take(handover::SocketRole::kHandover);
  d.inherited = InheritedSockets();  // what the configuration no longer listens on: closed
  if (!socket) {
    absl::StatusOr<OwnedFd> fresh = ListenUnixStream(HandoverSocketPath(d.config.state_dir));
    if (!fresh.ok()) {
      NFS3D_LOG_WARNING("handover socket: %s; nfs3d --takeover cannot replace this process",
                        fresh.status().message());
      return;
    }
    socket = std::move(*fresh);
  }
  PredecessorHooks hooks;
  hooks.pause = [&d](std::vector<int>* fds) { return d.PauseForHandover(fds); };
  hooks.resume = [&d] { d.server->ResumeListeners(); };
  hooks.finish = [&d] { return d.FinishForHandover(); };
  hooks.handed_over = [&d] {
    if (d.handed_over) d.handed_over();
  };
  d.handover = std::make_unique<HandoverServer>(std::move(*socket), std::move(hooks));
}

handover::Sockets Daemon::Impl::PauseForHandover(std::vector<int>* fds) {
  server->PauseListeners();
  handover::Sockets sockets;
  sockets.write_verifier = backend->WriteVerifierValue();
  auto add = [&](handover::SocketRole role, bool stream, int fd) {
    sockets.sockets.push_back({role, stream, static_cast<uint32_t>(fds->size())});
    fds->push_back(fd);
  };
  for (const rpc::RpcServer::ListenerSocket& l : server->ListenerSockets()) {
    add(handover::SocketRole::kRpc, l.tcp, l.fd);
  }
  if (metrics) {
    for (int fd : metrics->TcpListenerFds()) add(handover::SocketRole::kMetrics, true, fd);
    for (int fd : metrics->UnixListenerFds()) add(handover::SocketRole::kControl, true, fd);
  }
  add(handover::SocketRole::kHandover, true, handover->listener_fd());
  return sockets;
}

handover::State Daemon::Impl::FinishForHandover() {
  follower.reset();
  // No call is read any more; the running ones finish and are answered.
  server->Stop();
  handover::State state;
  if (rpc::DuplicateCache* drc = dispatcher->drc()) {
    for (rpc::DuplicateCache::Record& r : drc->Export()) {
      state.drc.push_back({std::move(r.key.peer), r.key.xid, r.key.prog, r.key.vers, r.key.proc,
                           r.key.checksum, std::move(r.reply)});
    }
  }
  return state;
}

void Daemon::Impl::ImportState(handover::State state) {
  if (rpc::DuplicateCache* drc = dispatcher->drc()) {
    std::vector<rpc::DuplicateCache::Record> records;
    records.reserve(state.drc.size());
    for (handover::DrcEntry& e : state.drc) {
      records.push_back({rpc::DrcKey{std::move(e.peer), e.xid, e.prog, e.vers, e.proc, e.checksum},
                         std::move(e.reply)});
    }
    drc->Import(std::move(records));
  }
}

absl::Status Daemon::TakeOver() {
  Impl& d = *impl_;
  absl::StatusOr<HandoverClient> client = HandoverClient::Connect(d.config.state_dir);
  if (!client.ok()) return client.status();
  absl::StatusOr<HandoverClient::Inherited> inherited = client->ReceiveSockets();
  if (!inherited.ok()) return inherited.status();
  NFS3D_LOG_INFO("taking over from nfs3d %s: %d sockets", inherited->predecessor_version,
                 inherited->sockets.sockets.size());
  d.backend->AdoptWriteVerifier(inherited->sockets.write_verifier);
  d.inherited = InheritedSockets(inherited->sockets.sockets, std::move(inherited->fds));
  bool ready_sent = false;
  d.before_serving = [&]() -> absl::Status {
    if (absl::Status s = client->SendReady(absl::OkStatus()); !s.ok()) return s;
    ready_sent = true;
    // From here this process serves, whatever comes.
    absl::StatusOr<handover::State> state = client->ReceiveState();
    if (!state.ok()) {
      NFS3D_LOG_WARNING("serving without the predecessor's state: %s", state.status().message());
      return absl::OkStatus();
    }
    NFS3D_LOG_INFO("took over %d cached replies", state->drc.size());
    d.ImportState(std::move(*state));
    return absl::OkStatus();
  };
  absl::Status started = Start();
  d.before_serving = nullptr;
  if (!started.ok() && !ready_sent) (void)client->SendReady(started);
  return started;
}

}  // namespace nfs3d::daemon
