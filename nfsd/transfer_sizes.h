// Transfer sizes advertised in FSINFO and enforced by READ/WRITE/READDIR.
// They depend on the transport that carried the call (knfsd does the same):
// TCP can carry large records, a UDP reply must fit in one datagram and is
// better kept to a few IP fragments.
#ifndef NFS3D_NFSD_TRANSFER_SIZES_H_
#define NFS3D_NFSD_TRANSFER_SIZES_H_

#include <cstdint>

#include "conf/server_config.h"
#include "rpc/call_context.h"

namespace nfs3d::nfsd {

// Largest transfer nfs3d ever allows (bigger sizes broke clients, e.g. libnfs).
inline constexpr uint32_t kMaxTransfer = 1u << 20;
// A UDP READ reply must fit a 65507-byte datagram with its RPC and NFS headers.
inline constexpr uint32_t kMaxUdpTransfer = 60 * 1024;
// READ/WRITE offsets and sizes are best aligned to pages.
inline constexpr uint32_t kTransferMultiple = 4096;
// Bytes of RPC + NFS headers in front of READ data, used to size UDP replies.
inline constexpr uint32_t kReadReplyOverhead = 200;
// The UDP transport splices READ data into one datagram (file_segments).
static_assert(kMaxUdpTransfer + kReadReplyOverhead <= 65507);
// The same in front of WRITE data in a call: call header (24), an AUTH_SYS
// credential with a 64-byte machine name and 16 groups (8 + 148), verifier (8),
// file handle (4 + 64), offset, count, stable and data length (20). Rarer,
// larger credentials cost one fragment more, never a failed call.
inline constexpr uint32_t kWriteCallOverhead = 300;

// The sizes per transport, as the configuration gives them ([tcp], [udp]).
// udp.rsize_pref_auto/wsize_pref_auto (the default): the preferred sizes
// follow the MTU of the receiving interface; udp.rsize_pref/wsize_pref are
// used while the MTU is unknown.
struct TransferSettings {
  conf::TransferSizes tcp{kMaxTransfer, kMaxTransfer, kMaxTransfer, kMaxTransfer};
  conf::TransferSizes udp{32768, 32768, 32768, 32768, true, true};
  // How many IP fragments an auto-sized READ reply or WRITE call may take.
  uint32_t udp_auto_fragments = 6;
};

// Sizes for a call that arrived on `transport`, clamped to the hard limits
// above (and preferred <= max). This is where per-transport policy lives.
conf::TransferSizes SizesFor(const TransferSettings& settings, const rpc::TransportInfo& transport);

// The largest power of two <= max_size whose datagram (data plus `overhead`
// bytes of headers: kReadReplyOverhead for a READ reply, kWriteCallOverhead
// for a WRITE call) fits in `fragments` IP fragments at `mtu`; ipv6 selects
// the larger header. 8 KiB at MTU 1500, 32 KiB at 9000 (6 fragments), for
// reads and writes alike. Never below 1024. Returns max_size when mtu is 0
// (unknown).
uint32_t AutoUdpPreferred(uint32_t mtu, bool ipv6, uint32_t fragments, uint32_t max_size,
                          uint32_t overhead);

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_TRANSFER_SIZES_H_
