// "Tickle ACKs": how a head taking over an address makes the clients of the
// instance that had it reconnect at once. A client whose server vanished
// (killed, or stopped after its address moved away, so its FIN never
// left) keeps its connection and waits for its calls' replies until its RPC
// timeout (60 s with the Linux default timeo=600): it has nothing to send,
// so nothing tells it. A bare ACK with sequence numbers outside its window,
// sent from the server's address and port, makes the client's kernel
// answer with an ACK of its true numbers; that reaches the new head, whose
// kernel has no such connection and resets it; the client reconnects and
// sends its calls again. (The technique of CTDB's and pacemaker portblock's
// "tickle ACKs".) Needs CAP_NET_RAW.
#ifndef NFS3D_DAEMON_TICKLE_ACK_H_
#define NFS3D_DAEMON_TICKLE_ACK_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"

#include "daemon/tcp_peers.h"

namespace nfs3d::daemon {

// The TCP header of a tickle from `from` (the server) to `to` (the client),
// its checksum computed over the pseudo-header of the two addresses (IPv4
// only: for IPv6 the kernel computes it, IPV6_CHECKSUM).
std::array<uint8_t, 20> TickleSegment(const TcpPeer& peer);

// Sends one tickle to peer.client from peer.server (an address of this
// machine) over a raw socket.
absl::Status SendTickleAck(const TcpPeer& peer);

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_TICKLE_ACK_H_
