#include "rpc/udp_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <future>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "boost/asio/post.hpp"
#include "boost/asio/use_future.hpp"

#include "common/log.h"
#include "rpc/inline_calls.h"
#include "rpc/udp_spliced_reply.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
constexpr size_t kMaxDatagram = 64 << 10;
constexpr int kMaxBatch = 64;   // datagrams read per wake-up before yielding
constexpr int kRecvBatch = 16;  // datagrams per recvmmsg
constexpr size_t kControlBytes = CMSG_SPACE(sizeof(in6_pktinfo)) + CMSG_SPACE(sizeof(in_pktinfo));
constexpr size_t kWorkerBatch = 4;  // calls handed to a worker at once
void SetBuffer(int fd, int force_opt, int opt, size_t bytes) {
  int v = static_cast<int>(bytes);
  // The FORCE variant ignores net.core.[rw]mem_max but needs CAP_NET_ADMIN.
  if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) == 0) return;
  setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
}
}  // namespace

absl::StatusOr<std::unique_ptr<UdpListener>> UdpListener::Create(
    asio::io_context& io, const asio::ip::udp::endpoint& endpoint, RpcService* service,
    WorkerPools workers, MtuCache* mtu, size_t buffer_bytes, InflightLimit* limit,
    std::atomic<uint64_t>* receive_count, const UdpPacingOptions& pacing, bool sendfile) {
  asio::ip::udp::socket socket(io);
  error_code ec;
  socket.open(endpoint.protocol(), ec);
  bool v6 = endpoint.address().is_v6();
  if (!ec && v6) socket.set_option(asio::ip::v6_only(true), ec);
  if (!ec) {
    int fd = socket.native_handle();
    int one = 1;
    int r = v6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one))
               : setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
    if (r != 0) ec = error_code(errno, boost::system::system_category());
    if (buffer_bytes > 0) {
      SetBuffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, buffer_bytes);
      SetBuffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, buffer_bytes);
    }
  }
  if (!ec) socket.bind(endpoint, ec);
  if (!ec) socket.non_blocking(true, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("udp bind on ", endpoint.address().to_string(),
                                               " port ", endpoint.port(), ": ", ec.message()));
  }
  std::unique_ptr<UdpListener> listener(new UdpListener(
      std::move(socket), service, workers, mtu, limit, receive_count, pacing, sendfile, true));
  return listener;
}

absl::StatusOr<std::unique_ptr<UdpListener>> UdpListener::Adopt(
    asio::io_context& io, int fd, RpcService* service, WorkerPools workers, MtuCache* mtu,
    InflightLimit* limit, std::atomic<uint64_t>* receive_count, const UdpPacingOptions& pacing,
    bool sendfile) {
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    close(fd);
    return absl::InvalidArgumentError("inherited udp socket: getsockname failed");
  }
  asio::ip::udp::socket socket(io);
  error_code ec;
  socket.assign(local.ss_family == AF_INET6 ? asio::ip::udp::v6() : asio::ip::udp::v4(), fd, ec);
  if (!ec) socket.non_blocking(true, ec);
  if (ec) {
    if (!socket.is_open()) close(fd);
    return absl::InvalidArgumentError(absl::StrCat("inherited udp socket: ", ec.message()));
  }
  return std::unique_ptr<UdpListener>(new UdpListener(
      std::move(socket), service, workers, mtu, limit, receive_count, pacing, sendfile, false));
}

UdpListener::UdpListener(asio::ip::udp::socket socket, RpcService* service, WorkerPools workers,
                         MtuCache* mtu, InflightLimit* limit, std::atomic<uint64_t>* receive_count,
                         const UdpPacingOptions& pacing, bool sendfile, bool splice_now)
    : socket_(std::move(socket)),
      service_(service),
      workers_(workers),
      mtu_(mtu),
      limit_(limit),
      receive_count_(receive_count),
      fd_(socket_.native_handle()),
      recv_buf_(kRecvBatch * kMaxDatagram),
      sendfile_(sendfile),
      splice_held_(!splice_now) {
  socklen_t len = sizeof(rcvbuf_);
  getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf_, &len);
  len = sizeof(sndbuf_);
  getsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf_, &len);
  if (pacing.mode != UdpPacingOptions::Mode::kOff) pacer_ = std::make_unique<UdpPacer>(pacing);
  error_code ec;
  auto local = socket_.local_endpoint(ec);
  v6_ = local.address().is_v6();
  port_ = local.port();
  bound_len_ = static_cast<socklen_t>(local.size());
  std::memcpy(&bound_, local.data(), local.size());
}

std::string UdpListener::Describe() const {
  return absl::StrCat("SO_RCVBUF ", rcvbuf_, ", SO_SNDBUF ", sndbuf_, ", recvmmsg ", kRecvBatch,
                      ", pacing ", pacer_ ? pacer_->Describe() : std::string("off"), ", sendfile ",
                      sendfile_ ? "on" : "off");
}

void UdpListener::Start() {
  asio::post(socket_.get_executor(), [this] { Wait(); });
}

void UdpListener::Wait() {
  socket_.async_wait(asio::ip::udp::socket::wait_read, [this](const error_code& ec) {
    if (ec || !socket_.is_open() || paused_) return;
    OnReadable();
    if (!paused_) Wait();
  });
}

void UdpListener::Pause() {
  // Returns once the io thread has run it, so no read starts after Pause.
  asio::post(socket_.get_executor(), asio::use_future([this] {
               paused_ = true;
               error_code ec;
               socket_.cancel(ec);
             }))
      .wait();
  splice_paused_.store(true, std::memory_order_release);
  if (sendfile_) {
    absl::MutexLock wait(&send_mu_);  // for a spliced send under way to finish
  }
}

void UdpListener::Resume() {
  splice_paused_.store(false, std::memory_order_release);
  asio::post(socket_.get_executor(), [this] {
    if (!paused_) return;
    paused_ = false;
    Wait();
  });
}

void UdpListener::AllowSplicing() { splice_held_.store(false, std::memory_order_release); }

void UdpListener::OnReadable() {
  // Calls for the workers go out in small batches: one wake-up (and one
  // context switch) per batch instead of per datagram, which dominated the
  // profile of 32 KiB READs (725 -> 1800 MB/s). A batch runs its calls one
  // after another, so a slow call delays at most kWorkerBatch - 1 others of
  // the same wake-up; COMMIT (an fsync) always goes alone. (TCP batches
  // only metadata calls: a pipelined connection's READs and WRITEs must not
  // wait behind one another.) One batch per pool (see WorkerPools).
  WorkerBatches batches;
  InlineBudget inline_budget;  // of this drain
  // One recvmmsg takes up to kRecvBatch datagrams: a burst of WRITE calls
  // leaves the socket's queue in a few system calls instead of one each.
  for (int taken = 0; taken < kMaxBatch;) {
    std::array<mmsghdr, kRecvBatch> msgs{};
    std::array<iovec, kRecvBatch> iovs;
    std::array<sockaddr_storage, kRecvBatch> peers;
    alignas(cmsghdr) uint8_t control[kRecvBatch][kControlBytes];
    for (int i = 0; i < kRecvBatch; ++i) {
      iovs[i] = iovec{recv_buf_.data() + i * kMaxDatagram, kMaxDatagram};
      msghdr& msg = msgs[i].msg_hdr;
      msg.msg_name = &peers[i];
      msg.msg_namelen = sizeof(peers[i]);
      msg.msg_iov = &iovs[i];
      msg.msg_iovlen = 1;
      msg.msg_control = control[i];
      msg.msg_controllen = kControlBytes;
    }
    int n = recvmmsg(fd_, msgs.data(), kRecvBatch, MSG_DONTWAIT, nullptr);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        NFS3D_LOG_DEBUG("udp: recvmmsg: %s", std::strerror(errno));
      }
      break;
    }
    for (int i = 0; i < n; ++i) {
      TakeDatagram(msgs[i].msg_hdr, peers[i], msgs[i].msg_len, inline_budget, batches);
    }
    taken += n;
    if (n < kRecvBatch) break;  // the queue is empty
  }
  FlushBatch(batches.data);
  FlushBatch(batches.metadata);
}

void UdpListener::FlushBatch(std::vector<Datagram>& b) {
  if (b.empty()) return;
  asio::thread_pool* pool = &workers_.For(b.front().data);
  asio::post(*pool, [this, b = std::move(b), pool]() mutable { RunBatch(std::move(b), pool); });
  b = {};
}

void UdpListener::TakeDatagram(msghdr& msg, const sockaddr_storage& peer, size_t n,
                               InlineBudget& inline_budget, WorkerBatches& batches) {
  if (receive_count_ != nullptr) receive_count_->fetch_add(1, std::memory_order_acq_rel);
  // Over the server-wide in-flight bound: drop before copying anything.
  if (limit_ != nullptr && !limit_->TryAcquire(InflightLimit::ClientOf(peer))) return;
  Datagram d;
  d.info.peer = peer;
  // A truncated datagram (MSG_TRUNC) still goes to the service, which drops
  // what does not decode.
  d.info.transport = Transport::kUdp;
  d.info.peer_len = msg.msg_namelen;
  // A READ reply always fits one datagram (nfsd caps UDP READs at 60 KiB).
  d.info.file_segments = Splicing();
  ReadPktinfo(msg, d);
  if (!d.has_local) {
    d.info.local = bound_;
    d.info.local_len = bound_len_;
  }
  const absl::Span<const uint8_t> call(static_cast<const uint8_t*>(msg.msg_iov->iov_base), n);
  if (pacer_ != nullptr) pacer_->NoteCall(d.info.peer, call);
  // A READ or UNSTABLE WRITE on a machine with no core to spare runs here
  // too: handing each to a worker cost about one context switch per call
  // (the worker's wake-up, the io thread's preemption by it). Run here, 32
  // KiB READs and WRITEs over loopback went 1.6x as fast at half the server
  // CPU per GB, and at MTU 9000 and 10 Gbit/s from 62-66 % to 67-94 % of
  // nuttcp's UDP (docs/ab-testing.md, "UDP at MTU 9000").
  const bool data_here =
      !workers_.HasSpareCore() && IsPageCacheCall(call) && inline_data_guard_.MayRun();
  if ((data_here || inline_budget.RunHere(call, workers_.CanSpread(call))) &&
      workers_.MayRunInline(call)) {
    // NULL/GETATTR (see inline_calls.h) and those: answered from this io
    // thread, straight from the receive buffer.
    const absl::Time start = data_here ? absl::Now() : absl::InfinitePast();
    Handle(call, d);
    if (data_here) inline_data_guard_.Note(absl::Now() - start);
    return;
  }
  d.data.assign(call.begin(), call.end());
  const bool alone = WaitsForSync(call);
  std::vector<Datagram>& into = workers_.IsMetadata(call) ? batches.metadata : batches.data;
  if (alone) FlushBatch(into);
  into.push_back(std::move(d));
  if (alone || into.size() >= kWorkerBatch) FlushBatch(into);
}

void UdpListener::ReadPktinfo(msghdr& msg, Datagram& d) const {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
      sockaddr_in local{};
      local.sin_family = AF_INET;
      local.sin_port = htons(port_);
      local.sin_addr = pi.ipi_spec_dst;  // the local address replies should use
      std::memcpy(&d.info.local, &local, sizeof(local));
      d.info.local_len = sizeof(local);
      d.ifindex = pi.ipi_ifindex;
      d.has_local = true;
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
      sockaddr_in6 local{};
      local.sin6_family = AF_INET6;
      local.sin6_port = htons(port_);
      local.sin6_addr = pi.ipi6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(&pi.ipi6_addr)) local.sin6_scope_id = pi.ipi6_ifindex;
      std::memcpy(&d.info.local, &local, sizeof(local));
      d.info.local_len = sizeof(local);
      d.ifindex = static_cast<int>(pi.ipi6_ifindex);
      d.has_local = true;
    }
  }
}

void UdpListener::RunBatch(std::vector<Datagram> batch, asio::thread_pool* pool) {
  for (size_t i = 0; i < batch.size(); ++i) {
    if (Handle(batch[i].data, batch[i], pool, &batch, i)) break;
  }
}

bool UdpListener::Handle(absl::Span<const uint8_t> data, Datagram& d, asio::thread_pool* pool,
                         std::vector<Datagram>* batch, size_t index) {
  d.info.mtu = mtu_->Get(d.ifindex);
  std::optional<RunningCall> running;
  if (pool != nullptr && batch != nullptr && workers_.late != nullptr) {
    running.emplace(this, data, pool, batch, index);
  }
  xdr::BufferChain reply;
  bool send = false;
  try {
    send = service_->HandleCall(data, d.info, &reply);
  } catch (const std::exception& e) {
    NFS3D_LOG_ERROR("udp: service threw: %s", e.what());
  }
  const bool early = running && running->answered();
  running.reset();
  if (limit_ != nullptr) limit_->Release(InflightLimit::ClientOf(d.info.peer));
  if (early) {  // its reply went out already
    if (ExtraWorkers* extra = workers_.ExtraFor(pool)) extra->Released();
    return true;
  }
  if (send) Send(d, std::move(reply));
  return false;
}

void UdpListener::AnswerEarly(RunningCall& call) {
  // The worker is stuck inside this call, so its datagram and the rest of
  // its batch are not touched meanwhile.
  auto& batch = *static_cast<std::vector<Datagram>*>(call.batch());
  Datagram stuck = batch[call.index()];
  std::vector<Datagram> rest;
  for (size_t i = call.index() + 1; i < batch.size(); ++i) rest.push_back(std::move(batch[i]));
  asio::thread_pool* pool = call.pool();
  if (ExtraWorkers* extra = workers_.ExtraFor(pool)) extra->Held();
  asio::post(*pool, [this, stuck = std::move(stuck), rest = std::move(rest), pool]() mutable {
    AnswerLate(stuck);
    if (!rest.empty()) RunBatch(std::move(rest), pool);
  });
}

void UdpListener::AnswerLate(Datagram& d) {
  TransportInfo info = d.info;
  info.answered_early = true;
  xdr::BufferChain reply;
  bool send = false;
  try {
    send = workers_.late->HandleCall(d.data, info, &reply);
  } catch (const std::exception& e) {
    NFS3D_LOG_ERROR("udp: service threw: %s", e.what());
  }
  if (send) Send(d, std::move(reply));
}

// A reply waiting in the pacer: the call's addresses, not its bytes.
class UdpListener::PacedReply : public UdpPacer::Reply {
 public:
  PacedReply(UdpListener* listener, const Datagram& d, xdr::BufferChain reply)
      : listener_(listener), reply_(std::move(reply)) {
    d_.info = d.info;
    d_.ifindex = d.ifindex;
    d_.has_local = d.has_local;
  }
  void Send() override { listener_->SendNow(d_, reply_); }

 private:
  UdpListener* listener_;
  Datagram d_;
  xdr::BufferChain reply_;
};

void UdpListener::Send(Datagram& d, xdr::BufferChain reply) {
  const size_t bytes = reply.size();
  if (pacer_ == nullptr || !UdpPacer::Paces(bytes, d.info.mtu)) {
    SendNow(d, reply);
    return;
  }
  const uint64_t wire = UdpWireBytes(bytes, d.info.mtu, v6_);
  pacer_->Submit(d.info.peer, d.ifindex, wire,
                 std::make_unique<PacedReply>(this, d, std::move(reply)));
}

void UdpListener::SendNow(const Datagram& d, xdr::BufferChain& reply) {
  msghdr msg{};
  msg.msg_name = const_cast<sockaddr_storage*>(&d.info.peer);
  msg.msg_namelen = d.info.peer_len;
  alignas(cmsghdr) uint8_t control[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  if (d.has_local) {
    // Source address = the address the call was sent to.
    msg.msg_control = control;
    cmsghdr* c;
    if (!v6_) {
      msg.msg_controllen = CMSG_SPACE(sizeof(in_pktinfo));
      c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = IPPROTO_IP;
      c->cmsg_type = IP_PKTINFO;
      c->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
      in_pktinfo pi{};
      pi.ipi_spec_dst = reinterpret_cast<const sockaddr_in*>(&d.info.local)->sin_addr;
      std::memcpy(CMSG_DATA(c), &pi, sizeof(pi));
    } else {
      msg.msg_controllen = CMSG_SPACE(sizeof(in6_pktinfo));
      c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = IPPROTO_IPV6;
      c->cmsg_type = IPV6_PKTINFO;
      c->cmsg_len = CMSG_LEN(sizeof(in6_pktinfo));
      in6_pktinfo pi{};
      pi.ipi6_addr = reinterpret_cast<const sockaddr_in6*>(&d.info.local)->sin6_addr;
      pi.ipi6_ifindex = static_cast<unsigned>(d.ifindex);
      std::memcpy(CMSG_DATA(c), &pi, sizeof(pi));
    }
  }
  if (reply.has_file_segments() && SendSpliced(msg, d.info.mtu, reply) != Spliced::kInMemory) {
    return;
  }
  std::vector<iovec> iov;
  reply.AppendIovecs(&iov);
  msg.msg_iov = iov.data();
  msg.msg_iovlen = iov.size();
  for (int attempt = 0; attempt < 2; ++attempt) {
    ssize_t n;
    if (sendfile_) {
      absl::ReaderMutexLock lock(&send_mu_);  // never into a pending datagram
      n = sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
      n = sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    if (n >= 0) return;
    if (errno == EINTR) {
      --attempt;
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) break;
    // Send buffer full: wait briefly once, then drop (the client retransmits).
    pollfd p{fd_, POLLOUT, 0};
    poll(&p, 1, 50);
  }
  NFS3D_LOG_DEBUG("udp: reply of %d bytes dropped: %s", reply.size(), std::strerror(errno));
}

UdpListener::Spliced UdpListener::SendSpliced(const msghdr& address, uint32_t mtu,
                                              xdr::BufferChain& reply) {
  // Within the MTU, UDP_SEGMENT keeps checksum offload (rpc/udp_spliced_reply.h).
  const size_t headers = v6_ ? 48 : 28;
  const uint16_t gso_size =
      mtu != 0 && reply.size() + headers <= mtu ? static_cast<uint16_t>(reply.size()) : 0;
  UdpSplicedReply spliced;
  UdpSplicedReply::Prepared prepared =
      Splicing() ? spliced.Prepare(reply, gso_size) : UdpSplicedReply::Prepared::kCannotSplice;
  if (prepared == UdpSplicedReply::Prepared::kReady) {
    int error = 0;
    {
      absl::MutexLock lock(&send_mu_);  // alone on the socket while the datagram is pending
      if (!Splicing()) {
        prepared = UdpSplicedReply::Prepared::kCannotSplice;  // paused meanwhile
      } else if (spliced.Send(fd_, address, reply)) {
        return Spliced::kSent;
      } else {
        error = errno;
      }
    }
    // Whatever failed (a full send buffer, a path MTU below the interface's
    // for GSO), the datagram is gone: the reply goes from memory instead.
    if (error != 0) {
      NFS3D_LOG_DEBUG("udp: spliced reply of %d bytes failed (%s); sending it from memory",
                      reply.size(), std::strerror(error));
    }
  }
  switch (prepared) {
    case UdpSplicedReply::Prepared::kFileShrank:
      // The reply promises more bytes than the file has now: sending it
      // with zeros in their place would hand the client wrong data. No
      // reply; the client sends the call again and its READ then sees the
      // file as it is (count and eof to match).
      NFS3D_LOG_DEBUG("udp: READ reply dropped: the file shrank before it was sent");
      return Spliced::kDropped;
    case UdpSplicedReply::Prepared::kFailed:
      NFS3D_LOG_DEBUG("udp: READ reply dropped: reading the file: %s", std::strerror(errno));
      return Spliced::kDropped;
    default:
      break;
  }
  reply.ReadFileSegments();
  return Spliced::kInMemory;
}

void UdpListener::CloseNow() {
  pacer_.reset();  // its thread sends on the socket
  error_code ec;
  socket_.close(ec);
}

}  // namespace nfs3d::rpc
