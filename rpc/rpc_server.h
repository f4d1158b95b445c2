// Owns the io threads, the worker pool and every listener. Any number of TCP
// and UDP listeners (NFS, MOUNT, portmapper...) feed one RpcService.
//
//   RpcServer server(options, &service);
//   auto port = server.ListenTcp("0.0.0.0", 2049);
//   server.Start();
//   ...
//   server.Stop();
#ifndef NFS3D_RPC_RPC_SERVER_H_
#define NFS3D_RPC_RPC_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/thread_pool.hpp"

#include "rpc/extra_workers.h"
#include "rpc/service.h"
#include "rpc/tcp_sendfile.h"
#include "rpc/tcp_server.h"
#include "rpc/udp_server.h"

namespace nfs3d::rpc {

struct RpcServerOptions {
  size_t io_threads = 1;      // each runs its own io_context
  size_t worker_threads = 8;  // run RpcService::HandleCall
  // NFSv3 metadata calls on a pool of their own with this many threads; 0:
  // they share the worker pool (see WorkerPools).
  size_t metadata_threads = 0;
  size_t max_record_size = (1 << 20) + (64 << 10);  // largest TCP record accepted
  size_t max_connections = 1024;
  size_t max_inflight_per_connection = 64;  // stop reading a connection at this many
  // Calls queued for or running on the workers, all listeners together: UDP
  // datagrams beyond it are dropped, TCP connections pause reading.
  size_t max_inflight_total = 1024;
  // Of those, the most one client address holds (InflightLimit); 0: three
  // quarters of max_inflight_total, leaving a quarter for the other clients.
  size_t max_inflight_per_client = 0;
  size_t udp_buffer_bytes = 4 << 20;               // SO_RCVBUF / SO_SNDBUF of UDP sockets
  UdpPacingOptions udp_pacing;                     // replies that span frames (rpc/udp_pacer.h)
  TcpSendfile tcp_sendfile = TcpSendfile::kOff;    // TCP replies may carry file segments
  bool udp_sendfile = false;                       // UDP READ replies too (rpc/udp_spliced_reply.h)
  size_t tcp_splice_writes = 0;                    // TcpOptions::splice_writes
  int64_t tcp_record_timeout_ms = 30000;           // TcpOptions::record_timeout_ms
  size_t tcp_unfinished_per_client = 64 << 20;     // TcpOptions::unfinished_per_client
  std::shared_ptr<const tls::TlsCredentials> tls;  // TcpOptions::tls
  int64_t tls_handshake_timeout_ms = 10000;        // TcpOptions::tls_handshake_timeout_ms
  // Whether a busy connection's inline calls may spread to the metadata pool
  // (InlineBudget): unset = while the machine has a core to spare (SpareCores).
  std::optional<bool> spread_inline_calls;
  // True for an inline call (rpc/inline_calls.h) that may wait on something
  // remote (one on a CephFS file): it runs on a worker, not inline on an io
  // thread. Unset: every such call runs inline.
  std::function<bool(absl::Span<const uint8_t> call)> call_may_block;
  // Answers a call again, at once and without waiting on anything remote,
  // after the layers below gave up on it (rpc/running_call.h): e.g. the
  // dispatcher with the CephFS backend failing at once. Null: calls are
  // never answered early. Must outlive the server.
  RpcService* late_service = nullptr;
  // Advanced after every read from a client socket (TCP and UDP), before
  // the calls read are run; null: not kept. For state that a call must see
  // if it changed before the call was sent, but that is costly to look at:
  // looking once per read suffices (vfs::DirectoryMoveWatch). Must outlive
  // the server.
  std::atomic<uint64_t>* receive_count = nullptr;
  // Advanced each time a TCP connection is admitted (accepted, or handed
  // over by a predecessor); null: not kept. For a record of the connections
  // that must list a new one at once, not a period later
  // (daemon/tcp_clients_record.h). Must outlive the server.
  std::atomic<uint64_t>* tcp_admitted_count = nullptr;
};

class RpcServer {
 public:
  RpcServer(const RpcServerOptions& options, RpcService* service);
  ~RpcServer();  // Stop()s
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // Bind a listener ("0.0.0.0", "::", "127.0.0.1", ...). Port 0 picks an
  // ephemeral port; the bound port is returned. May be called before or
  // after Start(), not after Stop().
  absl::StatusOr<uint16_t> ListenTcp(const std::string& address, uint16_t port);
  absl::StatusOr<uint16_t> ListenUdp(const std::string& address, uint16_t port);

  // A listening TCP socket or bound UDP socket another process handed over
  // (daemon/handover.h): served like a bound one. Takes the descriptor.
  absl::StatusOr<uint16_t> AdoptTcp(int fd);
  absl::StatusOr<uint16_t> AdoptUdp(int fd);
  // The predecessor sends no more on the adopted UDP sockets: their replies
  // may be spliced from now on (UdpListener::AllowSplicing).
  void AllowUdpSplicing();

  // Every listener's socket, for a successor process; the server still owns
  // the descriptors.
  struct ListenerSocket {
    bool tcp = true;
    int fd = -1;
  };
  std::vector<ListenerSocket> ListenerSockets();
  // Stops accepting connections and reading datagrams (both queue in the
  // kernel) until ResumeListeners; connections already accepted are served
  // on. Returns once nothing is read from the listeners any more. Only
  // after Start.
  void PauseListeners();
  void ResumeListeners();

  // For a successor process (rpc/rpc_server_handover.cc): every TCP
  // connection stops reading calls; each one whose calls are all answered
  // and replies written within `bound` is given up, with the bytes it read
  // and did not run. The others stay (Stop closes them). Only after Start,
  // before Stop.
  std::vector<HandedConnection> HandOverConnections(std::chrono::milliseconds bound);
  // A connection a predecessor handed over, served like an accepted one
  // with `pending` read first, in the kernel TLS session `tls` names (if
  // any). Takes the descriptor; closes it (an error) when no TCP listener
  // here serves its local address and port, or when the socket's TLS is not
  // what `tls` says.
  absl::Status AdoptConnection(int fd, std::string_view pending,
                               const ConnectionSecurity& tls = {});

  // Starts the io and worker threads and every listener.
  void Start();
  // Stops accepting and receiving, waits for running calls, closes every
  // socket and joins the threads. Idempotent.
  void Stop();
  // New TLS handshakes use these credentials (a reload of [tls]); only
  // when the server was made with RpcServerOptions::tls.
  void SetTlsCredentials(std::shared_ptr<const tls::TlsCredentials> tls) {
    if (tcp_context_.options().tls != nullptr) tcp_context_.set_tls(std::move(tls));
  }

  size_t open_connections() const { return tcp_context_.size(); }
  // Each open TCP connection's client and RPC-with-TLS state.
  std::vector<TcpConnectionView> tcp_connections() const { return tcp_context_.Connections(); }
  const InflightLimit& inflight() const { return inflight_; }

 private:
  boost::asio::io_context& NextContext();

  RpcServerOptions options_;
  RpcService* service_;
  std::mutex mu_;  // serialises Listen*/Start/Stop
  bool started_ = false;
  bool stopped_ = false;
  // Declaration order is destruction order in reverse: the worker pool goes
  // first (its abandoned tasks own connections), then listeners, then the io
  // contexts (whose queued handlers may own connections), then the shared
  // state those connections unregister from.
  MtuCache mtu_cache_;
  InflightLimit inflight_;
  TcpContext tcp_context_;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guards_;
  std::atomic<size_t> next_context_{0};
  std::vector<std::unique_ptr<TcpListener>> tcp_listeners_;
  std::vector<std::unique_ptr<UdpListener>> udp_listeners_;
  std::unique_ptr<boost::asio::thread_pool> workers_;
  std::unique_ptr<boost::asio::thread_pool> metadata_workers_;  // may be null
  std::unique_ptr<ExtraWorkers> extra_workers_;                 // for workers_
  std::unique_ptr<ExtraWorkers> extra_metadata_workers_;        // may be null
  SpareCores spare_cores_;  // started and stopped with the io threads
  WorkerPools pools_;
  std::vector<std::thread> io_threads_;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_RPC_SERVER_H_
