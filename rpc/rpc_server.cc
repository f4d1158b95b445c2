#include "rpc/rpc_server.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/ip/address.hpp"

#include "common/log.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;

namespace {
absl::StatusOr<asio::ip::address> ParseAddress(const std::string& text) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(text, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("bad listen address '", text, "'"));
  return addr;
}

TcpOptions MakeTcpOptions(const RpcServerOptions& o) {
  TcpOptions t;
  t.max_record_size = o.max_record_size;
  t.max_connections = o.max_connections;
  t.max_inflight_per_connection = std::max<size_t>(1, o.max_inflight_per_connection);
  t.sendfile = o.tcp_sendfile;
  t.receive_count = o.receive_count;
  t.admitted_count = o.tcp_admitted_count;
  t.splice_writes = o.tcp_splice_writes;
  t.record_timeout_ms = o.tcp_record_timeout_ms;
  t.tls = o.tls;
  t.tls_handshake_timeout_ms = o.tls_handshake_timeout_ms;
  t.unfinished_per_client = o.tcp_unfinished_per_client;
  return t;
}

// The pool is created in the constructor so that listeners can hold it.
RpcServerOptions Sanitize(RpcServerOptions o) {
  o.io_threads = std::max<size_t>(1, o.io_threads);
  o.worker_threads = std::max<size_t>(1, o.worker_threads);
  return o;
}
}  // namespace

RpcServer::RpcServer(const RpcServerOptions& options, RpcService* service)
    : options_(Sanitize(options)),
      service_(service),
      inflight_(options_.max_inflight_total, options_.max_inflight_per_client != 0
                                                 ? options_.max_inflight_per_client
                                                 : options_.max_inflight_total * 3 / 4),
      tcp_context_(service, WorkerPools{}, MakeTcpOptions(options_), &inflight_),
      spare_cores_(options_.spread_inline_calls) {
  for (size_t i = 0; i < options_.io_threads; ++i) {
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    guards_.push_back(asio::make_work_guard(*contexts_.back()));
  }
  workers_ = std::make_unique<asio::thread_pool>(options_.worker_threads);
  if (options_.metadata_threads > 0) {
    metadata_workers_ = std::make_unique<asio::thread_pool>(options_.metadata_threads);
  }
  pools_ = WorkerPools{workers_.get(), metadata_workers_.get(), &spare_cores_,
                       options_.call_may_block ? &options_.call_may_block : nullptr};
  if (options_.late_service != nullptr) {
    // Bounded by the pool's size: once calls are answered early, new ones
    // fail at once, so no more than the pool's threads get stuck at a time.
    extra_workers_ = std::make_unique<ExtraWorkers>(workers_.get(), options_.worker_threads);
    if (metadata_workers_) {
      extra_metadata_workers_ =
          std::make_unique<ExtraWorkers>(metadata_workers_.get(), options_.metadata_threads);
    }
    pools_.late = options_.late_service;
    pools_.main_extra = extra_workers_.get();
    pools_.metadata_extra = extra_metadata_workers_.get();
  }
  tcp_context_.set_workers(pools_);
}

RpcServer::~RpcServer() { Stop(); }

asio::io_context& RpcServer::NextContext() {
  return *contexts_[next_context_.fetch_add(1, std::memory_order_relaxed) % contexts_.size()];
}

absl::StatusOr<uint16_t> RpcServer::ListenTcp(const std::string& address, uint16_t port) {
  auto addr = ParseAddress(address);
  if (!addr.ok()) return addr.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return absl::FailedPreconditionError("server stopped");
  auto listener = TcpListener::Create(
      NextContext(), asio::ip::tcp::endpoint(*addr, port),
      [this]() -> asio::io_context& { return NextContext(); }, &tcp_context_);
  if (!listener.ok()) return listener.status();
  uint16_t bound = (*listener)->port();
  if (started_) (*listener)->Start();
  tcp_listeners_.push_back(std::move(*listener));
  NFS3D_LOG_INFO("listening on tcp %s port %d", address, bound);
  return bound;
}

absl::StatusOr<uint16_t> RpcServer::ListenUdp(const std::string& address, uint16_t port) {
  auto addr = ParseAddress(address);
  if (!addr.ok()) return addr.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return absl::FailedPreconditionError("server stopped");
  auto listener =
      UdpListener::Create(NextContext(), asio::ip::udp::endpoint(*addr, port), service_, pools_,
                          &mtu_cache_, options_.udp_buffer_bytes, &inflight_,
                          options_.receive_count, options_.udp_pacing, options_.udp_sendfile);
  if (!listener.ok()) return listener.status();
  uint16_t bound = (*listener)->port();
  const std::string described = (*listener)->Describe();
  if (started_) (*listener)->Start();
  udp_listeners_.push_back(std::move(*listener));
  NFS3D_LOG_INFO("listening on udp %s port %d (%s)", address, bound, described.c_str());
  return bound;
}

absl::StatusOr<uint16_t> RpcServer::AdoptTcp(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return absl::FailedPreconditionError("server stopped");
  auto listener = TcpListener::Adopt(
      NextContext(), fd, [this]() -> asio::io_context& { return NextContext(); }, &tcp_context_);
  if (!listener.ok()) return listener.status();
  uint16_t bound = (*listener)->port();
  if (started_) (*listener)->Start();
  tcp_listeners_.push_back(std::move(*listener));
  return bound;
}

absl::StatusOr<uint16_t> RpcServer::AdoptUdp(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return absl::FailedPreconditionError("server stopped");
  auto listener =
      UdpListener::Adopt(NextContext(), fd, service_, pools_, &mtu_cache_, &inflight_,
                         options_.receive_count, options_.udp_pacing, options_.udp_sendfile);
  if (!listener.ok()) return listener.status();
  uint16_t bound = (*listener)->port();
  if (started_) (*listener)->Start();
  udp_listeners_.push_back(std::move(*listener));
  return bound;
}

void RpcServer::AllowUdpSplicing() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& l : udp_listeners_) l->AllowSplicing();
}

std::vector<RpcServer::ListenerSocket> RpcServer::ListenerSockets() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ListenerSocket> sockets;
  for (auto& l : tcp_listeners_) sockets.push_back({true, l->native_handle()});
  for (auto& l : udp_listeners_) sockets.push_back({false, l->native_handle()});
  return sockets;
}

void RpcServer::PauseListeners() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || stopped_) return;
  for (auto& l : tcp_listeners_) l->Pause();
  for (auto& l : udp_listeners_) l->Pause();
}

void RpcServer::ResumeListeners() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || stopped_) return;
  for (auto& l : tcp_listeners_) l->Resume();
  for (auto& l : udp_listeners_) l->Resume();
}

void RpcServer::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopped_) return;
  started_ = true;
  spare_cores_.Start();
  for (auto& l : tcp_listeners_) l->Start();
  for (auto& l : udp_listeners_) l->Start();
  for (auto& ctx : contexts_) {
    io_threads_.emplace_back([io = ctx.get()] {
      // Handlers do not throw by design; if one does, log and keep serving.
      while (true) {
        try {
          io->run();
          return;
        } catch (const std::exception& e) {
          NFS3D_LOG_ERROR("io thread: %s", e.what());
        }
      }
    });
  }
}

void RpcServer::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return;
  stopped_ = true;
  // 1. No more accepts, reads or writes: stop the io threads.
  for (auto& g : guards_) g.reset();
  for (auto& ctx : contexts_) ctx->stop();
  for (auto& t : io_threads_) t.join();
  io_threads_.clear();
  spare_cores_.Stop();
  // 2. Let running calls finish (queued ones are abandoned); UDP workers send
  //    on the listeners' sockets, so those must stay open until here.
  for (asio::thread_pool* pool : {pools_.main, pools_.metadata}) {
    if (pool == nullptr) continue;
    pool->stop();
    pool->join();
  }
  for (ExtraWorkers* extra : {pools_.main_extra, pools_.metadata_extra}) {
    if (extra != nullptr) extra->Join();
  }
  // 3. Nothing runs any more: close every socket from this thread.
  for (auto& l : tcp_listeners_) l->CloseNow();
  for (auto& l : udp_listeners_) l->CloseNow();
  tcp_context_.CloseAllNow();
  if (inflight_.refused() > 0) {
    NFS3D_LOG_INFO("rpc: %d calls waited for or were dropped at the in-flight limit (%d)",
                   inflight_.refused(), inflight_.limit());
  }
}

}  // namespace nfs3d::rpc
