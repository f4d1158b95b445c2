// AsyncRpcClient against fake servers on 127.0.0.1: pipelining with replies
// out of order, UDP retransmission and timeouts, a server that disappears,
// RPC-level errors, multi-fragment TCP records.
#include "client/async_rpc_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/rpc_message.h"
#include "tests/support/net.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::client {
namespace {

constexpr uint32_t kProg = 400123;

struct FakeCall {
  uint32_t xid;
  uint32_t proc;
  uint32_t arg;  // first U32 of the arguments
};

// What the fake server does with a call: fills *reply (a whole RPC message)
// or leaves it empty to drop the call.
using Behaviour = std::function<void(const FakeCall& call, int copy, std::string* reply)>;

std::string SuccessReply(uint32_t xid, uint32_t value) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  rpc::EncodeAcceptedReply(e, xid, rpc::AcceptStat::kSuccess);
  e.U32(value);
  return chain.Flatten();
}

std::string ErrorReply(uint32_t xid, rpc::AcceptStat stat) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  rpc::EncodeAcceptedReply(e, xid, stat);
  return chain.Flatten();
}

bool ParseCall(const uint8_t* data, size_t len, FakeCall* call) {
  xdr::Decoder d(data, len);
  rpc::CallHeader h;
  if (rpc::DecodeCallHeader(d, &h) != rpc::HeaderDisposition::kOk) return false;
  call->xid = h.xid;
  call->proc = h.proc;
  call->arg = d.U32();
  return d.ok();
}

class FakeServer {
 public:
  FakeServer(bool tcp, Behaviour behaviour) : tcp_(tcp), behaviour_(std::move(behaviour)) {
    fd_ = test_support::BindLoopback(tcp ? SOCK_STREAM : SOCK_DGRAM, &port_);
    if (tcp) listen(fd_, 4);
    thread_ = std::thread([this] { tcp_ ? ServeTcp() : ServeUdp(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    if (conn_ >= 0) close(conn_);
    close(fd_);
  }
  uint16_t port() const { return port_; }
  // Batches: TCP replies are held until `batch` calls arrived, then sent in
  // reverse order.
  void set_batch(int n) { batch_ = n; }
  void set_close_after(int n) { close_after_ = n; }
  void set_split_replies(bool on) { split_ = on; }

 private:
  bool WaitReadable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 50) > 0;
  }
  void ServeUdp() {
    while (!stop_) {
      if (!WaitReadable(fd_)) continue;
      uint8_t buf[65536];
      sockaddr_in from{};
      socklen_t fl = sizeof(from);
      ssize_t n = recvfrom(fd_, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &fl);
      FakeCall call;
      if (n <= 0 || !ParseCall(buf, static_cast<size_t>(n), &call)) continue;
      std::string reply;
      behaviour_(call, copies_[call.xid]++, &reply);
      if (!reply.empty()) {
        sendto(fd_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), fl);
      }
    }
  }
  void SendRecord(const std::string& body) {
    std::vector<std::string> frags;
    if (split_ && body.size() > 8) {
      frags = {body.substr(0, 8), body.substr(8)};
    } else {
      frags = {body};
    }
    for (size_t i = 0; i < frags.size(); ++i) {
      uint32_t mark = static_cast<uint32_t>(frags[i].size());
      if (i + 1 == frags.size()) mark |= 0x80000000u;
      mark = htonl(mark);
      std::string out(reinterpret_cast<const char*>(&mark), 4);
      out += frags[i];
      send(conn_, out.data(), out.size(), MSG_NOSIGNAL);
    }
  }
  void ServeTcp() {
    while (!stop_ && conn_ < 0) {
      if (WaitReadable(fd_)) conn_ = accept(fd_, nullptr, nullptr);
    }
    std::string in;
    std::vector<std::string> held;
    int seen = 0;
    while (!stop_) {
      if (!WaitReadable(conn_)) continue;
      char buf[65536];
      ssize_t n = recv(conn_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      while (in.size() >= 4) {
        uint32_t mark;
        std::memcpy(&mark, in.data(), 4);
        size_t len = ntohl(mark) & 0x7fffffffu;
        if (in.size() < 4 + len) break;
        FakeCall call;
        bool ok = ParseCall(reinterpret_cast<const uint8_t*>(in.data()) + 4, len, &call);
        in.erase(0, 4 + len);
        if (!ok) continue;
        ++seen;
        if (close_after_ > 0 && seen >= close_after_) {
          close(conn_);
          conn_ = -1;
          while (!stop_) usleep(10000);
          return;
        }
        std::string reply;
        behaviour_(call, 0, &reply);
        if (reply.empty()) continue;
        held.push_back(reply);
        if (static_cast<int>(held.size()) >= batch_) {
          for (auto it = held.rbegin(); it != held.rend(); ++it) SendRecord(*it);
          held.clear();
        }
      }
    }
  }

  bool tcp_;
  Behaviour behaviour_;
  int fd_ = -1;
  int conn_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::map<uint32_t, int> copies_;  // UDP: times each xid was seen
  int batch_ = 1;
  int close_after_ = 0;
  bool split_ = false;
};

Behaviour Echo() {
  return
      [](const FakeCall& c, int, std::string* reply) { *reply = SuccessReply(c.xid, c.arg * 10); };
}

AsyncRpcOptions Options(bool tcp) {
  AsyncRpcOptions o;
  o.transport = tcp ? rpc::Transport::kTcp : rpc::Transport::kUdp;
  o.call_timeout = absl::Seconds(5);
  o.udp_timeout = absl::Milliseconds(50);
  o.udp_max_timeout = absl::Milliseconds(200);
  return o;
}

// A call whose arguments are arg and then `padding` bytes of opaque data.
uint32_t StartArg(AsyncRpcClient& c, uint32_t arg, std::function<void(absl::Status, uint32_t)> f,
                  size_t padding = 0) {
  return c.Start(
      kProg, 1, 1,
      [arg, padding](xdr::Encoder& e) {
        e.U32(arg);
        if (padding > 0) e.Opaque(std::vector<uint8_t>(padding, 0x5a));
      },
      [f](const absl::Status& s, absl::Span<const uint8_t> r) {
        uint32_t v = 0;
        if (s.ok()) {
          xdr::Decoder d(r);
          v = d.U32();
        }
        f(s, v);
      });
}

TEST(AsyncRpcClientTest, TcpPipelinesAndMatchesRepliesOutOfOrder) {
  FakeServer server(true, Echo());
  server.set_batch(16);  // answers only once all 16 are in flight, last first
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(true));
  ASSERT_TRUE(client.ok()) << client.status();
  int good = 0;
  for (uint32_t i = 0; i < 16; ++i) {
    StartArg(**client, i, [&good, i](absl::Status s, uint32_t v) {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_EQ(v, i * 10);
      ++good;
    });
  }
  EXPECT_EQ((*client)->outstanding(), 16u);
  ASSERT_TRUE((*client)->Drain(absl::Now() + absl::Seconds(5)).ok());
  EXPECT_EQ(good, 16);
  EXPECT_EQ((*client)->stats().replies, 16u);
}

TEST(AsyncRpcClientTest, TcpCallsQueuedTogetherSurvivePartialWrites) {
  // Queued calls go out several per sendmsg; 16 MiB of them fill the socket,
  // so writes end inside a call and resume there.
  FakeServer server(true, Echo());
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(true));
  ASSERT_TRUE(client.ok()) << client.status();
  int good = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    StartArg(
        **client, i,
        [&good, i](absl::Status s, uint32_t v) {
          EXPECT_TRUE(s.ok()) << s;
          EXPECT_EQ(v, i * 10);
          ++good;
        },
        /*padding=*/256 << 10);
  }
  ASSERT_TRUE((*client)->Drain(absl::Now() + absl::Seconds(10)).ok());
  EXPECT_EQ(good, 64);
}

TEST(AsyncRpcClientTest, CallbacksCanStartMoreCalls) {
  FakeServer server(true, Echo());
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(true));
  ASSERT_TRUE(client.ok());
  int remaining = 100;
  std::function<void(absl::Status, uint32_t)> next = [&](absl::Status s, uint32_t) {
    ASSERT_TRUE(s.ok());
    if (--remaining > 0) StartArg(**client, 1, next);
  };
  for (int i = 0; i < 4; ++i) StartArg(**client, 1, next);
  ASSERT_TRUE((*client)->Drain(absl::Now() + absl::Seconds(5)).ok());
  EXPECT_LE(remaining, 0);
}

TEST(AsyncRpcClientTest, TcpMultiFragmentReplies) {
  FakeServer server(true, Echo());
  server.set_split_replies(true);
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(true));
  ASSERT_TRUE(client.ok());
  uint32_t got = 0;
  StartArg(**client, 7, [&](absl::Status s, uint32_t v) {
    EXPECT_TRUE(s.ok()) << s;
    got = v;
  });
  ASSERT_TRUE((*client)->Drain(absl::Now() + absl::Seconds(5)).ok());
  EXPECT_EQ(got, 70u);
}

TEST(AsyncRpcClientTest, UdpRetransmitsLostCalls) {
  // Drops the first copy of every call.
  FakeServer server(false, [](const FakeCall& c, int copy, std::string* reply) {
    if (copy > 0) *reply = SuccessReply(c.xid, c.arg);
  });
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(false));
  ASSERT_TRUE(client.ok());
  int good = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    StartArg(**client, i, [&good, i](absl::Status s, uint32_t v) {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_EQ(v, i);
      ++good;
    });
  }
  ASSERT_TRUE((*client)->Drain(absl::Now() + absl::Seconds(5)).ok());
  EXPECT_EQ(good, 8);
  EXPECT_GE((*client)->stats().retransmits, 8u);
}

TEST(AsyncRpcClientTest, UdpCallFailsAfterTheCallTimeout) {
  FakeServer server(false, [](const FakeCall&, int, std::string*) {});  // never answers
  AsyncRpcOptions o = Options(false);
  o.call_timeout = absl::Milliseconds(400);
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), o);
  ASSERT_TRUE(client.ok());
  absl::Status got;
  bool done = false;
  StartArg(**client, 1, [&](absl::Status s, uint32_t) {
    got = s;
    done = true;
  });
  (*client)->Drain(absl::Now() + absl::Seconds(5)).IgnoreError();
  EXPECT_TRUE(done);
  EXPECT_TRUE(absl::IsDeadlineExceeded(got)) << got;
  // Retransmitted meanwhile (50, 100, 200 ms backoff; how many fit in 400 ms
  // depends on the machine's load, so only "at least one" is asserted).
  EXPECT_GE((*client)->stats().retransmits, 1u);
  EXPECT_EQ((*client)->stats().timeouts, 1u);
}

TEST(AsyncRpcClientTest, TcpServerClosingFailsEveryCallAtOnce) {
  FakeServer server(true, Echo());
  server.set_close_after(1);
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(true));
  ASSERT_TRUE(client.ok());
  int failed = 0;
  for (int i = 0; i < 4; ++i) {
    StartArg(**client, 1, [&](absl::Status s, uint32_t) {
      EXPECT_TRUE(absl::IsUnavailable(s)) << s;
      ++failed;
    });
  }
  absl::Time start = absl::Now();
  absl::Status s = (*client)->Drain(absl::Now() + absl::Seconds(5));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(failed, 4);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_TRUE((*client)->broken());
  // A call started afterwards fails too, from Poll, not from Start.
  bool late = false;
  StartArg(**client, 1, [&](absl::Status s2, uint32_t) { late = !s2.ok(); });
  EXPECT_FALSE(late);
  (*client)->Poll(absl::Milliseconds(10)).IgnoreError();
  EXPECT_TRUE(late);
}

TEST(AsyncRpcClientTest, RpcLevelErrorsBecomeStatuses) {
  FakeServer server(false, [](const FakeCall& c, int, std::string* reply) {
    *reply = ErrorReply(c.xid, rpc::AcceptStat::kProgUnavail);
  });
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(false));
  ASSERT_TRUE(client.ok());
  absl::Status got;
  StartArg(**client, 1, [&](absl::Status s, uint32_t) { got = s; });
  ASSERT_TRUE((*client)->Drain(absl::Now() + absl::Seconds(5)).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(got)) << got;
  EXPECT_NE(got.message().find("PROG_UNAVAIL"), absl::string_view::npos);
}

TEST(AsyncRpcClientTest, NothingListeningIsAQuickClearError) {
  // A port that was free a moment ago.
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  uint16_t port = ntohs(a.sin_port);

  auto tcp = AsyncRpcClient::Connect("127.0.0.1", port, Options(true));
  EXPECT_FALSE(tcp.ok());
  EXPECT_NE(tcp.status().message().find("refused"), absl::string_view::npos) << tcp.status();

  auto udp = AsyncRpcClient::Connect("127.0.0.1", port, Options(false));
  ASSERT_TRUE(udp.ok());
  absl::Status got;
  absl::Time start = absl::Now();
  StartArg(**udp, 1, [&](absl::Status st, uint32_t) { got = st; });
  (*udp)->Drain(absl::Now() + absl::Seconds(5)).IgnoreError();
  EXPECT_TRUE(absl::IsUnavailable(got)) << got;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

struct Arg {
  uint32_t v;
};
struct Res {
  uint32_t v = 0;
};
// Found by ADL, as the NFS codecs are.
void Encode(xdr::Encoder& e, const Arg& a) { e.U32(a.v); }
bool Decode(xdr::Decoder& d, Res* r) {
  r->v = d.U32();
  return d.ok();
}

TEST(AsyncRpcClientTest, CallSyncDecodes) {
  FakeServer server(true, Echo());
  auto client = AsyncRpcClient::Connect("127.0.0.1", server.port(), Options(true));
  ASSERT_TRUE(client.ok());
  Res res;
  absl::Status s = (*client)->CallSync(kProg, 1, 1, Arg{4}, &res);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(res.v, 40u);
}

}  // namespace
}  // namespace nfs3d::client
