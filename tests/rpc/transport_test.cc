// End-to-end tests of the TCP and UDP transports over real loopback sockets,
// with a fake RpcService whose calls say how long to take.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

#include "rpc/record_marker.h"
#include "rpc/rpc_server.h"
#include "rpc/service.h"

namespace nfs3d::rpc {
namespace {

using Clock = std::chrono::steady_clock;

uint32_t GetU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
void PutU32(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>(v >> 24));
  out->push_back(static_cast<char>(v >> 16));
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}

// A call is [xid][delay ms][payload]; the reply is [xid][payload], with the
// payload attached by reference to exercise multi-segment chains. xid
// 0xdeadbeef is dropped.
std::string MakeCall(uint32_t xid, uint32_t delay_ms, const std::string& payload) {
  std::string s;
  PutU32(&s, xid);
  PutU32(&s, delay_ms);
  return s + payload;
}

// An NFSv3 call header (CALL, RPC v2, program 100003 v3, proc) followed by
// [delay ms][payload]: the transports route it as an NFS call (metadata
// calls to their own pool, in batches over TCP), the fake answers it like
// any other call.
std::string MakeNfsCall(uint32_t xid, uint32_t proc, uint32_t delay_ms,
                        const std::string& payload) {
  std::string s;
  for (uint32_t v : {xid, 0u, 2u, 100003u, 3u, proc, delay_ms}) PutU32(&s, v);
  return s + payload;
}
constexpr size_t kNfsHeader = 24;

class FakeService : public RpcService {
 public:
  bool HandleCall(absl::Span<const uint8_t> message, const TransportInfo& transport,
                  xdr::BufferChain* reply) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_info_ = transport;
    }
    ++calls_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads_.insert(std::this_thread::get_id());
      if (message.size() >= 4) order_.push_back(GetU32(message.data()));
    }
    if (message.size() < 8) return false;
    size_t at = 4;  // where [delay ms] starts
    if (message.size() >= kNfsHeader + 4 && GetU32(message.data() + 12) == 100003) {
      at = kNfsHeader;
      ++nfs_calls_;
    }
    uint32_t xid = GetU32(message.data());
    uint32_t delay = GetU32(message.data() + at) + delay_every_call_ms_.load();
    if (delay) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    if (xid == 0xdeadbeef) return false;
    uint8_t head[4];
    std::memcpy(head, message.data(), 4);
    reply->Append(head, 4);
    auto body = std::make_shared<std::vector<uint8_t>>(message.begin() + at + 4, message.end());
    reply->AppendExternal(body, body->data(), body->size());
    return true;
  }

  TransportInfo last_info() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_info_;
  }
  // How many threads have run calls.
  size_t threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_.size();
  }
  // Where the call with this xid came in the order calls started; -1: never.
  int StartedAt(uint32_t xid) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < order_.size(); ++i) {
      if (order_[i] == xid) return static_cast<int>(i);
    }
    return -1;
  }
  std::atomic<int> calls_{0};
  std::atomic<int> nfs_calls_{0};
  std::atomic<uint32_t> delay_every_call_ms_{0};  // added to each call's own

 private:
  std::mutex mu_;
  std::vector<uint32_t> order_;  // xids, as calls started
  TransportInfo last_info_;
  std::set<std::thread::id> threads_;
};

// Minimal blocking TCP client speaking record marking.
class TcpClient {
 public:
  TcpClient(int family, uint16_t port) {
    fd_ = socket(family, SOCK_STREAM, 0);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (family == AF_INET) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    } else {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_port = htons(port);
      a.sin6_addr = in6addr_loopback;
      connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    }
  }
  ~TcpClient() { close(fd_); }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  void SendRaw(const std::string& bytes) {
    ASSERT_EQ(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void SendRecord(const std::string& msg) {
    uint8_t mark[4];
    EncodeRecordMark(static_cast<uint32_t>(msg.size()), true, mark);
    SendRaw(std::string(reinterpret_cast<char*>(mark), 4) + msg);
  }
  // Reads one whole record; nullopt on EOF/error/timeout.
  std::optional<std::string> ReadRecord() {
    std::string out;
    while (true) {
      uint8_t mark[4];
      if (!ReadFull(mark, 4)) return std::nullopt;
      uint32_t v = GetU32(mark);
      std::string frag(v & kMaxFragmentLength, '\0');
      if (!ReadFull(frag.data(), frag.size())) return std::nullopt;
      out += frag;
      if (v & kLastFragmentBit) return out;
    }
  }
  // True when the server closed the connection (EOF or reset) in time.
  bool WaitClosed() {
    char c;
    ssize_t n = recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  bool ReadFull(void* buf, size_t len) {
    auto* p = static_cast<char*>(buf);
    while (len > 0) {
      ssize_t n = recv(fd_, p, len, 0);
      if (n <= 0) return false;
      p += n;
      len -= static_cast<size_t>(n);
    }
    return true;
  }
  int fd_;
  bool connected_ = false;
};

class TransportTest : public ::testing::Test {
 protected:
  void StartServer(RpcServerOptions opts = {}) {
    opts.io_threads = io_threads_;
    opts.worker_threads = 4;
    server_ = std::make_unique<RpcServer>(opts, &service_);
    auto port = server_->ListenTcp("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status();
    tcp_port_ = *port;
    auto uport = server_->ListenUdp("127.0.0.1", 0);
    ASSERT_TRUE(uport.ok()) << uport.status();
    udp_port_ = *uport;
    server_->Start();
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  size_t io_threads_ = 2;
  FakeService service_;
  std::unique_ptr<RpcServer> server_;
  uint16_t tcp_port_ = 0;
  uint16_t udp_port_ = 0;
};

TEST_F(TransportTest, TcpEcho) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  ASSERT_TRUE(c.connected());
  c.SendRecord(MakeCall(7, 0, "payload!"));
  auto r = c.ReadRecord();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(GetU32(reinterpret_cast<const uint8_t*>(r->data())), 7u);
  EXPECT_EQ(r->substr(4), "payload!");
  TransportInfo info = service_.last_info();
  EXPECT_EQ(info.transport, Transport::kTcp);
  ASSERT_EQ(info.local.ss_family, AF_INET);
  EXPECT_EQ(ntohs(reinterpret_cast<sockaddr_in*>(&info.local)->sin_port), tcp_port_);
  EXPECT_EQ(info.peer.ss_family, AF_INET);
}

TEST_F(TransportTest, TcpMultiFragmentCall) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  std::string call = MakeCall(9, 0, std::string(10000, 'z'));
  std::string wire;
  for (size_t off = 0; off < call.size(); off += 3000) {
    std::string frag = call.substr(off, 3000);
    uint8_t mark[4];
    EncodeRecordMark(static_cast<uint32_t>(frag.size()), off + 3000 >= call.size(), mark);
    wire += std::string(reinterpret_cast<char*>(mark), 4) + frag;
  }
  // Dribble it in small pieces.
  for (size_t off = 0; off < wire.size(); off += 777) c.SendRaw(wire.substr(off, 777));
  auto r = c.ReadRecord();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->size(), 4 + 10000u);
}

TEST_F(TransportTest, TcpPipeliningSlowCallDoesNotBlockNext) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  auto start = Clock::now();
  c.SendRecord(MakeCall(1, 1500, "slow"));
  c.SendRecord(MakeCall(2, 0, "fast"));
  auto first = c.ReadRecord();
  auto first_at = Clock::now() - start;
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(GetU32(reinterpret_cast<const uint8_t*>(first->data())), 2u);
  EXPECT_LT(first_at, std::chrono::milliseconds(1000));
  auto second = c.ReadRecord();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(GetU32(reinterpret_cast<const uint8_t*>(second->data())), 1u);
  EXPECT_EQ(second->substr(4), "slow");
}

TEST_F(TransportTest, TcpOutOfOrderRepliesMatchByXid) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  constexpr int kCalls = 40;
  std::map<uint32_t, std::string> want;
  std::string batch;
  for (int i = 0; i < kCalls; ++i) {
    uint32_t xid = 1000 + i;
    std::string payload = "call-" + std::to_string(i) + std::string(i * 37, 'p');
    want[xid] = payload;
    std::string call = MakeCall(xid, (i * 7919) % 50, payload);
    uint8_t mark[4];
    EncodeRecordMark(static_cast<uint32_t>(call.size()), true, mark);
    batch += std::string(reinterpret_cast<char*>(mark), 4) + call;
  }
  c.SendRaw(batch);  // all calls in one write: several records per read
  std::map<uint32_t, std::string> got;
  for (int i = 0; i < kCalls; ++i) {
    auto r = c.ReadRecord();
    ASSERT_TRUE(r.has_value()) << i;
    got[GetU32(reinterpret_cast<const uint8_t*>(r->data()))] = r->substr(4);
  }
  EXPECT_EQ(got, want);
}

TEST_F(TransportTest, TcpInflightBoundSerialisesCalls) {
  RpcServerOptions opts;
  opts.max_inflight_per_connection = 1;
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  c.SendRecord(MakeCall(1, 300, ""));
  c.SendRecord(MakeCall(2, 0, ""));
  auto first = c.ReadRecord();
  ASSERT_TRUE(first.has_value());
  // With one call in flight the second is not even read before the first is answered.
  EXPECT_EQ(GetU32(reinterpret_cast<const uint8_t*>(first->data())), 1u);
  auto second = c.ReadRecord();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(GetU32(reinterpret_cast<const uint8_t*>(second->data())), 2u);
}

// Reads n records and returns their xids.
std::set<uint32_t> ReadXids(TcpClient& c, int n) {
  std::set<uint32_t> xids;
  for (int i = 0; i < n; ++i) {
    auto r = c.ReadRecord();
    if (!r.has_value()) break;
    xids.insert(GetU32(reinterpret_cast<const uint8_t*>(r->data())));
  }
  return xids;
}

constexpr uint32_t kNull = 0;     // runs inline, on the connection's io thread
constexpr uint32_t kGetattr = 1;  // inline too
constexpr uint32_t kSetattr = 2;  // an NFSv3 metadata call
constexpr uint32_t kWrite = 7;    // a data call

// Records of NFSv3 calls with xids 1..n, each of the procedure procs[xid %
// procs.size()], to send in one write.
std::string NfsRecords(uint32_t n, uint32_t max_delay_ms, std::vector<uint32_t> procs) {
  std::string records;
  for (uint32_t xid = 1; xid <= n; ++xid) {
    const std::string msg =
        MakeNfsCall(xid, procs[xid % procs.size()], xid % (max_delay_ms + 1), "m");
    uint8_t mark[4];
    EncodeRecordMark(static_cast<uint32_t>(msg.size()), true, mark);
    records += std::string(reinterpret_cast<char*>(mark), 4) + msg;
  }
  return records;
}

std::set<uint32_t> XidsUpTo(uint32_t n) {
  std::set<uint32_t> xids;
  for (uint32_t xid = 1; xid <= n; ++xid) xids.insert(xid);
  return xids;
}

// Sends n calls (NfsRecords) in one write, so the server reads them
// together, and expects a reply to each.
void ExpectAllAnswered(TcpClient& c, uint32_t n, uint32_t max_delay_ms,
                       std::vector<uint32_t> procs) {
  c.SendRaw(NfsRecords(n, max_delay_ms, std::move(procs)));
  EXPECT_EQ(ReadXids(c, n), XidsUpTo(n));
}

TEST_F(TransportTest, TcpMetadataCallsArrivingTogetherAreAllAnswered) {
  RpcServerOptions opts;
  opts.metadata_threads = 2;
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  // One write: the server reads them together and runs them in batches.
  ExpectAllAnswered(c, 11, /*max_delay_ms=*/2, {kSetattr});
  EXPECT_EQ(service_.nfs_calls_.load(), 11);
}

TEST_F(TransportTest, TcpMetadataBatchIsRunWhenTheInflightBoundStopsReading) {
  // Calls held for a batch count as in flight: if reading stopped at the
  // bound without running them, their replies (which lift the bound) would
  // never come.
  RpcServerOptions opts;
  opts.metadata_threads = 2;
  opts.max_inflight_per_connection = 3;
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  ExpectAllAnswered(c, 10, /*max_delay_ms=*/0, {kSetattr});
}

TEST_F(TransportTest, TcpInlineCallsArrivingTogetherAreAllAnswered) {
  // Their replies are written in batches when the reader stops feeding: a
  // run shorter than a batch and one longer (with a remainder) both arrive.
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  ExpectAllAnswered(c, 3, /*max_delay_ms=*/0, {kNull, kGetattr});
  ExpectAllAnswered(c, 41, /*max_delay_ms=*/0, {kNull, kGetattr});
}

TEST_F(TransportTest, TcpBusyConnectionsGetattrsSpreadOverThreadsWhenCoresAreFree) {
  RpcServerOptions opts;
  opts.metadata_threads = 2;
  opts.spread_inline_calls = true;  // as if a core were idle
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  ExpectAllAnswered(c, 41, /*max_delay_ms=*/0, {kGetattr});
  EXPECT_GE(service_.threads(), 2u);
}

TEST_F(TransportTest, TcpBusyConnectionsGetattrsStayOnItsThreadWhenNoCoreIsFree) {
  RpcServerOptions opts;
  opts.metadata_threads = 2;
  opts.spread_inline_calls = false;
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  ExpectAllAnswered(c, 41, /*max_delay_ms=*/0, {kGetattr});
  EXPECT_EQ(service_.threads(), 1u);
}

// Connections that share an io thread take turns. A client whose read
// buffer is full of GETATTRs (which run on the io thread itself) gets a turn
// of them, then another client's call runs: round-robin between connections,
// not every call of the first read before the second client's one.
TEST_F(TransportTest, TcpBusyConnectionDoesNotStarveAnotherOnItsIoThread) {
  RpcServerOptions opts;
  opts.spread_inline_calls = false;  // every GETATTR runs on the io thread
  io_threads_ = 1;                   // which both connections share
  StartServer(opts);
  TcpClient busy(AF_INET, tcp_port_);
  TcpClient light(AF_INET, tcp_port_);
  constexpr uint32_t kBusyCalls = 300;
  busy.SendRaw(NfsRecords(kBusyCalls, /*max_delay_ms=*/2, {kGetattr}));
  while (service_.calls_.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  constexpr uint32_t kLightXid = 100000;
  light.SendRecord(MakeNfsCall(kLightXid, kGetattr, 0, "l"));
  auto reply = light.ReadRecord();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(GetU32(reinterpret_cast<const uint8_t*>(reply->data())), kLightXid);
  // The server's first read of the busy connection holds about 120 calls
  // (its first read buffer is 4 KiB); one turn is 8 of them.
  const int at = service_.StartedAt(kLightXid);
  EXPECT_GE(at, 1);
  EXPECT_LT(at, 32) << "the light client's call ran after " << at << " of the busy one's";
  EXPECT_EQ(ReadXids(busy, kBusyCalls), XidsUpTo(kBusyCalls));
}

TEST_F(TransportTest, TcpInlineRepliesAreWrittenWhenTheInflightBoundStopsReading) {
  // Inline calls count as in flight until their reply is written, so the
  // replies held for a batch must go out when the bound stops the reader.
  RpcServerOptions opts;
  opts.max_inflight_per_connection = 3;
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  ExpectAllAnswered(c, 10, /*max_delay_ms=*/0, {kGetattr});
}

TEST_F(TransportTest, TcpInlineMetadataAndDataCallsMixedAreAllAnswered) {
  // Workers finishing while the reader holds the writer for inline replies
  // queue theirs behind, and the reader's flush writes them too.
  RpcServerOptions opts;
  opts.metadata_threads = 2;
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  ExpectAllAnswered(c, 60, /*max_delay_ms=*/1, {kNull, kSetattr, kGetattr, kWrite});
  EXPECT_EQ(service_.nfs_calls_.load(), 60);
}

TEST_F(TransportTest, TcpDroppedCallGetsNoReplyButConnectionLives) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  c.SendRecord(MakeCall(0xdeadbeef, 0, ""));
  c.SendRecord(MakeCall(5, 0, "after"));
  auto r = c.ReadRecord();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(GetU32(reinterpret_cast<const uint8_t*>(r->data())), 5u);
}

TEST_F(TransportTest, TcpOversizedRecordClosesConnection) {
  RpcServerOptions opts;
  opts.max_record_size = 4096;
  StartServer(opts);
  TcpClient c(AF_INET, tcp_port_);
  uint8_t mark[4];
  EncodeRecordMark(1 << 20, true, mark);
  c.SendRaw(std::string(reinterpret_cast<char*>(mark), 4));
  EXPECT_TRUE(c.WaitClosed());
  // Other clients are unaffected.
  TcpClient d(AF_INET, tcp_port_);
  d.SendRecord(MakeCall(3, 0, "ok"));
  EXPECT_TRUE(d.ReadRecord().has_value());
}

TEST_F(TransportTest, TcpRepliesOwedAfterClientHalfClose) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  c.SendRecord(MakeCall(11, 200, "late"));
  shutdown(c.fd(), SHUT_WR);
  auto r = c.ReadRecord();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->substr(4), "late");
  EXPECT_TRUE(c.WaitClosed());
}

// At max_connections a newcomer takes the place of the connection that has
// been idle the longest (knfsd's rule): that one is closed, the others and
// the newcomer are served.
TEST_F(TransportTest, TcpMaxConnectionsClosesTheLongestIdle) {
  RpcServerOptions opts;
  opts.max_connections = 2;
  StartServer(opts);
  TcpClient a(AF_INET, tcp_port_);
  a.SendRecord(MakeCall(1, 0, ""));
  ASSERT_TRUE(a.ReadRecord().has_value());
  TcpClient b(AF_INET, tcp_port_);
  b.SendRecord(MakeCall(2, 0, ""));
  ASSERT_TRUE(b.ReadRecord().has_value());
  a.SendRecord(MakeCall(3, 0, ""));  // a is now the more recently active
  ASSERT_TRUE(a.ReadRecord().has_value());
  // A connection counts as idle once the server has accounted its reply,
  // which may be a moment after the client read it (on a loaded machine).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  TcpClient c(AF_INET, tcp_port_);
  c.SendRecord(MakeCall(4, 0, ""));
  ASSERT_TRUE(c.ReadRecord().has_value());
  EXPECT_TRUE(b.WaitClosed());
  a.SendRecord(MakeCall(5, 0, ""));
  EXPECT_TRUE(a.ReadRecord().has_value());
}

// A connection with a call in progress is not closed for a newcomer; when
// every connection is busy the newcomer is refused.
TEST_F(TransportTest, TcpMaxConnectionsKeepsBusyConnections) {
  RpcServerOptions opts;
  opts.max_connections = 1;
  StartServer(opts);
  TcpClient a(AF_INET, tcp_port_);
  a.SendRecord(MakeCall(1, 1500, "slow"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the call is running
  TcpClient b(AF_INET, tcp_port_);
  EXPECT_TRUE(b.WaitClosed());
  auto reply = a.ReadRecord();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->substr(4), "slow");
}

// Clients keep arriving at a small limit, from several threads at once:
// connections are closed for newcomers while others make calls and leave.
// Every call either gets its reply or finds its connection closed (a client
// reconnects then); the server neither crashes nor stops answering.
TEST_F(TransportTest, TcpConnectionChurnAtTheLimit) {
  RpcServerOptions opts;
  opts.max_connections = 4;
  StartServer(opts);
  std::atomic<int> answered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Each thread keeps its last three connections open: 12 want room.
      std::deque<std::unique_ptr<TcpClient>> open;
      for (int i = 0; i < 40; ++i) {
        open.push_back(std::make_unique<TcpClient>(AF_INET, tcp_port_));
        open.back()->SendRecord(MakeCall(static_cast<uint32_t>(t * 1000 + i), 0, "x"));
        if (open.back()->ReadRecord().has_value()) ++answered;
        if (open.size() > 3) open.pop_front();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_GT(answered.load(), 0);
  TcpClient last(AF_INET, tcp_port_);
  last.SendRecord(MakeCall(99999, 0, "still here"));
  auto reply = last.ReadRecord();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->substr(4), "still here");
}

TEST_F(TransportTest, TcpLargeReply) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  std::string big(900 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131);
  c.SendRecord(MakeCall(4, 0, big));
  auto r = c.ReadRecord();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->substr(4), big);
}

// A big record's body is read only once all of it is queued (SO_RCVLOWAT):
// a body that dribbles in must still complete, and the small call behind it
// must not wait for a low-water mark meant for the big one.
TEST_F(TransportTest, TcpBigRecordDribbledInThenSmallCall) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  std::string big(1000 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + 3);
  const std::string call = MakeCall(21, 0, big);
  uint8_t mark[4];
  EncodeRecordMark(static_cast<uint32_t>(call.size()), true, mark);
  const std::string wire = std::string(reinterpret_cast<char*>(mark), 4) + call;
  for (size_t off = 0; off < wire.size(); off += 100 << 10) {
    c.SendRaw(wire.substr(off, 100 << 10));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  c.SendRecord(MakeCall(22, 0, "small"));
  // Replies may come in either order (calls run in parallel).
  std::map<uint32_t, std::string> bodies;
  for (int i = 0; i < 2; ++i) {
    auto r = c.ReadRecord();
    ASSERT_TRUE(r.has_value());
    bodies[GetU32(reinterpret_cast<const uint8_t*>(r->data()))] = r->substr(4);
  }
  EXPECT_TRUE(bodies[21] == big);
  EXPECT_EQ(bodies[22], "small");
}

// A client that half-closes inside a big record's body: the wait for the
// rest ends at EOF and the connection closes.
TEST_F(TransportTest, TcpHalfCloseInsideBigRecordCloses) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  uint8_t mark[4];
  EncodeRecordMark(900 << 10, true, mark);
  c.SendRaw(std::string(reinterpret_cast<char*>(mark), 4) +
            MakeCall(23, 0, std::string(300 << 10, 'h')));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  shutdown(c.fd(), SHUT_WR);
  EXPECT_TRUE(c.WaitClosed());
}

TEST_F(TransportTest, StopWithClientsConnectedIsPrompt) {
  StartServer();
  TcpClient a(AF_INET, tcp_port_);
  TcpClient b(AF_INET, tcp_port_);
  a.SendRecord(MakeCall(1, 200, ""));
  b.SendRaw(std::string("\x80\x00", 2));  // half a record mark
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto start = Clock::now();
  server_->Stop();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  server_->Stop();  // idempotent
  EXPECT_TRUE(b.WaitClosed());
  EXPECT_EQ(server_->open_connections(), 0u);
}

// UDP helpers.
int UdpSocket(int family) {
  int fd = socket(family, SOCK_DGRAM, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

TEST_F(TransportTest, UdpReplyComesFromLocalAddress) {
  StartServer();
  int fd = UdpSocket(AF_INET);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(udp_port_);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string call = MakeCall(77, 0, "udp!");
  ASSERT_EQ(sendto(fd, call.data(), call.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)),
            static_cast<ssize_t>(call.size()));
  char buf[1024];
  sockaddr_in from{};
  socklen_t from_len = sizeof(from);
  ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
  ASSERT_EQ(n, 8);
  EXPECT_EQ(std::string(buf + 4, 4), "udp!");
  EXPECT_EQ(from.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
  EXPECT_EQ(ntohs(from.sin_port), udp_port_);
  TransportInfo info = service_.last_info();
  EXPECT_EQ(info.transport, Transport::kUdp);
  ASSERT_EQ(info.local.ss_family, AF_INET);
  auto* local = reinterpret_cast<sockaddr_in*>(&info.local);
  EXPECT_EQ(local->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
  EXPECT_EQ(ntohs(local->sin_port), udp_port_);
  EXPECT_GT(info.mtu, 0u);  // loopback has an MTU (65536 usually)
  close(fd);
}

TEST(UdpWildcardTest, ReplySourceFollowsDestinationAddress) {
  // Bound to 0.0.0.0, called at 127.0.0.2: without IP_PKTINFO the kernel
  // would pick 127.0.0.1 as the source of the reply.
  FakeService service;
  RpcServer server(RpcServerOptions{}, &service);
  auto port = server.ListenUdp("0.0.0.0", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  server.Start();
  int fd = UdpSocket(AF_INET);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(*port);
  inet_pton(AF_INET, "127.0.0.2", &to.sin_addr);
  std::string call = MakeCall(1, 0, "");
  sendto(fd, call.data(), call.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  char buf[64];
  sockaddr_in from{};
  socklen_t from_len = sizeof(from);
  ASSERT_EQ(recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len), 4);
  EXPECT_EQ(from.sin_addr.s_addr, to.sin_addr.s_addr);
  TransportInfo info = service.last_info();
  EXPECT_EQ(reinterpret_cast<sockaddr_in*>(&info.local)->sin_addr.s_addr, to.sin_addr.s_addr);
  close(fd);
  server.Stop();
}

// An NFSv3 READ (proc 6) or WRITE (7) under AUTH_NONE, as the transports
// see them: the cred flavor (0) is where FakeService reads its delay.
std::string NfsDataCall(uint32_t xid, uint32_t proc, uint32_t stable = 0) {
  std::string s;
  for (uint32_t v : {xid, 0u, 2u, 100003u, 3u, proc, 0u, 0u, 0u, 0u}) PutU32(&s, v);
  // An empty handle, offset 0, count 4, stable_how (WRITE; READ ignores it).
  for (uint32_t v : {0u, 0u, 0u, 4u, stable}) PutU32(&s, v);
  return s;
}

// Sends the calls to the UDP port together and returns the xids answered.
std::set<uint32_t> UdpBurst(uint16_t port, const std::vector<std::string>& calls) {
  int fd = UdpSocket(AF_INET);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (const std::string& call : calls) {
    sendto(fd, call.data(), call.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  }
  std::set<uint32_t> xids;
  uint8_t buf[256];
  while (xids.size() < calls.size() && recv(fd, buf, sizeof(buf), 0) >= 4) {
    xids.insert(GetU32(buf));
  }
  close(fd);
  return xids;
}

// The calls as TCP records, one after another.
std::string AsRecords(const std::vector<std::string>& calls) {
  std::string records;
  for (const std::string& call : calls) {
    uint8_t mark[4];
    EncodeRecordMark(static_cast<uint32_t>(call.size()), true, mark);
    records += std::string(reinterpret_cast<char*>(mark), 4) + call;
  }
  return records;
}

// Sends the calls as records in one write and returns the xids answered.
std::set<uint32_t> TcpBurst(TcpClient& c, const std::vector<std::string>& calls) {
  c.SendRaw(AsRecords(calls));
  return ReadXids(c, static_cast<int>(calls.size()));
}

// READs and UNSTABLE WRITEs on the io thread while no core is free, over
// either transport.
class DataCallsTest : public TransportTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool tcp() const { return GetParam(); }
  // Over TCP one connection carries every burst: it keeps its own average
  // of the data calls' time.
  std::set<uint32_t> Burst(const std::vector<std::string>& calls) {
    if (!tcp()) return UdpBurst(udp_port_, calls);
    if (tcp_ == nullptr) tcp_ = std::make_unique<TcpClient>(AF_INET, tcp_port_);
    return TcpBurst(*tcp_, calls);
  }
  std::unique_ptr<TcpClient> tcp_;
};

TEST_P(DataCallsTest, ReadsAndUnstableWritesRunOnTheIoThreadWhenNoCoreIsFree) {
  RpcServerOptions opts;
  opts.spread_inline_calls = false;
  StartServer(opts);
  // The GETATTR runs on the io thread: one thread in all means the others did.
  std::vector<std::string> calls = {MakeNfsCall(100, kGetattr, 0, "")};
  for (uint32_t xid = 1; xid <= 40; ++xid) {
    calls.push_back(xid % 2 ? NfsDataCall(xid, 6) : NfsDataCall(xid, kWrite, /*UNSTABLE*/ 0));
  }
  EXPECT_EQ(Burst(calls).size(), calls.size());
  EXPECT_EQ(service_.threads(), 1u);
}

TEST_P(DataCallsTest, StableWritesAndCommitsGoToWorkersEvenWithNoCoreFree) {
  RpcServerOptions opts;
  opts.spread_inline_calls = false;
  StartServer(opts);
  std::vector<std::string> calls = {MakeNfsCall(100, kGetattr, 0, "")};
  for (uint32_t xid = 1; xid <= 8; ++xid) {
    calls.push_back(xid % 2 ? NfsDataCall(xid, kWrite, /*FILE_SYNC*/ 2) : NfsDataCall(xid, 21));
  }
  EXPECT_EQ(Burst(calls).size(), calls.size());
  EXPECT_GE(service_.threads(), 2u);  // the io thread's GETATTR and a worker
}

TEST_P(DataCallsTest, ReadsGoToWorkersWhenACoreIsFree) {
  RpcServerOptions opts;
  opts.spread_inline_calls = true;
  StartServer(opts);
  service_.delay_every_call_ms_ = 2;
  std::vector<std::string> calls;
  for (uint32_t xid = 1; xid <= 16; ++xid) calls.push_back(NfsDataCall(xid, 6));
  EXPECT_EQ(Burst(calls).size(), calls.size());
  EXPECT_GE(service_.threads(), 2u);
}

TEST_P(DataCallsTest, SlowReadsOnTheIoThreadSendTheNextOnesToWorkers) {
  // A file system that answers from the disk (5 ms a call here) must not
  // hold the io thread: after a few such calls the next go to the workers.
  RpcServerOptions opts;
  opts.spread_inline_calls = false;
  StartServer(opts);
  service_.delay_every_call_ms_ = 5;
  for (uint32_t xid = 1; xid <= 8; ++xid) EXPECT_EQ(Burst({NfsDataCall(xid, 6)}).size(), 1u);
  std::vector<std::string> calls;
  for (uint32_t xid = 11; xid <= 26; ++xid) calls.push_back(NfsDataCall(xid, 6));
  EXPECT_EQ(Burst(calls).size(), calls.size());
  EXPECT_GE(service_.threads(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Transports, DataCallsTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Tcp" : "Udp";
                         });

// A READ run on the io thread ends its connection's turn: another
// connection of that io thread gets its call in after one READ, not after
// a turn of eight.
TEST_F(TransportTest, TcpReadOnTheIoThreadEndsTheConnectionsTurn) {
  RpcServerOptions opts;
  opts.spread_inline_calls = false;
  io_threads_ = 1;
  StartServer(opts);
  service_.delay_every_call_ms_ = 1;
  TcpClient busy(AF_INET, tcp_port_);
  TcpClient light(AF_INET, tcp_port_);
  // Few enough that 1 ms each (and the sleep's overshoot on a busy machine)
  // keeps their average under InlineDataGuard::kSlow over 16 calls.
  constexpr uint32_t kReads = 12;
  std::vector<std::string> reads;
  for (uint32_t xid = 1; xid <= kReads; ++xid) reads.push_back(NfsDataCall(xid, 6));
  busy.SendRaw(AsRecords(reads));
  while (service_.calls_.load() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  constexpr uint32_t kLightXid = 100000;
  light.SendRecord(MakeNfsCall(kLightXid, kGetattr, 0, "l"));
  ASSERT_TRUE(light.ReadRecord().has_value());
  const int at = service_.StartedAt(kLightXid);
  EXPECT_GE(at, 1);
  EXPECT_LT(at, 8) << "the light client's call ran after " << at << " of the busy one's READs";
  EXPECT_EQ(ReadXids(busy, kReads), XidsUpTo(kReads));
  EXPECT_EQ(service_.threads(), 1u);  // every READ ran on the io thread
}

TEST_F(TransportTest, UdpDroppedAndGarbageDatagrams) {
  StartServer();
  int fd = UdpSocket(AF_INET);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(udp_port_);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sendto(fd, "x", 1, 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));  // too short: dropped
  std::string dropped = MakeCall(0xdeadbeef, 0, "");
  sendto(fd, dropped.data(), dropped.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  std::string call = MakeCall(8, 0, "");
  sendto(fd, call.data(), call.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  char buf[64];
  ASSERT_EQ(recv(fd, buf, sizeof(buf), 0), 4);
  EXPECT_EQ(GetU32(reinterpret_cast<uint8_t*>(buf)), 8u);
  close(fd);
}

TEST_F(TransportTest, UdpLargeDatagram) {
  StartServer();
  int fd = UdpSocket(AF_INET);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(udp_port_);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string call = MakeCall(9, 0, std::string(60000, 'u'));
  ASSERT_EQ(sendto(fd, call.data(), call.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)),
            static_cast<ssize_t>(call.size()));
  std::vector<char> buf(70000);
  EXPECT_EQ(recv(fd, buf.data(), buf.size(), 0), 60004);
  close(fd);
}

TEST(Ipv6Test, TcpAndUdpOnLoopback) {
  FakeService service;
  RpcServer server(RpcServerOptions{}, &service);
  auto tport = server.ListenTcp("::1", 0);
  if (!tport.ok()) GTEST_SKIP() << "no IPv6 loopback: " << tport.status();
  auto uport = server.ListenUdp("::1", 0);
  ASSERT_TRUE(uport.ok()) << uport.status();
  // An IPv4 listener on the same port number can coexist (v6only).
  auto v4 = server.ListenTcp("127.0.0.1", *tport);
  EXPECT_TRUE(v4.ok()) << v4.status();
  server.Start();

  TcpClient c(AF_INET6, *tport);
  ASSERT_TRUE(c.connected());
  c.SendRecord(MakeCall(6, 0, "six"));
  auto r = c.ReadRecord();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->substr(4), "six");

  int fd = UdpSocket(AF_INET6);
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_port = htons(*uport);
  to.sin6_addr = in6addr_loopback;
  std::string call = MakeCall(61, 0, "v6");
  sendto(fd, call.data(), call.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  char buf[64];
  sockaddr_in6 from{};
  socklen_t from_len = sizeof(from);
  ASSERT_EQ(recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len), 6);
  EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&from.sin6_addr));
  TransportInfo info = service.last_info();
  ASSERT_EQ(info.local.ss_family, AF_INET6);
  EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6*>(&info.local)->sin6_addr));
  close(fd);
  server.Stop();
}

TEST(RpcServerTest, BadAddressAndStopWithoutStart) {
  FakeService service;
  RpcServer server(RpcServerOptions{}, &service);
  EXPECT_FALSE(server.ListenTcp("not-an-ip", 0).ok());
  EXPECT_FALSE(server.ListenUdp("300.1.1.1", 0).ok());
  ASSERT_TRUE(server.ListenTcp("127.0.0.1", 0).ok());
  server.Stop();
  EXPECT_FALSE(server.ListenTcp("127.0.0.1", 0).ok());
}

TEST(RpcServerTest, ListenAfterStartAndManyClients) {
  FakeService service;
  RpcServerOptions opts;
  opts.io_threads = 2;
  RpcServer server(opts, &service);
  server.Start();
  auto port = server.ListenTcp("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      TcpClient c(AF_INET, *port);
      for (int i = 0; i < 50; ++i) {
        c.SendRecord(MakeCall(t * 100 + i, 0, "m"));
        auto r = c.ReadRecord();
        if (r && GetU32(reinterpret_cast<const uint8_t*>(r->data())) == uint32_t(t * 100 + i)) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 400);
  server.Stop();
}

// A connection given up (HandOverConnections, as for nfs3d --takeover) and
// adopted again is served as before. Adopted as a kernel TLS session while
// its socket has no kernel TLS, it is closed instead: served, its calls
// would pass the exports' xprtsec=tls checks in clear text.
TEST_F(TransportTest, AdoptedConnectionMustHaveTheTlsItClaims) {
  StartServer();
  TcpClient c(AF_INET, tcp_port_);
  ASSERT_TRUE(c.connected());
  c.SendRecord(MakeCall(1, 0, "before"));
  ASSERT_TRUE(c.ReadRecord().has_value());
  std::vector<HandedConnection> handed = server_->HandOverConnections(std::chrono::seconds(30));
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0].tls.mode, TransportSecurity::kNone);
  ASSERT_TRUE(server_->AdoptConnection(handed[0].fd, handed[0].pending).ok());
  c.SendRecord(MakeCall(2, 0, "after"));
  std::optional<std::string> r = c.ReadRecord();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->substr(4), "after");
  EXPECT_EQ(service_.last_info().security, TransportSecurity::kNone);

  handed = server_->HandOverConnections(std::chrono::seconds(30));
  ASSERT_EQ(handed.size(), 1u);
  const absl::Status s = server_->AdoptConnection(
      handed[0].fd, handed[0].pending,
      ConnectionSecurity{TransportSecurity::kTls, "TLS1.3", "AES-256-GCM"});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(c.WaitClosed());
}

}  // namespace
}  // namespace nfs3d::rpc
