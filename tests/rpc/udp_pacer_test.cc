// The UDP reply pacer: every reply leaves, whole and in order per client; a
// retransmitted call slows its client (auto); wire sizes count fragments.
#include "rpc/udp_pacer.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

sockaddr_storage Peer(const char* ip) {
  sockaddr_storage ss{};
  auto* a = reinterpret_cast<sockaddr_in*>(&ss);
  a->sin_family = AF_INET;
  inet_pton(AF_INET, ip, &a->sin_addr);
  return ss;
}

struct Log {
  std::mutex mu;
  std::vector<int> sent;
  std::atomic<int> count{0};
};

class Numbered : public UdpPacer::Reply {
 public:
  Numbered(Log* log, int n) : log_(log), n_(n) {}
  void Send() override {
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->sent.push_back(n_);
    ++log_->count;
  }

 private:
  Log* log_;
  int n_;
};

void WaitFor(Log& log, int n) {
  for (int i = 0; i < 2000 && log.count.load() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(UdpPacerTest, SendsEveryReplyInOrderPerClient) {
  UdpPacingOptions o;
  o.mode = UdpPacingOptions::Mode::kFixed;
  o.rate_bps = 1'000'000'000;
  UdpPacer pacer(o);
  Log a, b;
  for (int i = 0; i < 40; ++i) {
    pacer.Submit(Peer("10.0.0.1"), 0, 24000, std::make_unique<Numbered>(&a, i));
    pacer.Submit(Peer("10.0.0.2"), 0, 24000, std::make_unique<Numbered>(&b, i));
  }
  WaitFor(a, 40);
  WaitFor(b, 40);
  std::vector<int> want;
  for (int i = 0; i < 40; ++i) want.push_back(i);
  EXPECT_EQ(a.sent, want);
  EXPECT_EQ(b.sent, want);
  EXPECT_EQ(pacer.RateOf(Peer("10.0.0.1")), 1'000'000'000u);
  EXPECT_EQ(pacer.Describe(), "1gbit per client");
}

TEST(UdpPacerTest, RetransmittedCallSlowsItsClientOnly) {
  UdpPacer pacer(UdpPacingOptions{}, 1'000'000'000);
  Log log;
  pacer.Submit(Peer("10.0.0.1"), 0, 1000, std::make_unique<Numbered>(&log, 1));
  pacer.Submit(Peer("10.0.0.2"), 0, 1000, std::make_unique<Numbered>(&log, 2));
  WaitFor(log, 2);
  const uint8_t call[] = {0, 0, 0, 42, 0, 0, 0, 0};
  pacer.NoteCall(Peer("10.0.0.1"), call);
  EXPECT_EQ(pacer.RateOf(Peer("10.0.0.1")), 1'000'000'000u);  // first time: not a loss
  pacer.NoteCall(Peer("10.0.0.1"), call);                     // the same xid again
  EXPECT_LT(pacer.RateOf(Peer("10.0.0.1")), 1'000'000'000u);
  EXPECT_EQ(pacer.RateOf(Peer("10.0.0.2")), 1'000'000'000u);
  EXPECT_EQ(pacer.Describe(), "auto");
}

TEST(UdpPacerTest, StopsWithRepliesQueued) {
  UdpPacingOptions o;
  o.mode = UdpPacingOptions::Mode::kFixed;
  o.rate_bps = 1'000'000;  // 1 Mbit/s: the queue cannot drain before the end
  Log log;
  {
    UdpPacer pacer(o);
    for (int i = 0; i < 100; ++i) {
      pacer.Submit(Peer("10.0.0.1"), 0, 60000, std::make_unique<Numbered>(&log, i));
    }
  }
  EXPECT_LT(log.count.load(), 100);
}

TEST(UdpPacerTest, WireBytesCountEveryFragmentsHeaders) {
  // 32 KiB + 8 UDP bytes in 1480-byte fragments: 23 of them.
  EXPECT_EQ(UdpWireBytes(32768, 1500, false), 32768u + 8 + 23 * 34);
  EXPECT_EQ(UdpWireBytes(100, 1500, false), 100u + 8 + 34);
  EXPECT_TRUE(UdpPacer::Paces(8192, 1500));
  EXPECT_FALSE(UdpPacer::Paces(1400, 1500));
  EXPECT_FALSE(UdpPacer::Paces(32768, 65536));
}

}  // namespace
}  // namespace nfs3d::rpc
