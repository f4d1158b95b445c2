#include "rpc/tcp_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/post.hpp"
#include "boost/asio/strand.hpp"
#include "boost/asio/use_future.hpp"

#include "common/log.h"
#include "rpc/inline_calls.h"
#include "rpc/write_splice.h"
#include "xdr/buffer_pool.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// A connection's read buffer starts small and grows to kReadBufferSize the
// first time a read fills it: thousands of mounts that send a call now and
// then hold 4 KiB each, busy connections read 64 KiB at once.
constexpr size_t kFirstReadBufferSize = 4 << 10;
constexpr size_t kReadBufferSize = 64 << 10;
// Unsent reply bytes at which a connection stops reading calls. Calls already
// in progress may still add their replies (bounded by the in-flight limit).
constexpr size_t kMaxUnsentReplyBytes = 4 << 20;
constexpr int kSendBufferSize = 4 << 20;
// Metadata calls handed to a worker at once (see Dispatch).
constexpr size_t kMetadataBatch = 4;
// Replies of inline calls written together, at most (see Dispatch).
constexpr size_t kInlineReplyBatch = 16;
// Calls a connection's reader dispatches in one turn on its io thread. Then it
// goes to the back of the io thread's queue, so connections sharing the
// thread take turns (round-robin) instead of one with a full read buffer of
// inline GETATTRs running them all while the others wait. 8, not 16: beside
// a client with 256 GETATTRs in flight a light client's p99 was 0.182 ms
// instead of 0.327 (bench/connections.sh --only c, 3 runs each), with the
// busy client as fast; 4 gained no more and cost the busy client 10 %.
constexpr size_t kCallsPerTurn = 8;
// After a spliced WRITE the next record's head is read in pieces this big, so
// that the next WRITE's data is spliced rather than read.
constexpr size_t kHeadRead = 4 << 10;

void FillAddress(const asio::ip::tcp::endpoint& ep, sockaddr_storage* out, socklen_t* len) {
  std::memset(out, 0, sizeof(*out));
  *len = static_cast<socklen_t>(ep.size());
  std::memcpy(out, ep.data(), ep.size());
}
}  // namespace

size_t TcpContext::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_.size();
}

void TcpContext::CloseAllNow() {
  for (auto& c : OpenConnections()) c->CloseNow();
}

std::vector<std::shared_ptr<TcpConnection>> TcpContext::OpenConnections() const {
  std::vector<std::shared_ptr<TcpConnection>> conns;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [raw, open] : open_) {
    if (auto c = open.weak.lock()) conns.push_back(std::move(c));
  }
  return conns;
}

void TcpContext::SetSecurity(TcpConnection* conn, ConnectionSecurity security) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_.find(conn);
  if (it != open_.end()) it->second.security = std::move(security);
}

std::vector<TcpConnectionView> TcpContext::Connections() const {
  std::vector<TcpConnectionView> views;
  std::lock_guard<std::mutex> lock(mu_);
  views.reserve(open_.size());
  // A connection in the table is alive: its destructor leaves the table
  // first, under mu_.
  for (const auto& [raw, open] : open_) views.push_back({raw->peer(), open.security});
  return views;
}

TcpConnection::TcpConnection(Socket socket, TcpContext* context)
    : socket_(std::move(socket)),
      context_(context),
      reassembler_(context->options().max_record_size),
      capacity_timer_(socket_.get_executor()),
      record_timer_(socket_.get_executor()) {
  info_.transport = Transport::kTcp;
  error_code ec;
  auto peer = socket_.remote_endpoint(ec);
  if (!ec) {
    FillAddress(peer, &info_.peer, &info_.peer_len);
    client_ = InflightLimit::ClientOf(info_.peer);
  }
  auto local = socket_.local_endpoint(ec);
  if (!ec) FillAddress(local, &info_.local, &info_.local_len);
  // Replies are small and latency matters; dead clients are reaped.
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  socket_.set_option(asio::socket_base::keep_alive(true), ec);
  // A whole 1 MiB READ reply fits in the send buffer: one writev hands it to
  // the kernel and the io thread moves on, instead of trickling it out as
  // autotuning grows the buffer (READ at 4 in flight ran at 60% of ganesha's
  // rate, which sets 4 MiB too).
  socket_.set_option(asio::socket_base::send_buffer_size(kSendBufferSize), ec);
  // Replies are written with sendmsg/sendfile on the descriptor itself
  // (TcpReplyWriter), which must never block the io thread.
  socket_.native_non_blocking(true, ec);
  // READ over TCP may answer with file segments (sendfile).
  info_.file_segments = SplicesTo(context->options().sendfile, IsLoopbackPeer(info_));
  last_active_ns_.store(SteadyNowNs(), std::memory_order_relaxed);
}

int64_t TcpConnection::SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TcpConnection::~TcpConnection() { context_->Remove(this); }

bool TcpConnection::Idle(int64_t* last_active) const {
  *last_active = last_active_ns_.load(std::memory_order_relaxed);
  return !closed_.load() && inflight_.load() == 0 && unsent_bytes_.load() == 0;
}

void TcpConnection::CloseIfIdle() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    int64_t last_active = 0;
    // A call read since it was picked keeps it open (the table then holds
    // one more than the limit until a connection closes).
    if (self->Idle(&last_active)) self->DoClose();
  });
}

void TcpConnection::Start() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->ReadMore(); });
}

bool TcpConnection::AtCallLimit() const {
  return inflight_.load() >= context_->options().max_inflight_per_connection ||
         unsent_bytes_.load() >= kMaxUnsentReplyBytes;
}

bool TcpConnection::WaitForReplies() {
  // Set the flag, then look again: a writer that finished calls in between
  // either sees the flag (and wakes us) or we see its counts.
  reader_waiting_.store(true);
  return AtCallLimit();
}

void TcpConnection::ReadMore() {
  if (reading_ || eof_ || closed_ || handing_over_ || tls_handshaking_) return;
  // Back-pressure: at the in-flight bound, or with replies piling up unsent,
  // nothing more is read; FinishCalls wakes the reader as replies drain.
  if (AtCallLimit() && WaitForReplies()) return;
  if (!ProcessBuffered() || !AccountUnfinished()) return;
  size_t direct_max = SIZE_MAX;
  switch (StartSplice()) {
    case SpliceStep::kWaiting:
      return;
    case SpliceStep::kShortHead:
      direct_max = kHeadRead;
      break;
    case SpliceStep::kNo:
      break;
  }
  if (StartDirectRead(direct_max)) return;
  reading_ = true;
  SetReadLowWater(1);  // record headers and small calls: any byte will do
  if (read_buf_.empty()) {
    // The read buffer is allocated when the first bytes arrive, so idle
    // connections (1000s of mounts) cost no 64 KiB each.
    socket_.async_wait(asio::socket_base::wait_read,
                       [self = shared_from_this()](const error_code& ec) {
                         self->reading_ = false;
                         if (ec) {
                           self->OnRead(ec, 0);
                           return;
                         }
                         self->read_buf_.resize(kFirstReadBufferSize);
                         self->ReadMore();
                       });
    return;
  }
  // A buffer grown to hold bytes handed over by a predecessor (SetPending)
  // is used up here: back to the usual size.
  if (read_buf_.size() > kReadBufferSize) {
    read_buf_.resize(kReadBufferSize);
    read_buf_.shrink_to_fit();
  }
  // Around spliced WRITEs (this record's, the last one's) reads stay small, so
  // the next WRITE's data is spliced and not read here.
  const size_t want = after_splice_ || splice_.hole.size > 0 ? kHeadRead : read_buf_.size();
  socket_.async_read_some(
      asio::buffer(read_buf_.data(), want),
      [self = shared_from_this()](const error_code& ec, size_t n) { self->OnRead(ec, n); });
}

bool TcpConnection::ProcessBuffered() {
  const bool used_up = FeedBuffered();
  // Whatever stops the feeding (buffer used up, a limit, an error), the
  // calls read so far must run and their replies go out: they are what
  // lifts a limit.
  FlushBatches();
  return used_up;
}

bool TcpConnection::FeedBuffered() {
  size_t this_turn = 0;
  // A record completed earlier may still wait for its slot.
  if (reassembler_.complete()) {
    const Dispatched dispatched = DispatchCompleted();
    if (dispatched == Dispatched::kWaits) return false;
    this_turn = TurnAfter(this_turn, dispatched);
  }
  while (buffered_begin_ < buffered_end_) {
    if (AtCallLimit() && WaitForReplies()) return false;
    if (this_turn >= kCallsPerTurn) {
      YieldTurn();
      return false;
    }
    size_t used = 0;
    auto result = reassembler_.Feed(
        absl::MakeConstSpan(read_buf_.data() + buffered_begin_, buffered_end_ - buffered_begin_),
        &used);
    buffered_begin_ += used;
    if (result == RecordReassembler::Result::kError) {
      NFS3D_LOG_WARNING("tcp: closing connection: %s", reassembler_.error());
      DoClose();
      return false;
    }
    if (result == RecordReassembler::Result::kRecord) {
      const Dispatched dispatched = DispatchCompleted();
      if (dispatched == Dispatched::kWaits) return false;
      this_turn = TurnAfter(this_turn, dispatched);
    }
  }
  return !closed_;
}

TcpConnection::Dispatched TcpConnection::DispatchCompleted() {
  // An accepted AUTH_TLS probe takes no call slot; the handshake follows.
  if (context_->options().tls != nullptr && TakeTlsProbe()) return Dispatched::kWaits;
  InflightLimit* limit = context_->limit();
  if (limit != nullptr && !limit->TryAcquire(client_)) {
    WaitForCapacity();
    return Dispatched::kWaits;
  }
  return DispatchRecord();
}

size_t TcpConnection::TurnAfter(size_t this_turn, Dispatched dispatched) {
  return dispatched == Dispatched::kUsedTheTurn ? kCallsPerTurn : this_turn + 1;
}

void TcpConnection::YieldTurn() {
  if (turn_yielded_) return;  // a turn is already queued
  turn_yielded_ = true;
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->turn_yielded_ = false;
    self->ReadMore();
  });
}

TcpConnection::Dispatched TcpConnection::DispatchRecord() {
  ++inflight_;
  std::unique_ptr<PipedHole> piped;
  if (splice_.hole.size > 0) {
    piped = std::make_unique<PipedHole>(std::move(splice_.hole));
  } else {
    SplicePipe::Put(std::move(splice_.hole.pipe));  // empty (or none)
  }
  after_splice_ = piped != nullptr;
  splice_.hole = PipedHole();
  splice_.decided = splice_.active = false;
  unfinished_since_ns_ = 0;  // a record that is whole has arrived
  return Dispatch(reassembler_.TakeRecord(), std::move(piped));
}

void TcpConnection::WaitForCapacity() {
  if (waiting_capacity_ || closed_) return;
  waiting_capacity_ = true;
  capacity_timer_.expires_after(std::chrono::milliseconds(1));
  capacity_timer_.async_wait([self = shared_from_this()](const error_code&) {
    self->waiting_capacity_ = false;
    self->ReadMore();
  });
}

void TcpConnection::OnRead(const error_code& ec, size_t n) {
  reading_ = false;
  if (closed_) return;
  // Reading was cancelled to hand the connection over: it stays open.
  if (ec == asio::error::operation_aborted && handing_over_) return;
  if (ec) {
    if (ec == asio::error::eof) {
      eof_ = true;
      if (!reassembler_.idle()) NFS3D_LOG_DEBUG("tcp: EOF inside a record");
      MaybeFinish();
    } else {
      if (kernel_tls_ && ec == boost::system::errc::io_error) {
        NoteTlsControlRecord();  // not application data: an alert, a KeyUpdate
      } else if (ec != asio::error::operation_aborted) {
        NFS3D_LOG_DEBUG("tcp: read: %s", ec.message());
      }
      DoClose();
    }
    return;
  }
  NoteReceived();
  last_active_ns_.store(SteadyNowNs(), std::memory_order_relaxed);
  if (n == read_buf_.size() && n < kReadBufferSize) read_buf_.resize(kReadBufferSize);
  buffered_begin_ = 0;
  buffered_end_ = n;
  inline_budget_.Reset();
  ReadMore();
}

void TcpConnection::NoteReceived() {
  std::atomic<uint64_t>* count = context_->options().receive_count;
  if (count != nullptr) count->fetch_add(1, std::memory_order_acq_rel);
}

TcpConnection::Dispatched TcpConnection::Dispatch(std::vector<uint8_t> record,
                                                  std::unique_ptr<PipedHole> piped) {
  const WorkerPools& pools = context_->workers();
  // A READ or UNSTABLE WRITE runs here too while the machine has no core to
  // spare, as over UDP: the worker's wake-up and the reply's way back cost
  // more than the call. 1 MiB calls over loopback, 4 in flight, against the
  // binary before (docs/bench-2026-12-06-1555-tcp-inline-ab.txt): READ 1.32x
  // as fast at 0.81x the server CPU per GB, WRITE (spliced) 1.14x at 0.84x;
  // 16 in flight 1.14x and 0.96x, within the spread. It ends the
  // reader's turn, so the io thread's other connections wait for one such
  // call at most (see FeedBuffered).
  if (!pools.HasSpareCore() && IsPageCacheCall(record) && pools.MayRunInline(record) &&
      inline_data_guard_.MayRun()) {
    const absl::Time start = absl::Now();
    xdr::BufferChain reply;
    const Outcome outcome = RunCall(std::move(record), &reply, piped.get());
    Deliver(outcome, std::move(reply));  // a READ's data goes out here, if the socket takes it
    inline_data_guard_.Note(absl::Now() - start);
    return Dispatched::kUsedTheTurn;
  }
  if (piped != nullptr) {  // a WRITE: for the main pool
    asio::post(*pools.main, [self = shared_from_this(), record = std::move(record),
                             piped = std::move(piped), pool = pools.main]() mutable {
      xdr::BufferChain reply;
      const Outcome outcome = self->RunCall(std::move(record), &reply, piped.get(), pool);
      self->Deliver(outcome, std::move(reply));
    });
    return Dispatched::kYes;
  }
  if (inline_budget_.RunHere(record, pools.CanSpread(record)) && pools.MayRunInline(record)) {
    // NULL/GETATTR run here, on the connection's strand (see inline_calls.h).
    // Their replies are queued and written together when feeding stops:
    // one sendmsg per read of pipelined GETATTRs instead of one per call.
    // The batch is bounded, so the first reply waits for a few calls only.
    xdr::BufferChain reply;
    const bool send = RunCall(std::move(record), &reply) == Outcome::kReply;
    const bool takes_writer = Enqueue(send, std::move(reply));
    if (takes_writer || held_inline_replies_ > 0) ++held_inline_replies_;
    if (held_inline_replies_ >= kInlineReplyBatch) FlushInlineReplies();
    return Dispatched::kYes;
  }
  if (pools.IsMetadata(record)) {
    // Metadata calls that arrive together run as one worker task and their
    // replies go out in one sendmsg: one wake-up and one send per batch
    // instead of per call (CREATE+SETATTR+REMOVE spent a quarter of the
    // server's CPU in futex wake-ups and context switches). A batch is
    // small, so a slow call holds back at most kMetadataBatch - 1 others.
    metadata_batch_.push_back(std::move(record));
    if (metadata_batch_.size() >= kMetadataBatch) FlushMetadataBatch();
    return Dispatched::kYes;
  }
  asio::post(*pools.main,
             [self = shared_from_this(), record = std::move(record), pool = pools.main]() mutable {
               xdr::BufferChain reply;
               const Outcome outcome = self->RunCall(std::move(record), &reply, nullptr, pool);
               self->Deliver(outcome, std::move(reply));
             });
  return Dispatched::kYes;
}

void TcpConnection::FlushMetadataBatch() {
  if (metadata_batch_.empty()) return;
  asio::thread_pool* pool = context_->workers().metadata;
  asio::post(*pool, [self = shared_from_this(), batch = std::move(metadata_batch_),
                     pool]() mutable { self->RunBatch(std::move(batch), pool); });
  metadata_batch_.clear();
}

void TcpConnection::RunBatch(Batch batch, asio::thread_pool* pool) {
  std::vector<Finished> finished(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    finished[i].outcome =
        RunCall(std::move(batch[i]), &finished[i].reply, nullptr, pool, &batch, i);
    if (finished[i].outcome == Outcome::kAnsweredEarly) {
      finished.resize(i + 1);  // the rest of the batch went with it (AnswerEarly)
      break;
    }
  }
  DeliverAll(std::move(finished));
}

void TcpConnection::AnswerEarly(RunningCall& call) {
  // The worker is stuck inside this call, so the call's bytes and the rest
  // of its batch are not touched meanwhile.
  std::vector<uint8_t> copy(call.message().begin(), call.message().end());
  Batch rest;
  if (Batch* batch = static_cast<Batch*>(call.batch())) {
    for (size_t i = call.index() + 1; i < batch->size(); ++i)
      rest.push_back(std::move((*batch)[i]));
  }
  asio::thread_pool* pool = call.pool();
  if (ExtraWorkers* extra = context_->workers().ExtraFor(pool)) extra->Held();
  asio::post(*pool, [self = shared_from_this(), copy = std::move(copy), rest = std::move(rest),
                     pool]() mutable {
    xdr::BufferChain reply;
    const bool send = self->AnswerLate(copy, &reply);
    self->Deliver(send ? Outcome::kReply : Outcome::kNoReply, std::move(reply));
    if (!rest.empty()) self->RunBatch(std::move(rest), pool);
  });
}

bool TcpConnection::AnswerLate(absl::Span<const uint8_t> message, xdr::BufferChain* reply) {
  TransportInfo info = info_;
  info.answered_early = true;
  try {
    return context_->workers().late->HandleCall(message, info, reply);
  } catch (const std::exception& e) {
    NFS3D_LOG_ERROR("tcp: service threw: %s", e.what());
    return false;
  }
}

void TcpConnection::FlushInlineReplies() {
  if (held_inline_replies_ == 0) return;
  held_inline_replies_ = 0;
  WriteLoop();
}

void TcpConnection::FlushBatches() {
  FlushMetadataBatch();
  FlushInlineReplies();
}

TcpConnection::Outcome TcpConnection::RunCall(std::vector<uint8_t> record, xdr::BufferChain* reply,
                                              PipedHole* piped, asio::thread_pool* pool,
                                              Batch* batch, size_t index) {
  std::optional<RunningCall> running;
  if (pool != nullptr && context_->workers().late != nullptr) {
    running.emplace(this, record, pool, batch, index);
  }
  bool send = false;
  try {
    if (piped == nullptr) {
      send = context_->service()->HandleCall(record, info_, reply);
    } else {
      SplicedData spliced;
      spliced.hole = record.data() + piped->begin;
      spliced.size = piped->size;
      spliced.pipe_fd = piped->pipe.read_fd();
      TransportInfo info = info_;
      info.spliced = &spliced;
      send = context_->service()->HandleCall(record, info, reply);
      // A pipe the call did not empty (refused, failed, short) is closed,
      // never reused.
      int left = -1;
      if (ioctl(piped->pipe.read_fd(), FIONREAD, &left) == 0 && left == 0) {
        SplicePipe::Put(std::move(piped->pipe));
      }
    }
  } catch (const std::exception& e) {
    NFS3D_LOG_ERROR("tcp: service threw: %s", e.what());
    send = false;
  }
  const bool early = running && running->answered();
  running.reset();
  // The reply never points into the call, so the buffer can be reused now.
  xdr::VectorPool::Records().Put(std::move(record));
  if (InflightLimit* limit = context_->limit()) limit->Release(client_);
  if (early) {
    if (ExtraWorkers* extra = context_->workers().ExtraFor(pool)) extra->Released();
    reply->Clear();
    return Outcome::kAnsweredEarly;
  }
  return send ? Outcome::kReply : Outcome::kNoReply;
}

void TcpConnection::Deliver(Outcome outcome, xdr::BufferChain reply) {
  if (outcome == Outcome::kAnsweredEarly) return;  // its reply went out already
  if (Enqueue(outcome == Outcome::kReply, std::move(reply))) WriteLoop();
}

void TcpConnection::DeliverAll(std::vector<Finished> finished) {
  bool write = false;
  for (Finished& f : finished) {
    if (f.outcome == Outcome::kAnsweredEarly) continue;  // its reply went out already
    write |= Enqueue(f.outcome == Outcome::kReply, std::move(f.reply));
  }
  if (write) WriteLoop();
}

bool TcpConnection::Enqueue(bool send, xdr::BufferChain reply) {
  if (!send || closed_ || reply.size() > kMaxFragmentLength) {
    FinishCalls(1);
    return false;
  }
  Reply r;
  EncodeRecordMark(static_cast<uint32_t>(reply.size()), /*last=*/true, r.mark.data());
  unsent_bytes_ += reply.size();
  r.body = std::move(reply);
  std::lock_guard<std::mutex> lock(write_mu_);
  queue_.push_back(std::move(r));
  if (writer_busy_) return false;  // the writer takes it with its next batch
  writer_busy_ = true;
  return true;
}

size_t TcpConnection::ReleaseBatch() {
  const size_t n = writing_.size();
  for (const Reply& r : writing_) unsent_bytes_ -= r.body.size();
  writer_.Clear();  // its pieces point into writing_
  writing_.clear();
  return n;
}

size_t TcpConnection::DropQueued() {
  const size_t n = queue_.size();
  for (const Reply& r : queue_) unsent_bytes_ -= r.body.size();
  queue_.clear();
  writer_busy_ = false;
  return n;
}

void TcpConnection::WriteLoop() {
  size_t finished = 0;
  for (;;) {
    if (writer_.done()) {
      // The batch is out: account it and take everything queued since as
      // the next batch (marks and encoded fields gathered into sendmsg, READ
      // data by sendfile; see TcpReplyWriter).
      finished += ReleaseBatch();
      std::lock_guard<std::mutex> lock(write_mu_);
      if (queue_.empty() || closed_) {
        finished += DropQueued();  // nothing, unless closed
        break;
      }
      while (!queue_.empty()) {
        writing_.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      for (const Reply& r : writing_) {
        writer_.Add(r.mark.data(), r.mark.size());
        writer_.Add(r.body);
      }
    }
    // The socket calls run without the lock: only this writer writes.
    int err = 0;
    TcpReplyWriter::Progress p = writer_.WriteSome(socket_.native_handle(), &err);
    if (p == TcpReplyWriter::Progress::kError) {
      FinishCalls(finished);
      FailWrites(error_code(err, boost::system::system_category()));
      return;
    }
    if (p == TcpReplyWriter::Progress::kWouldBlock) {
      // The socket is full: the strand waits until it drains, then this
      // writer (still busy) goes on.
      FinishCalls(finished);
      asio::post(socket_.get_executor(), [self = shared_from_this()] { self->WaitWritable(); });
      return;
    }
  }
  FinishCalls(finished);
}

void TcpConnection::WaitWritable() {
  socket_.async_wait(
      asio::socket_base::wait_write, [self = shared_from_this()](const error_code& ec) {
        if (!ec) {
          self->WriteLoop();
        } else if (ec == asio::error::operation_aborted && self->handing_over_ && !self->closed_) {
          self->WaitWritable();  // cancelled with the reads (handover): the reply goes on
        } else {
          self->FailWrites(ec);
        }
      });
}

void TcpConnection::FailWrites(const error_code& ec) {
  if (ec != asio::error::operation_aborted && !closed_) {
    NFS3D_LOG_DEBUG("tcp: write: %s", ec.message());
  }
  size_t dropped = ReleaseBatch();
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    dropped += DropQueued();
  }
  closed_ = true;
  FinishCalls(dropped);
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->DoClose(); });
}

void TcpConnection::FinishCalls(size_t n) {
  if (n > 0) inflight_ -= n;
  // Wake a reader that stopped for the in-flight bound, the reply budget or
  // to close after EOF (see WaitForReplies).
  if (reader_waiting_.load() && reader_waiting_.exchange(false)) {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      self->ReadMore();
      self->MaybeFinish();
    });
  }
}

void TcpConnection::MaybeFinish() {
  // After the client's EOF, close once every reply it is owed has gone out.
  // (Reading stops only with the read buffer used up, so nothing is pending
  // there.) The flag first: a writer finishing the last call wakes us.
  if (!eof_ || closed_) return;
  reader_waiting_.store(true);
  if (inflight_ == 0) DoClose();
}

void TcpConnection::DoClose() {
  // Only shutdown here: a writer on another thread may still use the
  // descriptor, so it is closed with the socket when the last reference
  // (handlers, workers) lets go of the connection.
  closed_ = true;
  context_->Remove(this);
  capacity_timer_.cancel();
  record_timer_.cancel();
  if (tls_deadline_ != nullptr) tls_deadline_->cancel();
  error_code ec;
  socket_.shutdown(asio::socket_base::shutdown_both, ec);
  socket_.cancel(ec);
}

absl::StatusOr<std::unique_ptr<TcpListener>> TcpListener::Create(
    asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
    std::function<asio::io_context&()> pick, TcpContext* context) {
  asio::ip::tcp::acceptor acceptor(io);
  error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec && endpoint.address().is_v6()) acceptor.set_option(asio::ip::v6_only(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("tcp listen on ", endpoint.address().to_string(),
                                               " port ", endpoint.port(), ": ", ec.message()));
  }
  std::unique_ptr<TcpListener> listener(
      new TcpListener(std::move(acceptor), std::move(pick), context));
  return listener;
}

absl::StatusOr<std::unique_ptr<TcpListener>> TcpListener::Adopt(
    asio::io_context& io, int fd, std::function<asio::io_context&()> pick, TcpContext* context) {
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    close(fd);
    return absl::InvalidArgumentError("inherited tcp listener: getsockname failed");
  }
  asio::ip::tcp::acceptor acceptor(io);
  error_code ec;
  acceptor.assign(local.ss_family == AF_INET6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), fd, ec);
  if (ec) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("inherited tcp listener: ", ec.message()));
  }
  return std::unique_ptr<TcpListener>(
      new TcpListener(std::move(acceptor), std::move(pick), context));
}

TcpListener::TcpListener(asio::ip::tcp::acceptor acceptor, std::function<asio::io_context&()> pick,
                         TcpContext* context)
    : acceptor_(std::move(acceptor)),
      retry_timer_(acceptor_.get_executor()),
      pick_(std::move(pick)),
      context_(context) {
  error_code ec;
  port_ = acceptor_.local_endpoint(ec).port();
}

bool TcpListener::Serves(const asio::ip::tcp::endpoint& local) {
  error_code ec;
  const asio::ip::tcp::endpoint mine = acceptor_.local_endpoint(ec);
  if (ec || mine.port() != local.port() || mine.protocol() != local.protocol()) return false;
  return mine.address().is_unspecified() || mine.address() == local.address();
}

void TcpListener::Start() {
  asio::post(acceptor_.get_executor(), [this] { Accept(); });
}

void TcpListener::Accept() {
  acceptor_.async_accept(asio::make_strand(pick_()), [this](const error_code& ec, auto socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // E.g. EMFILE: retry a little later; the backlog holds the client meanwhile.
      NFS3D_LOG_WARNING("tcp: accept: %s", ec.message());
      retry_timer_.expires_after(std::chrono::milliseconds(100));
      retry_timer_.async_wait([this](const error_code& wait_ec) {
        if (!wait_ec && acceptor_.is_open() && !paused_) Accept();
      });
      return;
    }
    {
      auto conn =
          std::make_shared<TcpConnection>(TcpConnection::Socket(std::move(socket)), context_);
      if (context_->Add(conn.get(), conn->client(), conn)) {
        conn->Start();
      } else {
        NFS3D_LOG_WARNING(
            "tcp: connection limit (%d) reached and every connection is busy; refusing a client",
            context_->options().max_connections);
        conn->CloseNow();
      }
    }
    if (!paused_) Accept();
  });
}

void TcpListener::Pause() {
  // Returns once the io thread has run it, so no accept starts after Pause.
  asio::post(acceptor_.get_executor(), asio::use_future([this] {
               paused_ = true;
               error_code ec;
               acceptor_.cancel(ec);
               retry_timer_.cancel();
             }))
      .wait();
}

void TcpListener::Resume() {
  asio::post(acceptor_.get_executor(), [this] {
    if (!paused_) return;
    paused_ = false;
    Accept();
  });
}

void TcpListener::CloseNow() {
  error_code ec;
  acceptor_.close(ec);
  retry_timer_.cancel();
}

}  // namespace nfs3d::rpc
