// The record of a clustered head's TCP clients and the tickle ACK that
// makes them reconnect (daemon/tcp_peers.h, tickle_ack.h,
// tcp_clients_record.h). The tickle tests need CAP_NET_RAW and
// CAP_NET_ADMIN (the test suite runs as root).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "common/durable_files.h"
#include "common/fd_channel.h"
#include "daemon/tcp_clients_record.h"
#include "daemon/tcp_peers.h"
#include "daemon/tickle_ack.h"

namespace nfs3d::daemon {
namespace {

uint16_t LocalPort(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(a).sin6_port
                                       : reinterpret_cast<sockaddr_in&>(a).sin_port);
}

// A listener on a loopback address (127.0.0.1 or ::1), a client connected
// to it and the accepted end.
struct Loopback {
  OwnedFd listener, client, accepted;
  std::string ip;
  uint16_t port = 0;

  explicit Loopback(std::string address = "127.0.0.1") : ip(std::move(address)) {
    sockaddr_storage a{};
    socklen_t len = sizeof(sockaddr_in);
    auto& in = reinterpret_cast<sockaddr_in&>(a);
    auto& in6 = reinterpret_cast<sockaddr_in6&>(a);
    if (inet_pton(AF_INET, ip.c_str(), &in.sin_addr) == 1) {
      in.sin_family = AF_INET;
    } else {
      in6 = {};
      in6.sin6_family = AF_INET6;
      inet_pton(AF_INET6, ip.c_str(), &in6.sin6_addr);
      len = sizeof(sockaddr_in6);
    }
    listener = OwnedFd(socket(a.ss_family, SOCK_STREAM, 0));
    if (bind(listener.get(), reinterpret_cast<sockaddr*>(&a), len) != 0) return;
    listen(listener.get(), 4);
    port = LocalPort(listener.get());
    (a.ss_family == AF_INET ? in.sin_port : in6.sin6_port) = htons(port);
    client = OwnedFd(socket(a.ss_family, SOCK_STREAM, 0));
    connect(client.get(), reinterpret_cast<sockaddr*>(&a), len);
    accepted = OwnedFd(accept(listener.get(), nullptr, nullptr));
  }
  TcpPeer Peer() const { return {{ip, port}, {ip, LocalPort(client.get())}}; }
  // The server end goes without a FIN or a RST, as a server does whose
  // address moved away before it was killed (TCP_REPAIR: a silent close).
  bool VanishServerEnd() {
    int on = 1;
    if (setsockopt(accepted.get(), SOL_TCP, TCP_REPAIR, &on, sizeof(on)) != 0) return false;
    accepted = OwnedFd();
    return true;
  }
  // The client's next read: 0 (EOF), -errno, or 1 if it would still wait
  // after `ms`.
  int ClientReadWithin(int ms) const {
    pollfd p{client.get(), POLLIN, 0};
    if (poll(&p, 1, ms) == 0) return 1;
    char b;
    ssize_t n = recv(client.get(), &b, 1, MSG_DONTWAIT);
    return n < 0 ? -errno : static_cast<int>(n);
  }
};

TEST(TcpPeersTest, ServedConnectionsAreTheAcceptedOnesOnly) {
  Loopback conn;
  ASSERT_GE(conn.accepted.get(), 0);
  const std::vector<TcpPeer> served = ServedTcpPeers();
  // The accepted end is served; the client end (an outgoing connection of
  // this process, like a callback's or the Ceph cluster's) is not.
  const TcpPeer peer = conn.Peer();
  EXPECT_NE(std::find(served.begin(), served.end(), peer), served.end());
  const TcpPeer reversed{peer.client, peer.server};
  EXPECT_EQ(std::find(served.begin(), served.end(), reversed), served.end());
}

TEST(TcpPeersTest, TextRoundTripsAndBadLinesAreLeftOut) {
  const std::vector<TcpPeer> peers = {{{"10.0.0.21", 2049}, {"10.0.0.5", 812}},
                                      {{"fd00::21", 2049}, {"fd00::5", 40000}}};
  const std::string text = FormatTcpPeers(peers);
  EXPECT_EQ(ParseTcpPeers(text), peers);
  EXPECT_EQ(ParseTcpPeers(text + "10.0.0.21 2049 10.0.0.6\n" + "10.0.0.21 99999 10.0.0.6 1\n" +
                          "host 2049 10.0.0.6 1\n" + "10.0.0.21 2049 fd00::5 1\n"),
            peers);
}

TEST(TickleAckTest, SegmentIsABareAckWithAValidChecksum) {
  const TcpPeer peer{{"10.0.0.21", 2049}, {"10.0.0.5", 812}};
  const std::array<uint8_t, 20> seg = TickleSegment(peer);
  EXPECT_EQ((seg[0] << 8) | seg[1], 2049);
  EXPECT_EQ((seg[2] << 8) | seg[3], 812);
  EXPECT_EQ(seg[12] >> 4, 5);
  EXPECT_EQ(seg[13], 0x10);  // ACK only
  // The one's complement sum over pseudo-header and segment is all ones.
  const uint8_t pseudo[12] = {10, 0, 0, 21, 10, 0, 0, 5, 0, IPPROTO_TCP, 0, 20};
  uint32_t sum = 0;
  for (size_t i = 0; i < 12; i += 2) sum += (pseudo[i] << 8) | pseudo[i + 1];
  for (size_t i = 0; i < seg.size(); i += 2) sum += (seg[i] << 8) | seg[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  EXPECT_EQ(sum, 0xffffu);
}

class TickleAckResetTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TickleAckResetTest, ResetsAClientWhoseServerVanishedSilently) {
  Loopback conn(GetParam());
  if (conn.accepted.get() < 0) GTEST_SKIP() << "no " << GetParam() << " here";
  const TcpPeer peer = conn.Peer();
  if (!conn.VanishServerEnd()) GTEST_SKIP() << "TCP_REPAIR needs CAP_NET_ADMIN";
  // Nothing tells the client: it would wait for its reply (the NFS
  // client's RPC timeout).
  EXPECT_EQ(conn.ClientReadWithin(1000), 1);
  absl::Status sent = SendTickleAck(peer);
  if (absl::IsPermissionDenied(sent)) GTEST_SKIP() << sent;
  ASSERT_TRUE(sent.ok()) << sent;
  EXPECT_EQ(conn.ClientReadWithin(5000), -ECONNRESET);
}

INSTANTIATE_TEST_SUITE_P(Loopbacks, TickleAckResetTest, ::testing::Values("127.0.0.1", "::1"),
                         [](const auto& info) {
                           return std::string(info.index == 0 ? "Ipv4" : "Ipv6");
                         });

TEST(TickleAckTest, AServedConnectionIsLeftAlone) {
  Loopback conn;
  ASSERT_GE(conn.accepted.get(), 0);
  absl::Status sent = SendTickleAck(conn.Peer());
  if (absl::IsPermissionDenied(sent)) GTEST_SKIP() << sent;
  ASSERT_TRUE(sent.ok()) << sent;
  EXPECT_EQ(conn.ClientReadWithin(1000), 1);
  ASSERT_EQ(send(conn.client.get(), "x", 1, 0), 1);
  char b = 0;
  EXPECT_EQ(recv(conn.accepted.get(), &b, 1, 0), 1);
}

class TcpClientsRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nfs3d-tcp-clients.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    absl::StatusOr<std::unique_ptr<DurableFiles>> files = OpenLocalFiles(dir_);
    ASSERT_TRUE(files.ok()) << files.status();
    files_ = std::move(*files);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  TcpClientsRecord::Options Options() {
    TcpClientsRecord::Options o;
    o.files = files_.get();
    o.node_id = "head1";
    o.period = absl::Milliseconds(50);
    o.served = [this] {
      absl::MutexLock lock(&mu_);
      return served_;
    };
    o.tickle = [this](const TcpPeer& p) {
      bool hold = false;
      {
        absl::MutexLock lock(&mu_);
        tickled_.push_back(p);
        hold = tickled_.size() > free_tickles_;
      }
      if (hold) tickles_go_.WaitForNotification();
      return absl::OkStatus();
    };
    return o;
  }
  std::string Record() {
    absl::StatusOr<std::optional<std::string>> text = files_->Read("tcp-clients.head1");
    return text.ok() ? text->value_or("(none)") : "(error)";
  }
  // Waits up to 10 s for the record to hold `text`.
  bool RecordBecomes(const std::string& text) {
    for (int i = 0; i < 200 && Record() != text; ++i) usleep(50000);
    return Record() == text;
  }

  void Serve(std::vector<TcpPeer> peers) {
    absl::MutexLock lock(&mu_);
    served_ = std::move(peers);
  }

  std::string dir_;
  std::unique_ptr<DurableFiles> files_;
  // Tickles after the first free_tickles_ wait for tickles_go_.
  size_t free_tickles_ = SIZE_MAX;
  absl::Notification tickles_go_;
  absl::Mutex mu_;
  std::vector<TcpPeer> served_ ABSL_GUARDED_BY(mu_);
  std::vector<TcpPeer> tickled_ ABSL_GUARDED_BY(mu_);
};

TEST_F(TcpClientsRecordTest, TicklesThePreviousRecordThenKeepsItsOwn) {
  const std::vector<TcpPeer> previous = {{{"10.0.0.21", 2049}, {"10.0.0.5", 812}},
                                         {{"10.0.0.21", 2049}, {"10.0.0.6", 700}}};
  ASSERT_TRUE(files_->Write("tcp-clients.head1", FormatTcpPeers(previous)).ok());
  const std::vector<TcpPeer> now = {{{"10.0.0.21", 2049}, {"10.0.0.7", 900}}};
  {
    absl::MutexLock lock(&mu_);
    served_ = now;
  }
  {
    TcpClientsRecord record(Options());
    ASSERT_TRUE(RecordBecomes(FormatTcpPeers(now)));
    // The set changes: so does the record.
    {
      absl::MutexLock lock(&mu_);
      served_.clear();
    }
    ASSERT_TRUE(RecordBecomes(""));
  }
  absl::MutexLock lock(&mu_);
  std::vector<TcpPeer> expected;
  for (int i = 0; i < TcpClientsRecord::kTickleRounds; ++i) {
    expected.insert(expected.end(), previous.begin(), previous.end());
  }
  EXPECT_EQ(tickled_, expected);
}

TEST_F(TcpClientsRecordTest, AfterAHandoverNothingIsTickled) {
  ASSERT_TRUE(files_->Write("tcp-clients.head1", "10.0.0.21 2049 10.0.0.5 812\n").ok());
  TcpClientsRecord::Options o = Options();
  o.tickle_previous = false;
  {
    TcpClientsRecord record(std::move(o));
    ASSERT_TRUE(RecordBecomes(""));
  }
  absl::MutexLock lock(&mu_);
  EXPECT_TRUE(tickled_.empty());
}

// Issue 46: a head restarted, its clients reconnected (the guest reclaimed
// its lock on a new connection), and its machine crashed a moment later,
// while the tickles of the previous record were still going out: the record
// was still the previous instance's, so the next instance never reset the
// new connections and the guest's reclaim waited past the grace period.
TEST_F(TcpClientsRecordTest, RecordsItsOwnConnectionsBeforeTicklingThePrevious) {
  const std::vector<TcpPeer> previous = {{{"10.0.0.21", 2049}, {"10.0.0.5", 812}}};
  ASSERT_TRUE(files_->Write("tcp-clients.head1", FormatTcpPeers(previous)).ok());
  const std::vector<TcpPeer> now = {{{"10.0.0.21", 2049}, {"10.0.0.7", 900}}};
  Serve(now);
  free_tickles_ = previous.size();  // the first round goes out, the second waits
  TcpClientsRecord record(Options());
  // While the tickle rounds go on, the record already lists the new
  // connection, and still the previous one (maybe not reset yet).
  const bool early = RecordBecomes(FormatTcpPeers({previous[0], now[0]}));
  tickles_go_.Notify();
  EXPECT_TRUE(early) << Record();
  // After the last round only its own.
  EXPECT_TRUE(RecordBecomes(FormatTcpPeers(now))) << Record();
}

TEST_F(TcpClientsRecordTest, AnAdmittedConnectionIsRecordedWithoutWaitingForThePeriod) {
  std::atomic<uint64_t> admitted{0};
  TcpClientsRecord::Options o = Options();
  o.period = absl::Hours(1);
  o.poll = absl::Milliseconds(10);
  o.admitted = &admitted;
  TcpClientsRecord record(std::move(o));
  ASSERT_TRUE(RecordBecomes(""));
  const std::vector<TcpPeer> now = {{{"10.0.0.21", 2049}, {"10.0.0.8", 901}}};
  Serve(now);
  admitted.fetch_add(1);
  EXPECT_TRUE(RecordBecomes(FormatTcpPeers(now))) << Record();
}

}  // namespace
}  // namespace nfs3d::daemon
