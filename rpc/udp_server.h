// RPC over UDP: one datagram is one call. The receive loop runs on an io
// thread and hands each datagram to the worker pool; the worker sends the
// reply itself with sendmsg, from the local address the call arrived on
// (IP_PKTINFO / IPV6_PKTINFO), so multi-homed hosts answer from the right IP.
// Short calls run on the io thread instead (rpc/inline_calls.h), and so do
// READs and UNSTABLE WRITEs while the machine has no core to spare, unless
// they were slow there of late (the disk answered, not the page cache).
// The loop drains the socket with recvmmsg; replies that span several frames
// go through a UdpPacer (rpc/udp_pacer.h) unless pacing is off. With
// `sendfile`, READ data stays in the page cache: a reply carrying file
// segments is put together in the kernel (rpc/udp_spliced_reply.h).
#ifndef NFS3D_RPC_UDP_SERVER_H_
#define NFS3D_RPC_UDP_SERVER_H_

#include <netinet/in.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/udp.hpp"
#include "boost/asio/ip/v6_only.hpp"
#include "boost/asio/thread_pool.hpp"

#include "rpc/call_context.h"
#include "rpc/inline_calls.h"
#include "rpc/inline_data_guard.h"
#include "rpc/mtu_cache.h"
#include "rpc/running_call.h"
#include "rpc/service.h"
#include "rpc/tcp_server.h"  // InflightLimit
#include "rpc/udp_pacer.h"
#include "rpc/worker_pools.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {

class UdpListener : public EarlyAnswerer {
 public:
  // buffer_bytes: SO_RCVBUF/SO_SNDBUF wanted (forced when privileged).
  // limit (may be null): datagrams that find it full are dropped unread by
  // the workers; the client retransmits.
  static absl::StatusOr<std::unique_ptr<UdpListener>> Create(
      boost::asio::io_context& io, const boost::asio::ip::udp::endpoint& endpoint,
      RpcService* service, WorkerPools workers, MtuCache* mtu, size_t buffer_bytes,
      InflightLimit* limit = nullptr, std::atomic<uint64_t>* receive_count = nullptr,
      const UdpPacingOptions& pacing = {}, bool sendfile = false);

  // A bound socket from another process (a predecessor handing its sockets
  // over), with its options as they were set; takes the descriptor.
  static absl::StatusOr<std::unique_ptr<UdpListener>> Adopt(
      boost::asio::io_context& io, int fd, RpcService* service, WorkerPools workers, MtuCache* mtu,
      InflightLimit* limit = nullptr, std::atomic<uint64_t>* receive_count = nullptr,
      const UdpPacingOptions& pacing = {}, bool sendfile = false);

  uint16_t port() const { return port_; }
  int native_handle() const { return fd_; }
  // The socket's effective buffers, the receive batch and the pacing, for
  // the startup line: "SO_RCVBUF 8388608, SO_SNDBUF 8388608, recvmmsg 16,
  // pacing auto".
  std::string Describe() const;
  void Start();
  // Stops reading datagrams until Resume (they queue in the socket); calls
  // already read run on. Returns once no read is pending. Only after Start.
  // Also stops splicing replies (a successor process may send on the socket
  // meanwhile: a pending datagram of ours would take in its replies) and
  // returns once none is half sent.
  void Pause();
  void Resume();
  // Replies may be spliced (with `sendfile`). An adopted socket starts
  // without until the predecessor is known to send no more on it (its
  // sends would join a pending datagram of ours): the owner says so here.
  void AllowSplicing();
  // Only once no io thread and no worker runs.
  void CloseNow();

  // EarlyAnswerer: answers the call now through WorkerPools::late, on the
  // pool it runs on, and takes the rest of its batch along.
  void AnswerEarly(RunningCall& call) override;

 private:
  struct Datagram {
    std::vector<uint8_t> data;
    TransportInfo info;
    int ifindex = 0;
    bool has_local = false;  // info.local came from pktinfo
  };

  struct WorkerBatches {
    std::vector<Datagram> data, metadata;  // one per pool (see WorkerPools)
  };
  class PacedReply;

  UdpListener(boost::asio::ip::udp::socket socket, RpcService* service, WorkerPools workers,
              MtuCache* mtu, InflightLimit* limit, std::atomic<uint64_t>* receive_count,
              const UdpPacingOptions& pacing, bool sendfile, bool splice_now);
  void Wait();
  void OnReadable();
  // One datagram of a recvmmsg batch: answered inline or added to a batch.
  void TakeDatagram(msghdr& msg, const sockaddr_storage& peer, size_t n,
                    InlineBudget& inline_budget, WorkerBatches& batches);
  void ReadPktinfo(msghdr& msg, Datagram& d) const;
  void FlushBatch(std::vector<Datagram>& batch);
  // Runs a batch of calls on `pool`, one after another.
  void RunBatch(std::vector<Datagram> batch, boost::asio::thread_pool* pool);
  // Runs one call and sends its reply; true if it was answered early
  // instead (then the rest of its batch went with it).
  // data: the call (dgram.data, or the receive buffer for inline calls);
  // pool: the worker pool running it (null: the io thread; never answered
  // early), batch and index: its batch.
  bool Handle(absl::Span<const uint8_t> data, Datagram& dgram,
              boost::asio::thread_pool* pool = nullptr, std::vector<Datagram>* batch = nullptr,
              size_t index = 0);
  // Runs a call answered early through WorkerPools::late and sends the reply.
  void AnswerLate(Datagram& dgram);
  // Through the pacer when the reply spans frames, else at once.
  void Send(Datagram& dgram, xdr::BufferChain reply);
  // File segments are spliced or, failing that, read into memory first.
  void SendNow(const Datagram& dgram, xdr::BufferChain& reply);
  enum class Spliced { kSent, kDropped, kInMemory };
  Spliced SendSpliced(const msghdr& address, uint32_t mtu, xdr::BufferChain& reply);
  bool Splicing() const {
    return sendfile_ && !splice_paused_.load(std::memory_order_acquire) &&
           !splice_held_.load(std::memory_order_acquire);
  }

  boost::asio::ip::udp::socket socket_;
  RpcService* service_;
  WorkerPools workers_;
  MtuCache* mtu_;
  InflightLimit* limit_;
  std::atomic<uint64_t>* receive_count_;  // RpcServerOptions::receive_count
  int fd_;                                // fixed for the listener's life; workers send on it
  bool v6_;
  uint16_t port_ = 0;
  sockaddr_storage bound_{};
  socklen_t bound_len_ = 0;
  int rcvbuf_ = 0, sndbuf_ = 0;               // effective, as the kernel reports them
  std::vector<uint8_t> recv_buf_;             // kRecvBatch datagrams of up to 64 KiB
  std::unique_ptr<UdpPacer> pacer_;           // null: pacing off
  bool paused_ = false;                       // on the io thread
  InlineDataGuard inline_data_guard_{"udp"};  // on the io thread
  const bool sendfile_;                       // READs may leave file segments for SendNow
  // Splicing is on when sendfile_ and neither of these.
  std::atomic<bool> splice_paused_ = false;  // Pause .. Resume
  std::atomic<bool> splice_held_;            // adopted, until AllowSplicing
  // Guards the socket's pending datagram rather than a member: a spliced
  // reply is sent holding it exclusively, every other send shared (sends of
  // whole datagrams may overlap one another, never a pending one). Taken
  // only when sendfile_.
  absl::Mutex send_mu_;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_UDP_SERVER_H_
