#include "rpc/udp_pacer.h"

#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d::rpc {
namespace {

constexpr double kMinRateBps = 20e6;
constexpr double kSlowdown = 0.7;
constexpr double kGrowth = 1.02;
constexpr auto kSlowdownGap = std::chrono::milliseconds(20);
constexpr auto kGrowthStep = std::chrono::milliseconds(10);
constexpr auto kForgetIdle = std::chrono::seconds(60);
// Bytes a client may send at once after a pause: a few frames' worth, so
// the sender need not wake for every reply at a microsecond's precision.
constexpr double kBucketBytes = 64 << 10;

std::string RateName(double bps) {
  if (bps >= 1e9) return absl::StrFormat("%.3ggbit", bps / 1e9);
  return absl::StrFormat("%.3gmbit", bps / 1e6);
}

}  // namespace

uint64_t UdpWireBytes(size_t payload, uint32_t mtu, bool v6) {
  const size_t ip = v6 ? 40 : 20;
  const size_t datagram = payload + 8;  // UDP header in the first fragment
  if (mtu <= ip + 8) return datagram + ip + 14;
  // Fragments carry multiples of 8 bytes (IPv6 adds its fragment header).
  const size_t per_fragment = ((mtu - ip - (v6 ? 8 : 0)) / 8) * 8;
  const size_t fragments = datagram <= mtu - ip ? 1 : (datagram + per_fragment - 1) / per_fragment;
  return datagram + fragments * (ip + 14 + (v6 && fragments > 1 ? 8 : 0));
}

UdpPacer::UdpPacer(const UdpPacingOptions& options, uint64_t default_rate_bps)
    : options_(options), default_rate_bps_(default_rate_bps) {
  thread_ = std::thread([this] { Run(); });
}

UdpPacer::~UdpPacer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::string UdpPacer::Key(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&peer);
    return std::string(reinterpret_cast<const char*>(&a->sin_addr), sizeof(a->sin_addr));
  }
  const auto* a = reinterpret_cast<const sockaddr_in6*>(&peer);
  return std::string(reinterpret_cast<const char*>(&a->sin6_addr), sizeof(a->sin6_addr));
}

uint64_t UdpPacer::CeilingFor(int ifindex) {
  if (options_.mode == UdpPacingOptions::Mode::kFixed) return options_.rate_bps;
  auto it = link_speed_.find(ifindex);
  if (it != link_speed_.end()) return it->second;
  uint64_t bps = default_rate_bps_;
  char name[IF_NAMESIZE] = {};
  if (ifindex > 0 && if_indextoname(static_cast<unsigned>(ifindex), name) != nullptr) {
    // Mbit/s; -1 or absent for links without a speed (loopback, tunnels).
    std::ifstream f(absl::StrCat("/sys/class/net/", name, "/speed"));
    long mbit = 0;
    if (f >> mbit && mbit > 0) bps = static_cast<uint64_t>(mbit) * 1'000'000;
  }
  link_speed_[ifindex] = bps;
  return bps;
}

void UdpPacer::Refill(Client& c, Clock::time_point now) {
  if (c.refilled != Clock::time_point{}) {
    const double seconds = std::chrono::duration<double>(now - c.refilled).count();
    c.tokens = std::min(kBucketBytes, c.tokens + seconds * c.rate_bps / 8);
  } else {
    c.tokens = kBucketBytes;
  }
  c.refilled = now;
  if (options_.mode == UdpPacingOptions::Mode::kAuto && now - c.last_growth >= kGrowthStep) {
    c.rate_bps = std::min(c.ceiling_bps, c.rate_bps * kGrowth);
    c.last_growth = now;
  }
}

void UdpPacer::Submit(const sockaddr_storage& peer, int ifindex, uint64_t wire_bytes,
                      std::unique_ptr<Reply> reply) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) return;
    Client& c = clients_[Key(peer)];
    if (c.ceiling_bps == 0) {
      c.ceiling_bps = static_cast<double>(CeilingFor(ifindex));
      c.rate_bps = c.ceiling_bps;
    }
    if (c.queue.empty() && !c.pacer_sending) {
      const Clock::time_point now = Clock::now();
      Refill(c, now);
      if (c.tokens >= 0) {  // within the client's rate: no hop to the pacer
        c.tokens -= static_cast<double>(wire_bytes);
        c.last_active = now;
        lock.unlock();
        std::lock_guard<std::mutex> sending(send_mu_);
        reply->Send();
        return;
      }
    }
    c.queue.push_back(std::move(reply));
    c.wire.push_back(wire_bytes);
  }
  cv_.notify_one();
}

void UdpPacer::NoteCall(const sockaddr_storage& peer, absl::Span<const uint8_t> call) {
  if (options_.mode != UdpPacingOptions::Mode::kAuto || call.size() < 4) return;
  uint32_t xid;
  std::memcpy(&xid, call.data(), sizeof(xid));
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  Client& c = clients_[Key(peer)];
  c.last_active = now;
  const bool again =
      std::find(std::begin(c.recent_xids), std::end(c.recent_xids), xid) != std::end(c.recent_xids);
  if (!again) {
    c.recent_xids[c.next_xid] = xid;
    c.next_xid = (c.next_xid + 1) % std::size(c.recent_xids);
    return;
  }
  // A call sent again: its reply (or the call itself) was lost on the way.
  if (c.rate_bps > 0 && now - c.last_slowdown >= kSlowdownGap) {
    c.rate_bps = std::max(kMinRateBps, c.rate_bps * kSlowdown);
    c.last_slowdown = now;
    c.last_growth = now;
  }
}

uint64_t UdpPacer::RateOf(const sockaddr_storage& peer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clients_.find(Key(peer));
  return it == clients_.end() ? 0 : static_cast<uint64_t>(it->second.rate_bps);
}

std::string UdpPacer::Describe() const {
  switch (options_.mode) {
    case UdpPacingOptions::Mode::kOff:
      return "off";
    case UdpPacingOptions::Mode::kFixed:
      return absl::StrCat(RateName(static_cast<double>(options_.rate_bps)), " per client");
    case UdpPacingOptions::Mode::kAuto:
      break;
  }
  return "auto";
}

void UdpPacer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const Clock::time_point now = Clock::now();
    Client* next = nullptr;
    Clock::time_point next_at = Clock::time_point::max();
    for (auto it = clients_.begin(); it != clients_.end();) {
      Client& c = it->second;
      if (c.queue.empty()) {
        it = now - c.last_active > kForgetIdle ? clients_.erase(it) : std::next(it);
        continue;
      }
      Refill(c, now);
      Clock::time_point at = now;
      if (c.tokens < 0 && c.rate_bps > 0) {
        at += std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(-c.tokens * 8 / c.rate_bps));
      }
      if (at < next_at) next_at = at, next = &c;
      ++it;
    }
    if (next == nullptr) {
      cv_.wait(lock);
      continue;
    }
    if (next_at > now) {
      cv_.wait_until(lock, next_at);
      continue;
    }
    std::unique_ptr<Reply> reply = std::move(next->queue.front());
    next->queue.pop_front();
    next->tokens -= static_cast<double>(next->wire.front());
    next->wire.pop_front();
    next->last_active = now;
    next->pacer_sending = true;
    lock.unlock();
    {
      std::lock_guard<std::mutex> sending(send_mu_);
      reply->Send();  // the whole reply, all its fragments, in one sendmsg
    }
    reply.reset();
    lock.lock();
    next->pacer_sending = false;
  }
}

}  // namespace nfs3d::rpc
