// A call stuck below the RPC layer is answered early (rpc/running_call.h):
// over real loopback sockets, a fake service whose call blocks on a latch
// plays the stuck backend and the test plays its watchdog, calling
// RunningCall::AnswerNow while the call is held. The client gets the late
// service's reply at once, calls batched behind the stuck one are answered
// by the pool's lent thread, and the stuck call's own reply is dropped.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "rpc/record_marker.h"
#include "rpc/rpc_server.h"
#include "rpc/running_call.h"
#include "rpc/service.h"
#include "tests/support/net.h"

namespace nfs3d::rpc {
namespace {

using test_support::ConnectLoopback;

constexpr uint32_t kSetattr = 2;  // an NFSv3 metadata call
constexpr uint32_t kStuckXid = 1;

uint32_t GetU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
void PutU32(std::string* out, uint32_t v) {
  for (int shift : {24, 16, 8, 0}) out->push_back(static_cast<char>(v >> shift));
}
// An NFSv3 SETATTR call header and nothing else.
std::string NfsCall(uint32_t xid) {
  std::string s;
  for (uint32_t v : {xid, 0u, 2u, 100003u, 3u, kSetattr}) PutU32(&s, v);
  return s;
}
std::string Record(const std::string& msg) {
  uint8_t mark[4];
  EncodeRecordMark(static_cast<uint32_t>(msg.size()), true, mark);
  return std::string(reinterpret_cast<char*>(mark), 4) + msg;
}
// Replies are [xid][tag].
std::string Reply(uint32_t xid, const std::string& tag) {
  std::string s;
  PutU32(&s, xid);
  return s + tag;
}

// Answers "ran"; the call with kStuckXid blocks until Release(), as a call
// stuck in a stopped cluster does, and offers itself to be answered early.
class LatchService : public RpcService {
 public:
  bool HandleCall(absl::Span<const uint8_t> message, const TransportInfo& transport,
                  xdr::BufferChain* reply) override {
    const uint32_t xid = GetU32(message.data());
    if (xid == kStuckXid) {
      {
        absl::MutexLock lock(&mu_);
        stuck_ = RunningCall::Current();
      }
      release_.WaitForNotification();
      absl::MutexLock lock(&mu_);
      returned_ = true;
      offered_after_return_ = RunningCall::Current() != nullptr;
    }
    const std::string r = Reply(xid, "ran");
    reply->Append(reinterpret_cast<const uint8_t*>(r.data()), r.size());
    return true;
  }
  // Waits (hang guard 10 s) until the stuck call is held; it, or null.
  RunningCall* Stuck() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](RunningCall** c) { return *c != nullptr; }, &stuck_),
                         absl::Seconds(10));
    return stuck_;
  }
  // Waits (hang guard 10 s) until the stuck call returned from the latch;
  // whether RunningCall::Current() still offered it then.
  bool OfferedAfterReturn() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&returned_), absl::Seconds(10));
    EXPECT_TRUE(returned_);
    return offered_after_return_;
  }
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }

 private:
  absl::Mutex mu_;
  RunningCall* stuck_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool returned_ ABSL_GUARDED_BY(mu_) = false;
  bool offered_after_return_ ABSL_GUARDED_BY(mu_) = false;
  absl::Notification release_;
};

// Answers "late", and only calls answered early.
class LateService : public RpcService {
 public:
  bool HandleCall(absl::Span<const uint8_t> message, const TransportInfo& transport,
                  xdr::BufferChain* reply) override {
    const std::string r = Reply(GetU32(message.data()), transport.answered_early ? "late" : "??");
    reply->Append(reinterpret_cast<const uint8_t*>(r.data()), r.size());
    return true;
  }
};

class EarlyAnswerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RpcServerOptions opts;
    opts.io_threads = 1;
    opts.worker_threads = 1;
    opts.metadata_threads = 1;  // the stuck call holds the only one
    opts.spread_inline_calls = false;
    opts.late_service = &late_;
    server_ = std::make_unique<RpcServer>(opts, &service_);
    auto tcp = server_->ListenTcp("127.0.0.1", 0);
    ASSERT_TRUE(tcp.ok()) << tcp.status();
    auto udp = server_->ListenUdp("127.0.0.1", 0);
    ASSERT_TRUE(udp.ok()) << udp.status();
    tcp_port_ = *tcp;
    udp_port_ = *udp;
    server_->Start();
  }
  void TearDown() override {
    service_.Release();
    if (server_) server_->Stop();
  }
  // One TCP reply record (without its mark); "" on timeout.
  static std::string ReadRecord(int fd) {
    uint8_t mark[4];
    if (!ReadFull(fd, mark, 4)) return "";
    std::string body(GetU32(mark) & kMaxFragmentLength, '\0');
    if (!ReadFull(fd, body.data(), body.size())) return "";
    return body;
  }
  static bool ReadFull(int fd, void* buf, size_t len) {
    auto* p = static_cast<char*>(buf);
    while (len > 0) {
      const ssize_t n = recv(fd, p, len, 0);
      if (n <= 0) return false;
      p += n;
      len -= static_cast<size_t>(n);
    }
    return true;
  }
  static std::string ReadDatagram(int fd) {
    char buf[512];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

  LatchService service_;
  LateService late_;
  std::unique_ptr<RpcServer> server_;
  uint16_t tcp_port_ = 0;
  uint16_t udp_port_ = 0;
};

TEST_F(EarlyAnswerTest, TcpStuckCallIsAnsweredEarlyWithItsBatchAndItsOwnReplyDropped) {
  const int fd = ConnectLoopback(SOCK_STREAM, tcp_port_);
  ASSERT_GE(fd, 0);
  // One write: the three metadata calls run as one batch, the stuck one first.
  const std::string calls = Record(NfsCall(kStuckXid)) + Record(NfsCall(2)) + Record(NfsCall(3));
  ASSERT_EQ(send(fd, calls.data(), calls.size(), MSG_NOSIGNAL), static_cast<ssize_t>(calls.size()));
  RunningCall* stuck = service_.Stuck();
  ASSERT_NE(stuck, nullptr);
  RunningCall::AnswerNow(stuck);  // as the watchdog does, while the call is held
  // The early answer, then the rest of the batch, run on a lent thread while
  // the pool's only metadata thread is still stuck.
  EXPECT_EQ(ReadRecord(fd), Reply(kStuckXid, "late"));
  EXPECT_EQ(ReadRecord(fd), Reply(2, "ran"));
  EXPECT_EQ(ReadRecord(fd), Reply(3, "ran"));
  // Once the stuck call returns its reply is dropped: the next reply is 4's.
  service_.Release();
  const std::string next = Record(NfsCall(4));
  ASSERT_EQ(send(fd, next.data(), next.size(), MSG_NOSIGNAL), static_cast<ssize_t>(next.size()));
  EXPECT_EQ(ReadRecord(fd), Reply(4, "ran"));
  close(fd);
}

TEST_F(EarlyAnswerTest, UdpStuckCallIsAnsweredEarlyAndItsOwnReplyDropped) {
  const int fd = ConnectLoopback(SOCK_DGRAM, udp_port_);
  ASSERT_GE(fd, 0);
  const std::string stuck_call = NfsCall(kStuckXid);
  ASSERT_EQ(send(fd, stuck_call.data(), stuck_call.size(), 0),
            static_cast<ssize_t>(stuck_call.size()));
  RunningCall* stuck = service_.Stuck();
  ASSERT_NE(stuck, nullptr);
  // A call queued behind the stuck one on its pool.
  const std::string queued = NfsCall(2);
  ASSERT_EQ(send(fd, queued.data(), queued.size(), 0), static_cast<ssize_t>(queued.size()));
  RunningCall::AnswerNow(stuck);
  std::vector<std::string> replies = {ReadDatagram(fd), ReadDatagram(fd)};
  std::sort(replies.begin(), replies.end());
  EXPECT_EQ(replies, (std::vector<std::string>{Reply(kStuckXid, "late"), Reply(2, "ran")}));
  service_.Release();
  const std::string next = NfsCall(3);
  ASSERT_EQ(send(fd, next.data(), next.size(), 0), static_cast<ssize_t>(next.size()));
  EXPECT_EQ(ReadDatagram(fd), Reply(3, "ran"));
  close(fd);
}

TEST_F(EarlyAnswerTest, CallAnsweredEarlyIsNotOfferedTwice) {
  const int fd = ConnectLoopback(SOCK_STREAM, tcp_port_);
  ASSERT_GE(fd, 0);
  const std::string call = Record(NfsCall(kStuckXid));
  ASSERT_EQ(send(fd, call.data(), call.size(), MSG_NOSIGNAL), static_cast<ssize_t>(call.size()));
  RunningCall* stuck = service_.Stuck();
  ASSERT_NE(stuck, nullptr);
  RunningCall::AnswerNow(stuck);
  EXPECT_TRUE(stuck->answered());
  EXPECT_EQ(ReadRecord(fd), Reply(kStuckXid, "late"));
  // The stuck call's thread goes on (e.g. to a further backend call): it is
  // not offered to be answered early again.
  service_.Release();
  EXPECT_FALSE(service_.OfferedAfterReturn());
  close(fd);
}

}  // namespace
}  // namespace nfs3d::rpc
