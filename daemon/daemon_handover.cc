// Both sides of a handover as the daemon sees them (daemon/handover.h): the
// predecessor pauses, passes its sockets and, once the successor is ready,
// stops and passes its state; the successor adopts the sockets and state.
#include <chrono>

#include "daemon/daemon_impl.h"
#include "daemon/handover_stats.h"
#include "daemon/systemd_notify.h"

namespace nfs3d::daemon {

namespace {
// How long the predecessor waits for its connections' running calls; a
// connection still busy then is closed (its client reconnects). The
// successor waits 60 s for the state.
constexpr std::chrono::milliseconds kConnectionHandoverBound(10000);
// Bytes read and not run, all handed connections together: the State frame
// stays far below its 256 MiB bound.
constexpr size_t kMaxPendingTotal = 64 << 20;
}  // namespace

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
  hooks.finish = [&d](std::vector<int>* fds) { return d.FinishForHandover(fds); };
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

handover::State Daemon::Impl::FinishForHandover(std::vector<int>* fds) {
  follower.reset();
  tcp_clients.reset();  // the successor records them from now on
  handover::State state;
  state.tcp = ExportConnections(fds);
  // No call is read any more; the running ones finish and are answered.
  server->Stop();
  ExportLocks(fds, &state);
  state.cephfs_write_verifier = HandOverCeph(state.nlm);
  if (gss) ExportGssContexts(&state);
  if (rpc::DuplicateCache* drc = dispatcher->drc()) {
    for (rpc::DuplicateCache::Record& r : drc->Export()) {
      state.drc.push_back({std::move(r.key.peer), r.key.xid, r.key.prog, r.key.vers, r.key.proc,
                           r.key.checksum, std::move(r.reply)});
    }
  }
  // After Stop: the counters include every call answered.
  state.stats = StatsToHandover(stats.Take());
  return state;
}

void Daemon::Impl::ImportState(HandoverClient::FinalState final_state) {
  handover::State& state = final_state.state;
  ImportLocks(&state, &final_state.fds);
  ImportConnections(state.tcp, &final_state.fds);
  TakeOverCeph(state.cephfs_write_verifier);
  stats.Carry(StatsFromHandover(state.stats));
  ImportGssContexts(state.gss);
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

std::vector<handover::TcpConnectionEntry> Daemon::Impl::ExportConnections(std::vector<int>* fds) {
  // Each connection stops reading between two reads; the calls it read
  // finish and are answered first. Bytes it read and did not run (a record
  // begun, records not yet dispatched) go along and run in the successor.
  std::vector<rpc::HandedConnection> handed = server->HandOverConnections(kConnectionHandoverBound);
  std::vector<handover::TcpConnectionEntry> entries;
  size_t pending_bytes = 0;
  for (rpc::HandedConnection& c : handed) {
    OwnedFd fd(c.fd);
    // Beyond the frame's bounds a connection is closed: its client
    // reconnects and retransmits, as after a restart.
    if (entries.size() >= handover::kMaxTcpConnections ||
        c.pending.size() > handover::kMaxTcpPending ||
        pending_bytes + c.pending.size() > kMaxPendingTotal) {
      continue;
    }
    pending_bytes += c.pending.size();
    handover::TcpConnectionEntry& e = entries.emplace_back(
        handover::TcpConnectionEntry{static_cast<uint32_t>(fds->size()), std::move(c.pending), {}});
    if (c.tls.mode != rpc::TransportSecurity::kNone) {
      e.tls.push_back({c.tls.mode == rpc::TransportSecurity::kMtls ? handover::TlsSecurity::kMtls
                                                                   : handover::TlsSecurity::kTls,
                       std::move(c.tls.version), std::move(c.tls.cipher),
                       std::move(c.tls.subject)});
    }
    fds->push_back(fd.get());
    handed_connections.push_back(std::move(fd));
  }
  return entries;
}

void Daemon::Impl::ImportConnections(const std::vector<handover::TcpConnectionEntry>& entries,
                                     std::vector<OwnedFd>* fds) {
  size_t adopted = 0;
  for (const handover::TcpConnectionEntry& e : entries) {
    // A listener the configuration no longer names takes its connections
    // along: they are closed, their clients reconnect elsewhere.
    rpc::ConnectionSecurity tls;
    if (!e.tls.empty()) {
      tls.mode = e.tls[0].security == handover::TlsSecurity::kMtls ? rpc::TransportSecurity::kMtls
                                                                   : rpc::TransportSecurity::kTls;
      tls.version = e.tls[0].version;
      tls.cipher = e.tls[0].cipher;
      tls.subject = e.tls[0].subject;
    }
    absl::Status s = server->AdoptConnection((*fds)[e.fd_index].Release(), e.pending, tls);
    if (s.ok()) {
      ++adopted;
    } else {
      NFS3D_LOG_INFO("%s", s.message());
    }
  }
  if (!entries.empty()) {
    NFS3D_LOG_INFO("took over %d of %d TCP connections", adopted, entries.size());
  }
}

void Daemon::Impl::ExportLocks(std::vector<int>* fds, handover::State* state) {
  handover::NlmState& out = state->nlm;
  if (!nlm) return;
  nlm->Stop();  // no callback changes anything any more
  out.enabled = true;
  out.nsm_state = nsm_store->state();
  nlm::NlmSnapshot snapshot = nlm->Snapshot();
  out.grace_left_ms = snapshot.grace_left_ms;
  for (const auto& [file, l] : snapshot.locks) {
    out.locks.push_back(
        {file, l.owner.host, l.owner.svid, l.owner.oh, l.first, l.last, l.exclusive});
  }
  for (const auto& [file, s] : snapshot.shares) {
    out.shares.push_back(
        {file, s.host, s.oh, static_cast<uint32_t>(s.mode), static_cast<uint32_t>(s.access)});
  }
  for (const nlm::NlmSnapshot::HostRecord& h : snapshot.hosts) {
    out.hosts.push_back({h.name, h.address, h.local_address, h.recorded, h.previous});
  }
  for (const nlm::OfdLockMirror::Held& h : lock_mirror->Descriptors()) {
    out.fds.push_back(
        {h.file, h.owner.host, h.owner.svid, h.owner.oh, static_cast<uint32_t>(fds->size())});
    fds->push_back(h.fd);
  }
  for (const nlm::NlmSnapshot::Waiter& w : snapshot.waiters) {
    const nlm::nlm4_lock& a = w.alock;
    state->nlm_waiters.push_back({w.file, a.caller_name, a.svid, a.oh, a.fh, a.l_offset, a.l_len,
                                  w.exclusive, w.cookie, w.address,
                                  w.transport == rpc::Transport::kTcp, w.vers, w.granted});
  }
}

void Daemon::Impl::ImportLocks(handover::State* full, std::vector<OwnedFd>* fds) {
  handover::NlmState& state = full->nlm;
  if (!state.enabled) return;
  if (!nlm) {
    NFS3D_LOG_WARNING("the predecessor's %d NLM locks are dropped: [nlm] is off here",
                      state.locks.size());
    return;
  }
  if (state.nsm_state != nsm_store->state()) {
    NFS3D_LOG_WARNING("NSM state %d here, %d in the predecessor", nsm_store->state(),
                      state.nsm_state);
  }
  std::vector<nlm::OfdLockMirror::Held> held;
  for (const handover::LockFdEntry& e : state.fds) {
    held.push_back({nlm::LockOwner{e.host, e.svid, e.oh}, e.file, (*fds)[e.fd_index].Release()});
  }
  lock_mirror->Adopt(std::move(held));
  nlm::NlmSnapshot snapshot;
  snapshot.grace_left_ms = state.grace_left_ms;
  for (handover::NlmLockEntry& l : state.locks) {
    snapshot.locks.push_back(
        {std::move(l.file), nlm::Lock{nlm::LockOwner{std::move(l.host), l.svid, std::move(l.oh)},
                                      l.first, l.last, l.exclusive}});
  }
  for (handover::NlmShareEntry& s : state.shares) {
    nlm::ShareReservation r;
    r.host = std::move(s.host);
    r.oh = std::move(s.oh);
    r.mode = static_cast<nlm::fsh4_mode>(s.mode & 3);
    r.access = static_cast<nlm::fsh4_access>(s.access & 3);
    snapshot.shares.push_back({std::move(s.file), std::move(r)});
  }
  for (handover::NlmHostEntry& h : state.hosts) {
    snapshot.hosts.push_back({std::move(h.name), std::move(h.address), std::move(h.local_address),
                              h.recorded, h.previous});
  }
  for (handover::NlmWaiterEntry& w : full->nlm_waiters) {
    nlm::nlm4_lock a;
    a.caller_name = std::move(w.host);
    a.svid = w.svid;
    a.oh = std::move(w.oh);
    a.fh = std::move(w.fh);
    a.l_offset = w.l_offset;
    a.l_len = w.l_len;
    snapshot.waiters.push_back(
        {std::move(w.file), std::move(a), w.exclusive, std::move(w.cookie), std::move(w.address),
         w.stream ? rpc::Transport::kTcp : rpc::Transport::kUdp, w.vers, w.granted});
  }
  nlm_snapshot = std::move(snapshot);
}

void Daemon::Impl::ExportGssContexts(handover::State* state) {
  for (rpc::gss::HandedContext& h : gss->ExportContexts()) {
    handover::GssContextEntry e;
    e.handle.assign(reinterpret_cast<const char*>(h.handle.data()), h.handle.size());
    e.left_ms = absl::ToInt64Milliseconds(h.left);
    e.principal = std::move(h.identity.principal);
    e.mapped = h.identity.mapped;
    e.uid = h.identity.uid;
    e.gid = h.identity.gid;
    e.gids = std::move(h.identity.gids);
    e.window_size = h.window.size;
    e.window_started = h.window.started;
    e.window_highest = h.window.highest;
    e.window_seen = std::move(h.window.seen);
    if (const std::optional<rpc::gss::krb5::ContextKeys>& k = h.protection.keys) {
      e.keys.push_back({k->context_key_type,
                        std::string(k->context_key.begin(), k->context_key.end()),
                        k->acceptor_subkey_type,
                        std::string(k->acceptor_subkey.begin(), k->acceptor_subkey.end()),
                        k->initiator, k->send_seq});
    }
    e.gss_token = std::move(h.protection.gss_token);
    state->gss.push_back(std::move(e));
  }
}

void Daemon::Impl::ImportGssContexts(const std::vector<handover::GssContextEntry>& entries) {
  if (entries.empty()) return;
  if (!gss) {
    NFS3D_LOG_WARNING("the predecessor's %d RPCSEC_GSS contexts are dropped: no Kerberos here",
                      entries.size());
    return;
  }
  std::vector<rpc::gss::HandedContext> contexts;
  for (const handover::GssContextEntry& e : entries) {
    rpc::gss::HandedContext h;
    if (e.handle.size() != h.handle.size()) continue;
    std::copy(e.handle.begin(), e.handle.end(), h.handle.begin());
    h.left = absl::Milliseconds(e.left_ms);
    h.identity = {e.principal, e.mapped, e.uid, e.gid, e.gids};
    h.window = {e.window_size, e.window_started, e.window_highest, e.window_seen};
    if (!e.keys.empty()) {
      const handover::GssKeysEntry& k = e.keys[0];
      rpc::gss::krb5::ContextKeys keys;
      keys.context_key_type = k.context_key_type;
      keys.context_key.assign(k.context_key.begin(), k.context_key.end());
      keys.acceptor_subkey_type = k.acceptor_subkey_type;
      keys.acceptor_subkey.assign(k.acceptor_subkey.begin(), k.acceptor_subkey.end());
      keys.initiator = k.initiator;
      keys.send_seq = k.send_seq;
      h.protection.keys = std::move(keys);
    }
    h.protection.gss_token = e.gss_token;
    contexts.push_back(std::move(h));
  }
  const size_t taken = gss->ImportContexts(contexts);
  NFS3D_LOG_INFO("took over %d of %d RPCSEC_GSS contexts", taken, entries.size());
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
  const int predecessor = client->predecessor_pid();
  d.before_serving = [&]() -> absl::Status {
    // Under systemd this process is the service from now on: said before
    // Ready, as the predecessor may exit any time after it; taken back if
    // Ready does not get through (the predecessor then serves on).
    NotifySystemdMainPid(getpid());
    if (absl::Status s = client->SendReady(absl::OkStatus()); !s.ok()) {
      if (predecessor > 0) NotifySystemdMainPid(predecessor);
      return s;
    }
    ready_sent = true;
    // From here this process serves, whatever comes.
    absl::StatusOr<HandoverClient::FinalState> state = client->ReceiveState();
    if (!state.ok()) {
      // The predecessor may still be answering calls on the UDP sockets:
      // their READ replies go from memory (no spliced datagram that its
      // sends could join) until the next start.
      NFS3D_LOG_WARNING("serving without the predecessor's state: %s", state.status().message());
      d.CephWithoutPredecessorState();
      return absl::OkStatus();
    }
    NFS3D_LOG_INFO("took over %d cached replies", state->state.drc.size());
    d.ImportState(std::move(*state));
    // The state comes once the predecessor has answered its last call.
    d.server->AllowUdpSplicing();
    return absl::OkStatus();
  };
  absl::Status started = Start();
  d.before_serving = nullptr;
  if (!started.ok() && !ready_sent) (void)client->SendReady(started);
  return started;
}

}  // namespace nfs3d::daemon
