// RPC over TCP: a listener per address and a connection object per client.
// Connections pipeline: they keep reading records while earlier calls run on
// the worker pool, and write replies in whatever order the calls finish.
// Reading runs on the connection's strand. Replies are written by the thread
// that finished the call (a worker, or the strand for inline calls), one
// writer at a time per connection, without a hop back to the io thread; only
// a full socket hands the rest of the writing to the strand.
#ifndef NFS3D_RPC_TCP_SERVER_H_
#define NFS3D_RPC_TCP_SERVER_H_

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ip/v6_only.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/thread_pool.hpp"

#include "rpc/call_context.h"
#include "rpc/connection_security.h"
#include "rpc/inline_data_guard.h"
#include "rpc/record_marker.h"
#include "rpc/running_call.h"
#include "rpc/service.h"
#include "rpc/splice_pipe.h"
#include "rpc/tcp_reply_writer.h"
#include "rpc/tcp_sendfile.h"
#include "rpc/tls/tls_credentials.h"
#include "rpc/tls/tls_session.h"
#include "rpc/worker_pools.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {

struct TcpOptions {
  size_t max_record_size = (1 << 20) + (64 << 10);
  size_t max_connections = 1024;
  size_t max_inflight_per_connection = 64;
  // Replies may carry file segments, sent with sendfile (READ over TCP).
  TcpSendfile sendfile = TcpSendfile::kOff;
  std::atomic<uint64_t>* receive_count = nullptr;   // RpcServerOptions::receive_count
  std::atomic<uint64_t>* admitted_count = nullptr;  // RpcServerOptions::tcp_admitted_count
  // WRITEs with at least this many data bytes have their data spliced from
  // the socket into a pipe and from there into the file, never copied into
  // memory (rpc/write_splice.h); 0: never.
  size_t splice_writes = 0;
  // A connection inside a record of which no byte arrived for this long is
  // closed (knfsd closes such connections too); 0: never.
  int64_t record_timeout_ms = 30000;
  // Bytes of records begun and not finished that the connections of one
  // client address (an IPv6 /64) may hold together; a connection that would
  // take more is closed. Never below max_record_size.
  size_t unfinished_per_client = 64 << 20;
  // RPC-with-TLS (RFC 9289, rpc/tcp_tls.cc): an AUTH_TLS probe is answered
  // with STARTTLS and the connection goes on in TLS; null: probes are
  // answered as by a server without TLS.
  std::shared_ptr<const tls::TlsCredentials> tls;
  // A connection whose handshake has not completed this long after the probe
  // is closed. It holds no call slot meanwhile.
  int64_t tls_handshake_timeout_ms = 10000;
};

// Bounds the calls handed to the worker pool (queued or running) across
// every listener of a server, so a flood of UDP datagrams or many pipelining
// connections cannot queue unbounded work and memory. UDP drops what does
// not fit; TCP connections stop reading until there is room. One client
// address (an IPv6 /64) holds at most per_client of the slots, so a host's
// calls, however many connections carry them, leave room for the others.
// Clients are counted in kClientBuckets buckets by a hash of the address: two
// hosts rarely share one (and then share its room).
class InflightLimit {
 public:
  static constexpr size_t kClientBuckets = 4096;

  // per_client 0 (or above limit): no bound per client.
  explicit InflightLimit(size_t limit, size_t per_client = 0)
      : limit_(limit == 0 ? 1 : limit),
        per_client_(per_client == 0 || per_client > limit_ ? limit_ : per_client) {}
  InflightLimit(const InflightLimit&) = delete;
  InflightLimit& operator=(const InflightLimit&) = delete;

  // The client a peer address counts as: the IPv4 address (also v4-mapped)
  // or the /64 of an IPv6 one (a host holds a whole /64).
  static uint64_t ClientOf(const sockaddr_storage& peer);
  // The bucket of kClientBuckets a client counts in.
  static size_t BucketOf(uint64_t client);

  bool TryAcquire(uint64_t client) {
    std::atomic<size_t>& held = held_[BucketOf(client)];
    if (held.fetch_add(1, std::memory_order_acq_rel) >= per_client_) {
      held.fetch_sub(1, std::memory_order_acq_rel);
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (count_.fetch_add(1, std::memory_order_acq_rel) >= limit_) {
      count_.fetch_sub(1, std::memory_order_acq_rel);
      held.fetch_sub(1, std::memory_order_acq_rel);
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void Release(uint64_t client) {
    count_.fetch_sub(1, std::memory_order_acq_rel);
    held_[BucketOf(client)].fetch_sub(1, std::memory_order_acq_rel);
  }

  size_t limit() const { return limit_; }
  size_t per_client() const { return per_client_; }
  size_t count() const { return count_.load(std::memory_order_relaxed); }
  // Times a call had to wait (TCP) or was dropped (UDP) at the limit.
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  const size_t limit_;
  const size_t per_client_;
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> refused_{0};
  std::array<std::atomic<size_t>, kClientBuckets> held_{};
};

class TcpConnection;

// A connection given up for another process (nfs3d --takeover): its socket
// and the bytes read from it that no call has run yet (the start of a record,
// whole records not yet dispatched), as stream bytes with their record marks.
// A connection in TLS crosses only when its records are the kernel's (kTLS):
// the keys and sequence numbers are state of the socket and go with it;
// `tls` is what the connection keeps of the session besides (mode kNone:
// plain RPC).
struct HandedConnection {
  int fd = -1;  // the receiver owns it
  std::string pending;
  ConnectionSecurity tls;
};

// Everything connections share; owned by the server and outliving every
// connection (connections unregister themselves when destroyed).
class TcpContext {
 public:
  TcpContext(RpcService* service, WorkerPools workers, const TcpOptions& options,
             InflightLimit* limit = nullptr)
      : service_(service), workers_(workers), options_(options), limit_(limit), tls_(options.tls) {}

  RpcService* service() const { return service_; }
  const WorkerPools& workers() const { return workers_; }
  void set_workers(WorkerPools workers) { workers_ = workers; }
  const TcpOptions& options() const { return options_; }
  // The server-wide bound on calls at the workers; null: unbounded.
  InflightLimit* limit() const { return limit_; }
  // The credentials new TLS handshakes use: TcpOptions::tls, replaced by
  // set_tls on a reload (sessions already made keep theirs). Only when
  // TcpOptions::tls is set: TLS is not turned on or off while running.
  std::shared_ptr<const tls::TlsCredentials> tls() const {
    std::lock_guard<std::mutex> lock(tls_mu_);
    return tls_;
  }
  void set_tls(std::shared_ptr<const tls::TlsCredentials> tls) {
    std::lock_guard<std::mutex> lock(tls_mu_);
    tls_ = std::move(tls);
  }

  // Admits a new connection. At max_connections it first closes an open
  // connection that is idle (no call in progress, no reply unsent; a record
  // still arriving holds none) as knfsd does: clients reconnect
  // transparently. It takes one of the client address with the most
  // connections, the longest idle of those, so a host that opens many cannot
  // push out the others. Refuses the new one only when every open connection
  // is busy. `client`: conn->client() (a parameter so the per-client
  // accounting runs without sockets in tests/fuzz/tcp_admission_fuzz.cc).
  bool Add(TcpConnection* conn, uint64_t client, std::weak_ptr<TcpConnection> weak);
  void Remove(TcpConnection* conn);
  size_t size() const;
  // Sets the bytes `conn` holds of a record not yet finished. False (nothing
  // changed) when growing to `bytes` would take its client address past
  // TcpOptions::unfinished_per_client.
  bool HoldUnfinished(TcpConnection* conn, size_t bytes);
  // Connections closed to make room for new ones.
  uint64_t evicted() const { return evicted_.load(std::memory_order_relaxed); }
  // Closes every open connection. Only while no io thread runs.
  void CloseAllNow();
  std::vector<std::shared_ptr<TcpConnection>> OpenConnections() const;
  // Records `conn`'s RPC-with-TLS state (at the end of its handshake).
  void SetSecurity(TcpConnection* conn, ConnectionSecurity security);
  // Every open connection's peer and TLS state, for operators.
  std::vector<TcpConnectionView> Connections() const;

 private:
  RpcService* service_;
  WorkerPools workers_;
  TcpOptions options_;
  InflightLimit* limit_;
  struct Open {
    std::weak_ptr<TcpConnection> weak;
    uint64_t client = 0;          // TcpConnection::client()
    size_t unfinished = 0;        // HoldUnfinished
    ConnectionSecurity security;  // SetSecurity
  };
  // What the connections from one client address hold together.
  struct Client {
    size_t connections = 0;
    size_t unfinished = 0;
  };
  // Picks the connection Add closes; null when none is idle.
  // The connections it looked at go to *looked_at: they must be released
  // after mu_ is (the last reference runs the destructor, which locks it).
  TcpConnection* PickVictim(std::vector<std::shared_ptr<TcpConnection>>* looked_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  mutable std::mutex mu_;
  std::unordered_map<TcpConnection*, Open> open_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Client> clients_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> evicted_{0};
  mutable std::mutex tls_mu_;
  std::shared_ptr<const tls::TlsCredentials> tls_ ABSL_GUARDED_BY(tls_mu_);
};

class TcpConnection : public std::enable_shared_from_this<TcpConnection>, public EarlyAnswerer {
 public:
  using Socket = boost::asio::ip::tcp::socket;  // its executor is a strand

  TcpConnection(Socket socket, TcpContext* context);
  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  // Starts reading (on the strand).
  void Start();
  // Shuts the connection down from outside the strand; only while no io
  // thread runs.
  void CloseNow() { DoClose(); }
  // Idle: no call read whose reply is not yet written, nothing unsent. Its
  // last read ended at *last_active (steady clock, ns).
  bool Idle(int64_t* last_active) const;
  // Closes the connection on its strand if it is still idle then (another
  // connection needs its place).
  void CloseIfIdle();
  // The client address it counts against (the per-client bounds of
  // TcpContext and InflightLimit): InflightLimit::ClientOf its peer.
  uint64_t client() const { return client_; }
  // The client's address and port: set when made, never changed.
  const sockaddr_storage& peer() const { return info_.peer; }

  // Handing the connection to another process (rpc/tcp_handover.cc).
  // From any thread: no call is read any more (bytes already read stay).
  void StopReadingForHandover();
  enum class HandOverStep : uint8_t { kNotYet, kHanded, kClosed };
  // On the strand, after StopReadingForHandover: once every call read has
  // been answered and its reply written whole, gives up the socket (*out).
  // kNotYet: calls still run or replies are unsent; kClosed: it closed.
  HandOverStep TryHandOver(HandedConnection* out);
  // Posts TryHandOver to the strand; `done` runs there with its outcome.
  void PostTryHandOver(std::function<void(HandOverStep, HandedConnection)> done);
  // Bytes a predecessor read from this socket and did not run: read before
  // the socket's. Before Start.
  void SetPending(std::string_view pending);
  // The predecessor's TLS session on this socket, whose records the kernel
  // keeps: served as after its handshake here. An error (the connection
  // must be closed) when the socket has no kernel TLS. Before Start.
  absl::Status SetHandedTls(const ConnectionSecurity& tls);
  // Shows that session in the context's connection table, once Add put the
  // connection there.
  void PublishSecurity() { context_->SetSecurity(this, tls_security_); }

  // EarlyAnswerer: answers the call now through WorkerPools::late, on the
  // pool it runs on, and takes the rest of its metadata batch along.
  void AnswerEarly(RunningCall& call) override;

 private:
  using Batch = std::vector<std::vector<uint8_t>>;
  // How a call run by RunCall ended.
  enum class Outcome : uint8_t {
    kNoReply,
    kReply,
    kAnsweredEarly,  // answered by AnswerEarly: its own reply is dropped
  };
  struct Reply {
    std::array<uint8_t, 4> mark;
    xdr::BufferChain body;
  };
  // WRITE data of a record kept in a pipe: record bytes [begin, begin + size).
  struct PipedHole {
    SplicePipe pipe;
    size_t begin = 0;
    size_t size = 0;
  };
  enum class SpliceStep : uint8_t {
    kNo,         // this record's data is not spliced (any more): read on as usual
    kShortHead,  // a WRITE's head is not all in memory yet: read a little more
    kWaiting,    // a wait is pending, or the connection ended
  };

  // The steady clock in ns (last_active_ns_, the unfinished record's watch).
  static int64_t SteadyNowNs();

  // ---- Reading, on the strand.
  void ReadMore();
  // Feeds buffered bytes to the reassembler and dispatches whole records
  // until the in-flight bound; true when the buffer is used up.
  bool ProcessBuffered();
  // ProcessBuffered's loop, without FlushBatches. Ends the turn after
  // kCallsPerTurn calls (YieldTurn).
  bool FeedBuffered();
  // What became of a whole record.
  enum class Dispatched {
    kWaits,        // for a server-wide slot (or it was an AUTH_TLS probe)
    kYes,          // run here if small, else posted to a worker
    kUsedTheTurn,  // a READ or WRITE run on the io thread: the turn is over
  };
  // The calls of this turn after one more was dispatched.
  static size_t TurnAfter(size_t this_turn, Dispatched dispatched);
  // Lets the other connections of this io thread run, then reads on.
  void YieldTurn();
  void OnRead(const boost::system::error_code& ec, size_t n);
  // Reads a big fragment body straight into the record; false when the
  // reassembler is not inside one (then read_buf_ is used).
  bool StartDirectRead(size_t max = SIZE_MAX);
  // StartDirectRead's socket is readable: room is made in the record for the
  // bytes queued (at most `room`) and they are read into it.
  void ReadDirect(size_t room);
  // Dispatches the record the reassembler completed once a server-wide slot
  // is free; kWaits (and a retry shortly) while there is none. Records take
  // a slot only when whole: a record that stops arriving holds none.
  Dispatched DispatchCompleted();
  // Reports what the unfinished record holds to the context and watches it
  // for a stall; false when it closed the connection (over its client's
  // share).
  bool AccountUnfinished();
  // Charges the unfinished record at `bytes`; closes and returns false over
  // the client's share.
  bool HoldUnfinished(size_t bytes);
  // Closes the connection when no byte of its unfinished record arrived for
  // TcpOptions::record_timeout_ms; rearms while the record is unfinished.
  void WatchUnfinished();
  void OnUnfinishedTimer();
  // The record's progress: bytes in it plus bytes queued on the socket.
  size_t UnfinishedProgress();
  // Splices the data of a big WRITE from the socket into a pipe (see
  // rpc/write_splice.h and TcpOptions::splice_writes).
  SpliceStep StartSplice();
  // Decides whether the record being read is a WRITE to splice.
  SpliceStep BeginSplice();
  // Splices until the data's end, a wait or an error.
  SpliceStep SpliceSome();
  // The pipe is full: moves its bytes into the record; false on error.
  bool SpillPipe();
  // Dispatches the record the reassembler completed, with its piped data.
  Dispatched DispatchRecord();
  void OnDirectRead(const boost::system::error_code& ec, size_t n);
  // Advances TcpOptions::receive_count after a read, before its calls run.
  void NoteReceived();
  // SO_RCVLOWAT: the socket reads as ready only once `bytes` are queued (or
  // at EOF, an error, or a closed receive window: the kernel never lets the
  // mark deadlock a connection).
  void SetReadLowWater(int bytes);
  // Runs a NULL/GETATTR here (or a READ/WRITE while no core is spare), adds
  // a metadata call to metadata_batch_, or posts the call alone to its pool.
  Dispatched Dispatch(std::vector<uint8_t> record, std::unique_ptr<PipedHole> piped = nullptr);
  // Posts metadata_batch_ to the metadata pool as one task.
  void FlushMetadataBatch();
  // Writes the replies of inline calls queued since the last flush.
  void FlushInlineReplies();
  // Both flushes. Called whenever the reader stops feeding records, so no
  // batched call or reply waits for a read.
  void FlushBatches();
  // Runs one call. `pool`: the worker pool running it (null: the strand;
  // never answered early), `batch` and `index`: its metadata batch.
  Outcome RunCall(std::vector<uint8_t> record, xdr::BufferChain* reply, PipedHole* piped = nullptr,
                  boost::asio::thread_pool* pool = nullptr, Batch* batch = nullptr,
                  size_t index = 0);
  // Runs a metadata batch on `pool` and delivers its replies together.
  void RunBatch(Batch batch, boost::asio::thread_pool* pool);
  // Runs a call answered early through WorkerPools::late; false: no reply.
  bool AnswerLate(absl::Span<const uint8_t> message, xdr::BufferChain* reply);
  // At the server-wide in-flight limit: try reading records again shortly.
  void WaitForCapacity();
  // True while this connection may not read more calls: its in-flight bound
  // is reached, or replies the client has not taken exceed the budget (a
  // client that does not read its replies gets no more calls read).
  bool AtCallLimit() const;
  // Marks the reader as waiting for replies to drain; false if they drained
  // meanwhile (then read on).
  bool WaitForReplies();
  void MaybeFinish();
  void DoClose();
  // On the strand: waits until the socket takes more, then WriteLoop.
  void WaitWritable();
  // TryHandOver for a connection whose TLS records the relay keeps in this
  // process: once idle, it is ended cleanly (rpc/tcp_handover.cc).
  HandOverStep EndRelayForHandover();

  // ---- RPC-with-TLS, on the strand (rpc/tcp_tls.cc).
  // The record completed is an AUTH_TLS probe this connection takes: it is
  // answered with STARTTLS and the handshake begins; true when it did (no
  // more records are read until the handshake is over).
  bool TakeTlsProbe();
  void StepHandshake();
  void OnHandshakeDone();
  // After a read failed with EIO on a kTLS socket: logs what the next record
  // is (an alert, a KeyUpdate) before the connection closes.
  void NoteTlsControlRecord();

  // ---- Writing, on any thread.
  // Hands over the reply of a finished call.
  void Deliver(Outcome outcome, xdr::BufferChain reply);
  // Deliver for several calls at once: their replies go out together.
  struct Finished {
    Outcome outcome = Outcome::kNoReply;
    xdr::BufferChain reply;
  };
  void DeliverAll(std::vector<Finished> finished);
  // Queues a reply; true if the caller must now run the writer.
  bool Enqueue(bool send, xdr::BufferChain reply);
  // Writes queued replies until none are left or the socket is full; only
  // the thread that set writer_busy_ runs it.
  void WriteLoop();
  // Accounts n calls whose replies are written or dropped; wakes the reader
  // if it waits for that.
  void FinishCalls(size_t n);
  // After a write error: drops every queued reply and closes.
  void FailWrites(const boost::system::error_code& ec);
  // Accounts the batch just written (or dropped); returns its call count.
  size_t ReleaseBatch();
  // Drops the queued replies and ends the writer's turn; returns how many.
  size_t DropQueued() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  Socket socket_;
  TcpContext* context_;
  TransportInfo info_;
  // Reader state, touched only on the strand.
  RecordReassembler reassembler_;
  std::vector<uint8_t> read_buf_;
  size_t buffered_begin_ = 0;  // read_buf_[begin, end) is read but not yet fed
  size_t buffered_end_ = 0;
  bool reading_ = false;
  bool eof_ = false;
  bool handing_over_ = false;  // StopReadingForHandover: read no more calls
  int read_low_water_ = 1;     // the socket's SO_RCVLOWAT
  bool waiting_capacity_ = false;
  bool turn_yielded_ = false;  // a ReadMore is posted behind the other connections
  boost::asio::steady_timer capacity_timer_;
  uint64_t client_ = 0;  // client()
  // The unfinished record: what it holds (HoldUnfinished), its watch
  // (WatchUnfinished): progress last seen and when it changed (0: no record
  // watched).
  size_t held_unfinished_ = 0;
  boost::asio::steady_timer record_timer_;
  bool record_timer_armed_ = false;
  size_t unfinished_mark_ = 0;
  int64_t unfinished_since_ns_ = 0;
  std::vector<std::vector<uint8_t>> metadata_batch_;  // read, not yet posted
  // The record being read, when it is a WRITE whose data is spliced: bytes
  // [hole.begin, hole.begin + hole.size) are in hole.pipe, the rest in the
  // record; splicing stops at record byte `stop`.
  struct {
    bool decided = false;  // the record's head was looked at
    bool active = false;   // data is being spliced
    size_t stop = 0;
    PipedHole hole;
  } splice_;
  bool after_splice_ = false;   // the last record had a hole: read in small pieces
  InlineBudget inline_budget_;  // of the current read
  // Whether READs and UNSTABLE WRITEs may run on the io thread (Dispatch).
  InlineDataGuard inline_data_guard_{"tcp"};
  // RPC-with-TLS: the session during the handshake (then the kernel's or
  // the relay's: rpc/tls/tls_relay.h), its deadline, and whether records are
  // the kernel's.
  std::unique_ptr<tls::TlsSession> tls_session_;
  std::unique_ptr<boost::asio::steady_timer> tls_deadline_;
  bool tls_handshaking_ = false;
  bool kernel_tls_ = false;
  ConnectionSecurity tls_security_;  // the session, kept for the table and a handover
  bool relay_ending_ = false;        // EndRelayForHandover shut the plain end
  // Inline replies queued while the reader holds the writer's turn
  // (writer_busy_) for them; 0: it does not hold it.
  size_t held_inline_replies_ = 0;
  // Shared by reader and writers.
  std::atomic<bool> closed_{false};
  std::atomic<bool> reader_waiting_{false};  // FinishCalls must wake the reader
  std::atomic<size_t> inflight_{0};      // records read whose reply is not yet written (or dropped)
  std::atomic<size_t> unsent_bytes_{0};  // reply bytes queued or being written
  std::atomic<int64_t> last_active_ns_{0};  // steady clock at the last read
  std::mutex write_mu_;
  std::deque<Reply> queue_ ABSL_GUARDED_BY(write_mu_);
  bool writer_busy_ ABSL_GUARDED_BY(write_mu_) = false;
  // Only the busy writer touches these.
  std::vector<Reply> writing_;  // the batch being written
  TcpReplyWriter writer_;       // writes writing_
};

// Accepts connections on one address; each new connection goes to the io
// context `pick` returns (round-robin over the server's io threads).
class TcpListener {
 public:
  static absl::StatusOr<std::unique_ptr<TcpListener>> Create(
      boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
      std::function<boost::asio::io_context&()> pick, TcpContext* context);
  // A listening socket bound by another process (a predecessor handing its
  // sockets over); takes the descriptor.
  static absl::StatusOr<std::unique_ptr<TcpListener>> Adopt(
      boost::asio::io_context& io, int fd, std::function<boost::asio::io_context&()> pick,
      TcpContext* context);

  uint16_t port() const { return port_; }
  // Whether a connection with this local end came through this listener.
  bool Serves(const boost::asio::ip::tcp::endpoint& local);
  int native_handle() { return acceptor_.native_handle(); }
  void Start();
  // Stops accepting until Resume (new clients wait in the backlog); the
  // connections already accepted go on. On the io thread: Pause returns once
  // no accept is pending any more. Only after Start.
  void Pause();
  void Resume();
  // Only while no io thread runs.
  void CloseNow();

 private:
  TcpListener(boost::asio::ip::tcp::acceptor acceptor,
              std::function<boost::asio::io_context&()> pick, TcpContext* context);
  void Accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  std::function<boost::asio::io_context&()> pick_;
  TcpContext* context_;
  uint16_t port_ = 0;
  bool paused_ = false;  // on the io thread
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_TCP_SERVER_H_
