// A burst of UDP calls sent at once, as a client's WRITEs leave, is all
// answered: the socket's buffers hold it and recvmmsg drains it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/rpc_server.h"
#include "rpc/service.h"

namespace nfs3d::rpc {
namespace {

// Answers [xid][...] with [xid].
class EchoXid : public RpcService {
 public:
  bool HandleCall(absl::Span<const uint8_t> message, const TransportInfo&,
                  xdr::BufferChain* reply) override {
    if (message.size() < 4) return false;
    reply->Append(message.data(), 4);
    return true;
  }
};

class UdpBurstTest : public ::testing::TestWithParam<bool> {};

TEST_P(UdpBurstTest, EveryCallOfABurstIsAnswered) {
  constexpr int kCalls = 400;
  constexpr size_t kCallBytes = 8192 + 200;  // an 8 KiB WRITE
  EchoXid service;
  RpcServerOptions options;
  options.io_threads = 1;
  options.worker_threads = 2;
  if (!GetParam()) options.udp_pacing.mode = UdpPacingOptions::Mode::kOff;
  RpcServer server(options, &service);
  auto port = server.ListenUdp("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  server.Start();

  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  // The replies must not be lost at this end either (400 small datagrams
  // outgrow a default receive buffer while this thread is still sending).
  int bytes = 4 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(*port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);

  std::set<uint32_t> answered;
  std::thread reader([&] {
    uint32_t xid;
    while (answered.size() < kCalls && recv(fd, &xid, sizeof(xid), 0) == sizeof(xid)) {
      answered.insert(ntohl(xid));
    }
  });
  // All at once: 3.3 MB in a few milliseconds, faster than one thread can
  // take them one recvmsg at a time from a default-sized queue.
  std::vector<uint8_t> call(kCallBytes, 0x5a);
  for (uint32_t i = 0; i < kCalls; ++i) {
    uint32_t xid = htonl(i + 1);
    std::memcpy(call.data(), &xid, 4);
    ASSERT_EQ(send(fd, call.data(), call.size(), 0), static_cast<ssize_t>(call.size()));
  }
  reader.join();
  EXPECT_EQ(answered.size(), static_cast<size_t>(kCalls));
  close(fd);
  server.Stop();
}

INSTANTIATE_TEST_SUITE_P(PacingOnAndOff, UdpBurstTest, ::testing::Bool());

}  // namespace
}  // namespace nfs3d::rpc
