// A pipelining ONC RPC client: many calls outstanding on one TCP connection
// or one UDP socket, replies matched by xid in any order. It is driven by the
// caller's thread (Poll), so a benchmark keeps N calls in flight from reply
// callbacks without locks. Every wait is bounded: UDP calls are retransmitted
// with exponential backoff and fail after call_timeout; a TCP call fails after
// call_timeout too, and all calls fail at once when the connection breaks.
#ifndef NFS3D_CLIENT_ASYNC_RPC_CLIENT_H_
#define NFS3D_CLIENT_ASYNC_RPC_CLIENT_H_

#include <sys/socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "client/call_security.h"
#include "client/tls_transport.h"
#include "rpc/call_context.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::client {

struct AsyncRpcOptions {
  rpc::Transport transport = rpc::Transport::kTcp;
  absl::Duration connect_timeout = absl::Seconds(5);
  // A call with no reply after this long fails with DeadlineExceeded.
  absl::Duration call_timeout = absl::Seconds(30);
  // UDP: first retransmit after udp_timeout, doubling up to udp_max_timeout.
  absl::Duration udp_timeout = absl::Seconds(1);
  absl::Duration udp_max_timeout = absl::Seconds(8);
  rpc::Credential cred;  // kAuthNone or kAuthSys
  // RPCSEC_GSS and the like: builds every call and opens every reply (then
  // `cred` is unused). UDP retransmissions resend the same message, which
  // RPCSEC_GSS servers drop as replays: a lost datagram is a timeout.
  CallSecurity* security = nullptr;
  bool reserved_port = false;   // source port < 1024 (root only)
  int socket_buffer = 8 << 20;  // SO_SNDBUF/SO_RCVBUF wish (forced when root)
  // TCP: one sendmsg per call, as the Linux client sends (default: as many
  // queued calls as one sendmsg takes, which saves the client CPU).
  bool send_per_call = false;
  // TCP: RPC-with-TLS (client/tls_transport.h) when tls->ca is set.
  const TlsClientOptions* tls = nullptr;
};

struct AsyncRpcStats {
  uint64_t calls = 0;          // started
  uint64_t replies = 0;        // completed with a reply (any accept_stat)
  uint64_t retransmits = 0;    // UDP datagrams sent again
  uint64_t timeouts = 0;       // calls failed after call_timeout
  uint64_t stale_replies = 0;  // replies to calls already answered (UDP duplicates)
  uint64_t bytes_sent = 0;     // RPC messages incl. TCP record marks
  uint64_t bytes_received = 0;
  absl::Duration total_latency;  // sum over replies of first send -> reply
};

// The outcome of one call. results is the procedure's result bytes, valid
// only during the callback; status is not OK for transport failures and for
// RPC-level rejections (PROG_UNAVAIL, GARBAGE_ARGS, AUTH_ERROR, ...).
using ReplyCallback =
    std::function<void(const absl::Status& status, absl::Span<const uint8_t> results)>;

class AsyncRpcClient {
 public:
  // host: numeric IPv4/IPv6 address. TCP connects (bounded by connect_timeout).
  static absl::StatusOr<std::unique_ptr<AsyncRpcClient>> Connect(const std::string& host,
                                                                 uint16_t port,
                                                                 const AsyncRpcOptions& options);
  ~AsyncRpcClient();
  AsyncRpcClient(const AsyncRpcClient&) = delete;
  AsyncRpcClient& operator=(const AsyncRpcClient&) = delete;

  // Queues a call; encode_args writes the procedure arguments. The callback
  // runs later from Poll (never from inside Start), so callbacks may start
  // new calls. Returns the xid.
  uint32_t Start(uint32_t prog, uint32_t vers, uint32_t proc,
                 absl::FunctionRef<void(xdr::Encoder&)> encode_args, ReplyCallback done);
  template <typename Args>
  uint32_t StartCall(uint32_t prog, uint32_t vers, uint32_t proc, const Args& args,
                     ReplyCallback done) {  // NOLINT(performance-unnecessary-value-param): moved on
    return Start(
        prog, vers, proc, [&](xdr::Encoder& e) { Encode(e, args); }, std::move(done));
  }

  // Sends, receives, retransmits and runs callbacks for at most max_wait
  // (returns sooner once something completed). Returns the transport's error
  // once it broke (every call then fails with it).
  absl::Status Poll(absl::Duration max_wait);
  // Polls until no call is outstanding or the deadline passes.
  absl::Status Drain(absl::Time deadline);

  // One call, waited for (bounded by call_timeout); decodes the results with
  // Decode(xdr::Decoder&, Res*) found by ADL. Res must not borrow from the
  // reply. Other outstanding calls progress meanwhile.
  template <typename Args, typename Res>
  absl::Status CallSync(uint32_t prog, uint32_t vers, uint32_t proc, const Args& args, Res* res) {
    bool done = false;
    absl::Status result;
    StartCall(prog, vers, proc, args, [&](const absl::Status& s, absl::Span<const uint8_t> r) {
      done = true;
      result = s;
      if (!s.ok()) return;
      xdr::Decoder d(r);
      if (!Decode(d, res)) result = absl::DataLossError("malformed results");
    });
    absl::Status waited = WaitFor(&done);
    return done ? result : waited;
  }

  size_t outstanding() const { return pending_.size(); }
  const AsyncRpcStats& stats() const { return stats_; }
  bool broken() const { return !broken_.ok(); }
  rpc::Transport transport() const { return options_.transport; }

 private:
  struct Message {
    uint8_t mark[4] = {};  // TCP record mark
    xdr::BufferChain body;
    std::vector<iovec> iov;  // mark (TCP) + body segments
    size_t size = 0;
  };
  struct Pending {
    std::shared_ptr<Message> message;
    ReplyCallback done;
    absl::Time first_sent;
    absl::Time deadline;
    absl::Time retransmit_at;  // UDP
    absl::Duration rto;
    uint32_t security_token = 0;
  };
  struct Outgoing {
    std::shared_ptr<Message> message;
    size_t offset = 0;  // bytes already written (TCP)
  };

  AsyncRpcClient(int fd, const AsyncRpcOptions& options);
  // *token: what options_.security needs to open the reply.
  std::shared_ptr<Message> EncodeCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                      absl::FunctionRef<void(xdr::Encoder&)> encode_args,
                                      uint32_t* token) const;
  absl::Status WaitFor(const bool* done);
  // Writes queued messages until the socket would block.
  absl::Status Flush();
  absl::Status ReadTcp(int* completed);
  absl::Status ReadUdp(int* completed);
  // Handles one reply message; returns true if it completed a call.
  // (RPCSEC_GSS privacy decrypts the message in place.)
  bool HandleReply(absl::Span<uint8_t> message);
  int ExpireTimers(absl::Time now);
  absl::Time NextTimer() const;
  void Break(absl::Status why);
  int RunFailed();

  int fd_;
  AsyncRpcOptions options_;
  bool tcp_;
  uint32_t next_xid_;
  std::unordered_map<uint32_t, Pending> pending_;
  std::deque<Outgoing> send_queue_;
  // Calls to fail from the next Poll (started on a broken client).
  std::vector<std::pair<ReplyCallback, absl::Status>> failed_;
  absl::Status broken_;
  // TCP receive buffer: bytes [rstart_, rend_) are unparsed.
  std::vector<uint8_t> rbuf_;
  size_t rstart_ = 0, rend_ = 0;
  std::string fragments_;  // a multi-fragment record being assembled
  AsyncRpcStats stats_;
};

// Reads a reply header; on success *results is the result bytes of an
// accepted SUCCESS reply. Otherwise a status naming the RPC-level error.
absl::Status ParseReplyHeader(absl::Span<const uint8_t> message, uint32_t* xid,
                              absl::Span<const uint8_t>* results);

}  // namespace nfs3d::client

#endif  // NFS3D_CLIENT_ASYNC_RPC_CLIENT_H_
