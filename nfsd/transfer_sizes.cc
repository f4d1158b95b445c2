#include "nfsd/transfer_sizes.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

namespace nfs3d::nfsd {
namespace {

conf::TransferSizes Clamp(conf::TransferSizes s, uint32_t limit) {
  s.rsize_max = std::clamp<uint32_t>(s.rsize_max, kTransferMultiple, limit);
  s.wsize_max = std::clamp<uint32_t>(s.wsize_max, kTransferMultiple, limit);
  s.rsize_pref = std::clamp<uint32_t>(s.rsize_pref, 1024, s.rsize_max);
  s.wsize_pref = std::clamp<uint32_t>(s.wsize_pref, 1024, s.wsize_max);
  return s;
}

}  // namespace

uint32_t AutoUdpPreferred(uint32_t mtu, bool ipv6, uint32_t fragments, uint32_t max_size,
                          uint32_t overhead) {
  if (mtu == 0) return max_size;
  // IPv6 puts a fragment header (8) after its 40-byte header; IPv4 has 20.
  const uint32_t ip_header = ipv6 ? 48 : 20;
  if (mtu <= ip_header + 8) return 1024;
  // Every fragment but the last carries a multiple of 8 payload bytes; the UDP
  // header (8) rides in the first one.
  const uint64_t per_fragment = (mtu - ip_header) & ~uint32_t{7};
  const uint64_t datagram = per_fragment * std::max<uint32_t>(fragments, 1) - 8;
  uint32_t size = 1024;
  while (size * 2ull <= max_size && size * 2ull + overhead <= datagram) size *= 2;
  return size;
}

conf::TransferSizes SizesFor(const TransferSettings& settings,
                             const rpc::TransportInfo& transport) {
  if (transport.transport == rpc::Transport::kTcp) return Clamp(settings.tcp, kMaxTransfer);
  conf::TransferSizes s = Clamp(settings.udp, kMaxUdpTransfer);
  if (transport.mtu == 0) return s;
  // IPv4-mapped peers on a dual-stack socket travel as IPv4.
  const auto* peer6 = reinterpret_cast<const sockaddr_in6*>(&transport.peer);
  const bool ipv6 =
      transport.peer.ss_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&peer6->sin6_addr);
  const uint32_t fragments = settings.udp_auto_fragments;
  if (s.rsize_pref_auto) {
    s.rsize_pref =
        AutoUdpPreferred(transport.mtu, ipv6, fragments, s.rsize_max, kReadReplyOverhead);
  }
  if (s.wsize_pref_auto) {
    s.wsize_pref =
        AutoUdpPreferred(transport.mtu, ipv6, fragments, s.wsize_max, kWriteCallOverhead);
  }
  return s;
}

}  // namespace nfs3d::nfsd
