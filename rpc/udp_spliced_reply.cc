#include "rpc/udp_spliced_reply.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace nfs3d::rpc {

namespace {
// Memory segments gathered into one sendmsg (a READ reply has a handful).
constexpr size_t kMaxIov = 64;
// splice_to_socket's batch: pipe buffers per sendmsg into the socket.
constexpr size_t kMaxPipeBuffers = 16;
constexpr size_t kPage = 4096;
// The caller's pktinfo and our UDP_SEGMENT.
constexpr size_t kControlBytes = 2 * CMSG_SPACE(sizeof(in6_pktinfo));
// Longer than any datagram can be: the send that aborts a pending one.
constexpr size_t kAbortBytes = 65535;
const uint8_t kAbortZeros[kAbortBytes] = {};

ssize_t SendMsg(int fd, const msghdr& msg, int flags) {
  for (;;) {
    const ssize_t n = sendmsg(fd, &msg, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0 || errno != EINTR) return n;
  }
}
}  // namespace

UdpSplicedReply::~UdpSplicedReply() {
  // A pipe still holding bytes of an unsent reply is closed, not reused.
  if (in_pipe_ == 0) SplicePipe::Put(std::move(pipe_));
}

UdpSplicedReply::Prepared UdpSplicedReply::Prepare(const xdr::BufferChain& reply,
                                                   uint16_t gso_size) {
  const auto& segments = reply.segments();
  if (segments.empty() || segments.front().fd >= 0 || reply.size() > kMaxUdpPayload ||
      (gso_size != 0 && gso_size < reply.size())) {
    return Prepared::kCannotSplice;
  }
  gso_size_ = gso_size;
  for (const xdr::BufferChain::Segment& s : segments) {
    // Without UDP_SEGMENT the kernel checksums a pending datagram in
    // software, and Linux 6.18 gets that checksum wrong for spliced pages
    // that start at an odd byte of the page or of the datagram: the client
    // drops the datagram (InCsumErrors). So file data is spliced only from
    // an even offset and, unless the checksum is offloaded, in an even
    // length (the pad after it then starts at an even byte). Clients read
    // page-aligned, almost always; the rare other READ goes from memory.
    if (s.fd >= 0 && (s.file_offset % 2 != 0 || (gso_size == 0 && s.len % 2 != 0))) {
      return Prepared::kCannotSplice;
    }
  }
  // The kernel moves at most kMaxPipeBuffers pipe buffers (a page each, or
  // the pad) into the socket per send; past that it would finish the
  // datagram early.
  size_t buffers = 0;
  for (const xdr::BufferChain::Segment& s : segments) {
    if (s.fd >= 0) {
      buffers += (s.file_offset % kPage + s.len + kPage - 1) / kPage;
    } else if (buffers > 0) {
      ++buffers;
    }
  }
  if (buffers > kMaxPipeBuffers) return Prepared::kCannotSplice;
  pipe_ = SplicePipe::Take();
  if (!pipe_.valid()) return Prepared::kCannotSplice;
  // The head (memory before the first file segment) goes with sendmsg; the
  // rest into the pipe, in order: file pages spliced, the few bytes after
  // them (the XDR pad) copied.
  head_ = 0;
  while (head_ < segments.size() && segments[head_].fd < 0) ++head_;
  for (size_t i = head_; i < segments.size(); ++i) {
    const Prepared p = segments[i].fd >= 0 ? SpliceIn(segments[i]) : CopyIn(segments[i]);
    if (p != Prepared::kReady) return p;
  }
  return Prepared::kReady;
}

UdpSplicedReply::Prepared UdpSplicedReply::SpliceIn(const xdr::BufferChain::Segment& s) {
  loff_t offset = static_cast<loff_t>(s.file_offset);
  for (size_t done = 0; done < s.len;) {
    const ssize_t n =
        splice(s.fd, &offset, pipe_.write_fd(), nullptr, s.len - done, SPLICE_F_NONBLOCK);
    if (n > 0) {
      done += static_cast<size_t>(n);
      in_pipe_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Prepared::kFileShrank;
    // EINVAL: the file system cannot splice; EAGAIN: the pipe is full (it
    // could not be grown to hold a datagram).
    if (errno == EINVAL || errno == EAGAIN) return Prepared::kCannotSplice;
    return Prepared::kFailed;
  }
  return Prepared::kReady;
}

UdpSplicedReply::Prepared UdpSplicedReply::CopyIn(const xdr::BufferChain::Segment& s) {
  for (size_t done = 0; done < s.len;) {
    const ssize_t n = write(pipe_.write_fd(), s.data + done, s.len - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      in_pipe_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return Prepared::kCannotSplice;  // a full pipe
  }
  return Prepared::kReady;
}

bool UdpSplicedReply::Send(int fd, const msghdr& address, const xdr::BufferChain& reply) {
  if (SendPieces(fd, address, reply)) return true;
  const int error = errno;
  // The kernel drops the pending datagram itself when appending to it
  // fails, but a piece that went out short leaves no such guarantee.
  AbortPendingDatagram(fd, address);
  errno = error;
  return false;
}

bool UdpSplicedReply::SendPieces(int fd, const msghdr& address, const xdr::BufferChain& reply) {
  const auto& segments = reply.segments();
  iovec iov[kMaxIov];
  size_t n = 0, bytes = 0;
  for (; n < head_ && n < kMaxIov; ++n) {
    iov[n] = iovec{const_cast<uint8_t*>(segments[n].data), segments[n].len};
    bytes += segments[n].len;
  }
  if (n < head_) {  // a head of more pieces than a READ reply has
    errno = EMSGSIZE;
    return false;
  }
  msghdr msg = address;  // where the datagram goes, from which address
  msg.msg_iov = iov;
  msg.msg_iovlen = n;
  // UDP_SEGMENT of at least the datagram's size: no segmentation, but the
  // pending datagram keeps checksum offload instead of a software pass over
  // every byte (the kernel allows it only for a datagram within the MTU).
  alignas(cmsghdr) uint8_t control[kControlBytes];
  if (gso_size_ != 0) {
    const size_t have = address.msg_control != nullptr ? address.msg_controllen : 0;
    if (have + CMSG_SPACE(sizeof(uint16_t)) > sizeof(control)) {
      errno = EMSGSIZE;
      return false;
    }
    if (have > 0) std::memcpy(control, address.msg_control, have);
    std::memset(control + have, 0, CMSG_SPACE(sizeof(uint16_t)));
    auto* c = reinterpret_cast<cmsghdr*>(control + have);
    c->cmsg_level = IPPROTO_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    std::memcpy(CMSG_DATA(c), &gso_size_, sizeof(gso_size_));
    msg.msg_control = control;
    msg.msg_controllen = have + CMSG_SPACE(sizeof(uint16_t));
  }
  const ssize_t sent = SendMsg(fd, msg, MSG_MORE);
  if (sent < 0) return false;
  if (static_cast<size_t>(sent) != bytes) {
    errno = EMSGSIZE;
    return false;
  }
  // The rest, in one splice without MORE: it completes the datagram. Short
  // means a piece of it failed.
  const size_t rest = in_pipe_;
  ssize_t moved;
  do {
    moved = splice(pipe_.read_fd(), nullptr, fd, nullptr, rest, SPLICE_F_NONBLOCK);
  } while (moved < 0 && errno == EINTR);
  if (moved < 0) return false;
  in_pipe_ -= static_cast<size_t>(moved);
  if (static_cast<size_t>(moved) != rest) {
    errno = EIO;
    return false;
  }
  return true;
}

void AbortPendingDatagram(int fd, const msghdr& address) {
  const int error = errno;
  iovec iov{const_cast<uint8_t*>(kAbortZeros), kAbortBytes};
  msghdr msg{};
  msg.msg_name = address.msg_name;
  msg.msg_namelen = address.msg_namelen;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  SendMsg(fd, msg, 0);  // EMSGSIZE, always
  errno = error;
}

}  // namespace nfs3d::rpc
