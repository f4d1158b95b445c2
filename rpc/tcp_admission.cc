// Fair admission: the client address a call's server-wide slot counts
// against (InflightLimit, TCP and UDP); on TCP, which connection makes room at
// max_connections and the bounds on records begun and not finished. A record
// holds no server-wide slot until it is whole (TcpConnection::
// DispatchCompleted); what it holds in memory counts against its client
// address's share; a record that stops arriving closes its connection after
// TcpOptions::record_timeout_ms. The rest of the connection is in
// tcp_server.cc.
#include <netinet/in.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <utility>

#include "common/log.h"
#include "rpc/tcp_server.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// True for the 1st, 2nd, 4th, ... event counted: a flood does not flood the log.
bool WorthLogging(std::atomic<uint64_t>& count) {
  const uint64_t n = count.fetch_add(1, std::memory_order_relaxed) + 1;
  return (n & (n - 1)) == 0;
}

std::atomic<uint64_t> over_share_closed{0};
std::atomic<uint64_t> stalled_closed{0};
}  // namespace

uint64_t InflightLimit::ClientOf(const sockaddr_storage& peer) {
  uint64_t key = 0;
  if (peer.ss_family == AF_INET) {
    key = reinterpret_cast<const sockaddr_in&>(peer).sin_addr.s_addr;
  } else if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      uint32_t v4 = 0;
      std::memcpy(&v4, a.s6_addr + 12, sizeof(v4));
      key = v4;
    } else {
      std::memcpy(&key, a.s6_addr, sizeof(key));  // its /64
    }
  }
  return key;
}

size_t InflightLimit::BucketOf(uint64_t client) {
  // Fibonacci hashing: the product's top bits spread neighbouring addresses.
  static_assert(kClientBuckets == size_t{1} << 12);
  return static_cast<size_t>((client * 0x9E3779B97F4A7C15ull) >> 52);
}

bool TcpContext::Add(TcpConnection* conn, uint64_t client, std::weak_ptr<TcpConnection> weak) {
  // References taken while the table is locked are dropped after it is
  // unlocked: dropping the last one runs the destructor, which locks it.
  std::vector<std::shared_ptr<TcpConnection>> looked_at;
  TcpConnection* victim = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (open_.size() >= options_.max_connections) {
      victim = PickVictim(&looked_at);
      if (victim == nullptr) return false;
    }
    // The victim leaves the table when it closes; until then the table
    // holds one more than the limit.
    ++clients_[client].connections;
    open_.emplace(conn, Open{std::move(weak), client, 0});
  }
  if (options_.admitted_count != nullptr) {
    options_.admitted_count->fetch_add(1, std::memory_order_relaxed);
  }
  if (victim != nullptr) {
    const uint64_t n = evicted_.fetch_add(1, std::memory_order_relaxed) + 1;
    if ((n & (n - 1)) == 0) {  // the 1st, 2nd, 4th, ...: a steady churn does not flood the log
      NFS3D_LOG_INFO(
          "tcp: %d connections (max_connections): closed an idle one of the client with the most "
          "for a new client (%d times so far; clients reconnect)",
          options_.max_connections, n);
    }
    victim->CloseIfIdle();  // looked_at keeps it alive until here
  }
  return true;
}

TcpConnection* TcpContext::PickVictim(std::vector<std::shared_ptr<TcpConnection>>* looked_at) {
  // The scan is O(connections), paid only by a newcomer at the limit.
  looked_at->reserve(open_.size());
  TcpConnection* victim = nullptr;
  size_t most = 0;  // connections of the victim's client
  int64_t oldest = INT64_MAX;
  for (const auto& [raw, open] : open_) {
    std::shared_ptr<TcpConnection> alive = open.weak.lock();  // not one being destroyed
    if (alive == nullptr) continue;
    int64_t last_active = 0;
    const bool idle = alive->Idle(&last_active);
    looked_at->push_back(std::move(alive));
    if (!idle) continue;
    auto client = clients_.find(open.client);
    const size_t n = client == clients_.end() ? 0 : client->second.connections;
    if (n > most || (n == most && last_active < oldest)) {
      most = n;
      oldest = last_active;
      victim = raw;
    }
  }
  return victim;
}

void TcpContext::Remove(TcpConnection* conn) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_.find(conn);
  if (it == open_.end()) return;
  auto client = clients_.find(it->second.client);
  if (client != clients_.end()) {
    client->second.unfinished -= it->second.unfinished;
    if (--client->second.connections == 0) clients_.erase(client);
  }
  open_.erase(it);
}

bool TcpContext::HoldUnfinished(TcpConnection* conn, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_.find(conn);
  if (it == open_.end()) return true;  // closed: holds nothing any more
  Client& client = clients_[it->second.client];
  size_t& held = it->second.unfinished;
  const size_t share = std::max(options_.unfinished_per_client, options_.max_record_size);
  if (bytes > held && client.unfinished - held + bytes > share) return false;
  client.unfinished = client.unfinished - held + bytes;
  held = bytes;
  return true;
}

bool TcpConnection::AccountUnfinished() {
  const size_t held = reassembler_.idle() ? 0 : reassembler_.size();
  if (held != held_unfinished_ && !HoldUnfinished(held)) return false;
  WatchUnfinished();
  return true;
}

bool TcpConnection::HoldUnfinished(size_t bytes) {
  if (context_->HoldUnfinished(this, bytes)) {
    held_unfinished_ = bytes;
    return true;
  }
  if (WorthLogging(over_share_closed)) {
    error_code ec;
    NFS3D_LOG_WARNING(
        "tcp: closing a connection from %s: its client's unfinished records would hold more than "
        "%d bytes ([tcp] unfinished_per_client; %d such closes so far)",
        socket_.remote_endpoint(ec).address().to_string(),
        std::max(context_->options().unfinished_per_client, context_->options().max_record_size),
        over_share_closed.load(std::memory_order_relaxed));
  }
  DoClose();
  return false;
}

size_t TcpConnection::UnfinishedProgress() {
  int queued = 0;
  if (ioctl(socket_.native_handle(), FIONREAD, &queued) != 0 || queued < 0) queued = 0;
  return reassembler_.size() + static_cast<size_t>(queued);
}

void TcpConnection::WatchUnfinished() {
  const int64_t timeout_ms = context_->options().record_timeout_ms;
  if (timeout_ms <= 0 || reassembler_.idle() || reassembler_.complete()) {
    unfinished_since_ns_ = 0;
    return;
  }
  if (unfinished_since_ns_ == 0) {
    unfinished_since_ns_ = SteadyNowNs();
    unfinished_mark_ = UnfinishedProgress();
  }
  if (record_timer_armed_) return;
  // A look every quarter of the timeout: a stalled record is closed 1 to
  // 1.25 timeouts after its last byte, for a wakeup per record at most
  // (records usually arrive whole before the first look).
  record_timer_armed_ = true;
  record_timer_.expires_after(std::chrono::milliseconds(std::max<int64_t>(1, timeout_ms / 4)));
  record_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
    self->record_timer_armed_ = false;
    if (!ec) self->OnUnfinishedTimer();
  });
}

void TcpConnection::OnUnfinishedTimer() {
  if (closed_ || handing_over_ || unfinished_since_ns_ == 0) return;
  const size_t progress = UnfinishedProgress();
  // Only the time the reader waits for the client counts: a record held back
  // by the server (its call limit, replies unsent) is no stall of the client.
  if (progress != unfinished_mark_ || !reading_) {
    unfinished_mark_ = progress;
    unfinished_since_ns_ = SteadyNowNs();
  } else if (SteadyNowNs() - unfinished_since_ns_ >=
             context_->options().record_timeout_ms * int64_t{1000000}) {
    if (WorthLogging(stalled_closed)) {
      error_code ec;
      NFS3D_LOG_INFO(
          "tcp: closing a connection from %s: its record stopped arriving at %d bytes for %d ms "
          "([tcp] record_timeout; %d such closes so far)",
          socket_.remote_endpoint(ec).address().to_string(), progress,
          context_->options().record_timeout_ms, stalled_closed.load(std::memory_order_relaxed));
    }
    DoClose();
    return;
  }
  WatchUnfinished();
}

}  // namespace nfs3d::rpc
