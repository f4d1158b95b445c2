// Reverse resolution for host-name export entries. Only 127.0.0.1 is looked
// up: it is in /etc/hosts, so no DNS query leaves the machine.
#include "daemon/hostname_resolver.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "gtest/gtest.h"

namespace nfs3d::daemon {
namespace {

sockaddr_in Loopback() {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(1000);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

TEST(CachingHostnameResolverTest, LoopbackIsLocalhostAndCached) {
  CachingHostnameResolver resolver;
  sockaddr_in a = Loopback();
  std::string first = resolver.Resolve(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  EXPECT_EQ(first, "localhost");
  EXPECT_EQ(resolver.Resolve(reinterpret_cast<sockaddr*>(&a), sizeof(a)), first);
}

TEST(CachingHostnameResolverTest, Ipv4MappedLoopbackResolvesLikeIpv4) {
  CachingHostnameResolver resolver;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::ffff:127.0.0.1", &a.sin6_addr);
  EXPECT_EQ(resolver.Resolve(reinterpret_cast<sockaddr*>(&a), sizeof(a)), "localhost");
}

TEST(CachingHostnameResolverTest, NonIpFamilyHasNoName) {
  CachingHostnameResolver resolver;
  sockaddr sa{};
  sa.sa_family = AF_UNIX;
  EXPECT_EQ(resolver.Resolve(&sa, sizeof(sa)), "");
}

}  // namespace
}  // namespace nfs3d::daemon
