// A UDP reply whose chain holds file segments (READ data) sent as ONE
// datagram built in the kernel, the data never copied in user space: the
// header bytes with sendmsg(MSG_MORE) (peer address and source pktinfo as
// for any reply), then one splice from a pipe that holds the file pages
// and, after them, the XDR pad: without MORE, it completes the datagram.
//
// Why MSG_MORE and not UDP_CORK: MSG_MORE costs no setsockopt per reply, and
// the last piece, sent without it, finishes the datagram by itself. (A
// sendfile straight into the socket would not do: its last chunk clears
// MORE and would send the datagram before the pad, unless corked.)
//
// While the datagram is pending, ANY send on the socket joins it (the kernel
// appends a sendmsg to a pending datagram whatever its address or flags), so
// the caller sends it under a lock that every other sender of that socket
// respects (UdpListener::send_mu_). The file bytes go into the pipe in
// Prepare, before that lock is taken: a file that shrank since the reply
// was built is found there, before anything is on the socket, and the
// page-cache reads (or a disk read) never hold other senders up.
//
// The kernel checksums a pending datagram in software (no offload for
// MSG_MORE) unless it carries UDP_SEGMENT, which only a datagram within the
// MTU may; file data at an odd offset is not spliced (see Prepare).
#ifndef NFS3D_RPC_UDP_SPLICED_REPLY_H_
#define NFS3D_RPC_UDP_SPLICED_REPLY_H_

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#include "rpc/splice_pipe.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {

// The largest UDP payload over IPv4 (and what an IPv6 reply stays under).
inline constexpr size_t kMaxUdpPayload = 65507;

class UdpSplicedReply {
 public:
  enum class Prepared {
    kReady,         // Send may go
    kCannotSplice,  // no pipe, a file system without splice, a full pipe,
                    // odd offsets (see Prepare): send it from memory
    kFileShrank,    // the file ends before a segment does: the reply would
                    // promise bytes it cannot carry
    kFailed,        // reading the file failed (errno)
  };

  UdpSplicedReply() = default;
  UdpSplicedReply(const UdpSplicedReply&) = delete;
  UdpSplicedReply& operator=(const UdpSplicedReply&) = delete;
  ~UdpSplicedReply();  // the pipe goes back to the pool only when empty

  // Splices every file segment of `reply` into a pipe. The chain must begin
  // with memory bytes (the RPC header) and fit one datagram. gso_size, if
  // not 0, is at least reply.size() and the datagram fits the path's MTU:
  // it goes out with UDP_SEGMENT, so the device, not the kernel, makes its
  // checksum.
  Prepared Prepare(const xdr::BufferChain& reply, uint16_t gso_size = 0);

  // Sends the prepared `reply` on the UDP socket `fd` as one datagram;
  // `address` holds its msg_name and msg_control (no iovecs). True if it
  // went out. False: it did not, no datagram is left pending on the socket,
  // and errno says why. The caller holds the socket's send lock.
  bool Send(int fd, const msghdr& address, const xdr::BufferChain& reply);

 private:
  Prepared SpliceIn(const xdr::BufferChain::Segment& s);
  Prepared CopyIn(const xdr::BufferChain::Segment& s);
  bool SendPieces(int fd, const msghdr& address, const xdr::BufferChain& reply);

  SplicePipe pipe_;
  uint16_t gso_size_ = 0;
  size_t head_ = 0;     // leading memory segments, sent with sendmsg
  size_t in_pipe_ = 0;  // bytes in the pipe, not yet sent
};

// Discards the datagram pending on the UDP socket `fd`, if any: a send that
// cannot fit (65535 bytes after what is pending) makes the kernel flush the
// pending frames and fails with EMSGSIZE; with nothing pending it fails the
// same way and sends nothing. errno is kept.
void AbortPendingDatagram(int fd, const msghdr& address);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_UDP_SPLICED_REPLY_H_
