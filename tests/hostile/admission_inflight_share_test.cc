// Issue 48, finding 1: the server-wide bound on calls in progress
// (max_requests) is shared between client addresses. One host that keeps
// calls in progress on every connection it has (or floods UDP) must leave
// slots for another host's calls; the bound must count a host's IPv6 /64 as
// one client, and an IPv4 client the same whether it arrives on an IPv4 or a
// dual-stack socket.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "gtest/gtest.h"

#include "rpc/tcp_server.h"

namespace nfs3d::rpc {
namespace {

sockaddr_storage V4(const char* text) {
  sockaddr_storage s{};
  auto& a = reinterpret_cast<sockaddr_in&>(s);
  a.sin_family = AF_INET;
  inet_pton(AF_INET, text, &a.sin_addr);
  return s;
}

sockaddr_storage V6(const char* text) {
  sockaddr_storage s{};
  auto& a = reinterpret_cast<sockaddr_in6&>(s);
  a.sin6_family = AF_INET6;
  inet_pton(AF_INET6, text, &a.sin6_addr);
  return s;
}

// One host holding calls in progress takes at most its share; another host
// still gets slots, up to the server-wide bound.
TEST(AdmissionInflightShareTest, OneHostLeavesSlotsForAnother) {
  InflightLimit limit(8, 6);
  const uint64_t attacker = InflightLimit::ClientOf(V4("127.0.0.2"));
  const uint64_t honest = InflightLimit::ClientOf(V4("127.0.0.1"));
  ASSERT_NE(InflightLimit::BucketOf(attacker), InflightLimit::BucketOf(honest));
  int taken = 0;
  while (taken < 100 && limit.TryAcquire(attacker)) ++taken;
  EXPECT_EQ(taken, 6);
  EXPECT_TRUE(limit.TryAcquire(honest));
  EXPECT_TRUE(limit.TryAcquire(honest));
  EXPECT_FALSE(limit.TryAcquire(honest));  // the server-wide bound still holds
  EXPECT_EQ(limit.count(), 8u);
  limit.Release(honest);
  EXPECT_FALSE(limit.TryAcquire(attacker));  // still at its share
  EXPECT_TRUE(limit.TryAcquire(honest));
  limit.Release(attacker);
  EXPECT_TRUE(limit.TryAcquire(honest));   // 5 + 3
  EXPECT_FALSE(limit.TryAcquire(honest));  // full
  EXPECT_EQ(limit.count(), 8u);
}

// A limit without a share is not split (RpcServer gives each client three
// quarters unless max_inflight_per_client says otherwise).
TEST(AdmissionInflightShareTest, NoShareMeansTheWholeBound) {
  InflightLimit limit(4);
  const uint64_t one = InflightLimit::ClientOf(V4("192.0.2.1"));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(limit.TryAcquire(one));
  EXPECT_FALSE(limit.TryAcquire(one));
  EXPECT_EQ(limit.per_client(), 4u);
}

// A host's whole /64 counts as one client (it can use any address in it);
// an IPv4 client counts the same on a dual-stack socket.
TEST(AdmissionInflightShareTest, ClientsAreAddressesAndIpv6Prefixes) {
  EXPECT_EQ(InflightLimit::ClientOf(V6("2001:db8:1:2::1")),
            InflightLimit::ClientOf(V6("2001:db8:1:2:ffff::9")));
  EXPECT_EQ(InflightLimit::ClientOf(V4("198.51.100.7")),
            InflightLimit::ClientOf(V6("::ffff:198.51.100.7")));
  EXPECT_NE(InflightLimit::ClientOf(V4("198.51.100.7")),
            InflightLimit::ClientOf(V4("198.51.100.8")));
}

}  // namespace
}  // namespace nfs3d::rpc
