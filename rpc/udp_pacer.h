// Paces UDP replies to the rate the path to each client carries and keeps
// the IP fragments of one reply together on the wire.
//
// Without it, workers send replies the moment they are ready: 16 READ replies
// of 23 fragments leave within microseconds, from several threads at once, so
// a bottleneck's queue fills and the fragments of replies interleave (a
// receiver gives up a reassembly when 64 fragments of other datagrams from
// the same peer arrive in between: ipfrag_max_dist). Replies to one socket
// leave one at a time, each whole (one sendmsg under a lock); a token bucket
// per client (per address) spaces them at the client's rate. A reply whose
// client has tokens and nothing queued goes out at once from the thread that
// built it (a worker, or the io thread: rpc/udp_server.h); the others wait in
// the client's queue for the pacer's thread.
//   fixed: the configured rate;
//   auto:  starts at the speed of the interface the call came in on; a
//          retransmitted call (an xid the client sent before) means the path
//          lost something: the client's rate drops to 70 % (at most once per
//          20 ms, never below 20 Mbit/s); every 10 ms without one it grows by
//          2 %, up to that speed.
// Replies that fit one frame skip the queue (they neither burst nor
// fragment) and go out from the thread that built them at once.
#ifndef NFS3D_RPC_UDP_PACER_H_
#define NFS3D_RPC_UDP_PACER_H_

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/types/span.h"

namespace nfs3d::rpc {

struct UdpPacingOptions {
  enum class Mode { kOff, kAuto, kFixed };
  Mode mode = Mode::kAuto;
  uint64_t rate_bps = 0;  // kFixed: bits per second per client
};

// Bytes a UDP datagram of `payload` bytes puts on an Ethernet link of `mtu`
// (IP and Ethernet headers of every fragment included).
uint64_t UdpWireBytes(size_t payload, uint32_t mtu, bool v6);

class UdpPacer {
 public:
  using Clock = std::chrono::steady_clock;
  // A reply waiting for its turn; Send() puts it on the socket.
  class Reply {
   public:
    virtual ~Reply() = default;
    virtual void Send() = 0;
  };

  // default_rate_bps: auto's starting rate and ceiling when the interface
  // does not say its speed.
  explicit UdpPacer(const UdpPacingOptions& options, uint64_t default_rate_bps = 10'000'000'000);
  ~UdpPacer();  // sends nothing more; queued replies are dropped
  UdpPacer(const UdpPacer&) = delete;
  UdpPacer& operator=(const UdpPacer&) = delete;

  // Whether a reply of `payload` bytes to a path of `mtu` goes through the
  // queue (it spans more than one frame).
  static bool Paces(size_t payload, uint32_t mtu) { return mtu == 0 || payload + 28 > mtu; }

  // Queues `reply` for the client at `peer` (its address; the port is
  // ignored). `ifindex`: the interface the call came in on (auto's ceiling).
  void Submit(const sockaddr_storage& peer, int ifindex, uint64_t wire_bytes,
              std::unique_ptr<Reply> reply);
  // Every call received: a retransmission slows its client down (auto).
  void NoteCall(const sockaddr_storage& peer, absl::Span<const uint8_t> call);

  // The client's current rate in bits per second (0: not known yet).
  uint64_t RateOf(const sockaddr_storage& peer);
  // "auto", "off" or the fixed rate, for the startup line.
  std::string Describe() const;

 private:
  struct Client {
    std::deque<std::unique_ptr<Reply>> queue;
    std::deque<uint64_t> wire;   // wire bytes of each queued reply
    bool pacer_sending = false;  // the pacer took one of its replies: keep order
    double rate_bps = 0;
    double ceiling_bps = 0;
    double tokens = 0;  // bytes; may go negative (a reply sent on credit)
    Clock::time_point refilled{};
    Clock::time_point last_slowdown{};
    Clock::time_point last_growth{};
    Clock::time_point last_active{};
    uint32_t recent_xids[64] = {};
    size_t next_xid = 0;
  };
  static std::string Key(const sockaddr_storage& peer);
  uint64_t CeilingFor(int ifindex);
  void Refill(Client& c, Clock::time_point now);
  void Run();

  const UdpPacingOptions options_;
  const uint64_t default_rate_bps_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::mutex send_mu_;  // one reply on the socket at a time: fragments together
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, Client> clients_ ABSL_GUARDED_BY(mu_);
  std::map<int, uint64_t> link_speed_ ABSL_GUARDED_BY(mu_);  // ifindex -> bit/s
  std::thread thread_;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_UDP_PACER_H_
