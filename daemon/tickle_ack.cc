#include "daemon/tickle_ack.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "boost/endian/conversion.hpp"

#include "common/fd_channel.h"
#include "nlm/peer_caller.h"

namespace nfs3d::daemon {

namespace {

constexpr uint8_t kAckFlag = 0x10;
constexpr uint16_t kWindow = 1234;
constexpr int kChecksumOffset = 16;

void Put16(uint8_t* at, uint16_t v) { boost::endian::store_big_u16(at, v); }

// RFC 1071 one's complement sum of 16-bit words, folded.
uint32_t SumWords(const uint8_t* p, size_t n, uint32_t sum) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += (p[i] << 8) | p[i + 1];
  if (n % 2 != 0) sum += p[n - 1] << 8;
  return sum;
}

bool IsV6(const TcpPeer& peer) { return peer.server.ip.find(':') != std::string::npos; }

}  // namespace

std::array<uint8_t, 20> TickleSegment(const TcpPeer& peer) {
  std::array<uint8_t, 20> tcp{};
  Put16(&tcp[0], peer.server.port);
  Put16(&tcp[2], peer.client.port);
  // Sequence and acknowledgment 0: outside any window the client uses.
  tcp[12] = 5 << 4;  // data offset: 5 words, no options
  tcp[13] = kAckFlag;
  Put16(&tcp[14], kWindow);
  in_addr src{}, dst{};
  if (IsV6(peer) || inet_pton(AF_INET, peer.server.ip.c_str(), &src) != 1 ||
      inet_pton(AF_INET, peer.client.ip.c_str(), &dst) != 1) {
    return tcp;
  }
  uint8_t pseudo[12] = {};
  std::memcpy(pseudo, &src, 4);
  std::memcpy(pseudo + 4, &dst, 4);
  pseudo[9] = IPPROTO_TCP;
  Put16(&pseudo[10], tcp.size());
  uint32_t sum = SumWords(tcp.data(), tcp.size(), SumWords(pseudo, sizeof(pseudo), 0));
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  Put16(&tcp[kChecksumOffset], static_cast<uint16_t>(~sum));
  return tcp;
}

absl::Status SendTickleAck(const TcpPeer& peer) {
  sockaddr_storage from{}, to{};
  if (!nlm::ParseAddress(peer.server.ip, &from) || !nlm::ParseAddress(peer.client.ip, &to) ||
      from.ss_family != to.ss_family) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an address pair: ", peer.server.ip, " ", peer.client.ip));
  }
  const bool v6 = from.ss_family == AF_INET6;
  const socklen_t len = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  OwnedFd fd(socket(from.ss_family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_TCP));
  if (fd.get() < 0) {
    return absl::ErrnoToStatus(errno, "a raw socket for tickle ACKs (needs CAP_NET_RAW)");
  }
  // The kernel sums an IPv6 raw socket's segments itself when asked to.
  int offset = kChecksumOffset;
  if (v6 && setsockopt(fd.get(), IPPROTO_IPV6, IPV6_CHECKSUM, &offset, sizeof(offset)) != 0) {
    return absl::ErrnoToStatus(errno, "IPV6_CHECKSUM");
  }
  // From the server's address: the client's answer must come back here.
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&from), len) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("bind to ", peer.server.ip));
  }
  const std::array<uint8_t, 20> segment = TickleSegment(peer);
  if (sendto(fd.get(), segment.data(), segment.size(), 0, reinterpret_cast<sockaddr*>(&to), len) <
      0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("tickle ACK to ", peer.client.ip));
  }
  return absl::OkStatus();
}

}  // namespace nfs3d::daemon
