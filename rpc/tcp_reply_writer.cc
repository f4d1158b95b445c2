#include "rpc/tcp_reply_writer.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

namespace nfs3d::rpc {

namespace {
// Zeros that stand in for file bytes that vanished (the file was truncated
// between building the reply and sending it): the record length is promised.
constexpr size_t kZerosSize = 64 << 10;
const uint8_t kZeros[kZerosSize] = {};
// sendfile moves at most this much per call (the kernel caps it lower anyway).
constexpr size_t kMaxSendfileChunk = 1 << 30;
}  // namespace

void TcpReplyWriter::Add(const uint8_t* data, size_t len) {
  if (len > 0) pieces_.push_back(Piece{data, len});
}

void TcpReplyWriter::Add(const xdr::BufferChain& body) {
  for (const Piece& p : body.segments()) {
    if (p.len > 0) pieces_.push_back(p);
  }
}

void TcpReplyWriter::Clear() {
  // A pipe still holding bytes of an abandoned reply is closed, not reused.
  if (in_pipe_ == 0) SplicePipe::Put(std::move(pipe_));
  pipe_ = SplicePipe();
  in_pipe_ = 0;
  pieces_.clear();
  copies_.clear();
  next_ = 0;
  next_off_ = 0;
}

void TcpReplyWriter::Advance(size_t n) {
  while (n > 0 && next_ < pieces_.size()) {
    const size_t left = pieces_[next_].len - next_off_;
    if (n < left) {
      next_off_ += n;
      return;
    }
    n -= left;
    ++next_;
    next_off_ = 0;
  }
}

TcpReplyWriter::Progress TcpReplyWriter::WriteSome(int socket_fd, int* error) {
  while (!done()) {
    Progress p = pieces_[next_].fd < 0 ? SendMemory(socket_fd, error) : SendFile(socket_fd, error);
    if (p != Progress::kDone) return p;
  }
  if (pipe_.valid()) SplicePipe::Put(std::move(pipe_));  // empty: the batch is out
  return Progress::kDone;
}

TcpReplyWriter::Progress TcpReplyWriter::SendMemory(int socket_fd, int* error) {
  iovec iov[IOV_MAX];
  int n = 0;
  size_t i = next_;
  for (; i < pieces_.size() && pieces_[i].fd < 0 && n < IOV_MAX; ++i, ++n) {
    const size_t skip = i == next_ ? next_off_ : 0;
    iov[n] = iovec{const_cast<uint8_t*>(pieces_[i].data) + skip, pieces_[i].len - skip};
  }
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<size_t>(n);
  // A file piece follows: hold these bytes back to share a segment with it.
  const int flags = MSG_NOSIGNAL | (i < pieces_.size() ? MSG_MORE : 0);
  for (;;) {
    ssize_t sent = sendmsg(socket_fd, &msg, flags);
    if (sent >= 0) {
      Advance(static_cast<size_t>(sent));
      return Progress::kDone;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Progress::kWouldBlock;
    *error = errno;
    return Progress::kError;
  }
}

TcpReplyWriter::Progress TcpReplyWriter::SendFile(int socket_fd, int* error) {
  if (!pipe_.valid()) pipe_ = SplicePipe::Take();
  if (!pipe_.valid()) return SendFileDirect(socket_fd, error);
  const Piece& p = pieces_[next_];
  const size_t left = p.len - next_off_;  // of this piece, not yet on the socket
  if (in_pipe_ < left) {
    loff_t offset = static_cast<loff_t>(p.file_offset + next_off_ + in_pipe_);
    const ssize_t n =
        splice(p.fd, &offset, pipe_.write_fd(), nullptr, left - in_pipe_, SPLICE_F_NONBLOCK);
    if (n > 0) {
      in_pipe_ += static_cast<size_t>(n);
    } else if (n == 0 && in_pipe_ == 0) {
      ZeroRestOfPiece();
      return Progress::kDone;
    } else if (n < 0 && errno == EINVAL && in_pipe_ == 0) {
      return CopyRestOfPiece(error);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      *error = errno;
      return Progress::kError;
    }
    // Otherwise the pipe is full, or the file ended behind what the pipe
    // holds: send that first.
  }
  if (in_pipe_ == 0) return SendFileDirect(socket_fd, error);  // the pipe took nothing
  // Hold the segment open while more of this reply or batch follows.
  const bool more = in_pipe_ < left || next_ + 1 < pieces_.size();
  for (;;) {
    const ssize_t sent = splice(pipe_.read_fd(), nullptr, socket_fd, nullptr, in_pipe_,
                                SPLICE_F_NONBLOCK | (more ? SPLICE_F_MORE : 0));
    if (sent > 0) {
      in_pipe_ -= static_cast<size_t>(sent);
      Advance(static_cast<size_t>(sent));
      return Progress::kDone;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Progress::kWouldBlock;
    *error = sent < 0 ? errno : EPIPE;
    return Progress::kError;
  }
}

TcpReplyWriter::Progress TcpReplyWriter::SendFileDirect(int socket_fd, int* error) {
  const Piece& p = pieces_[next_];
  off_t offset = static_cast<off_t>(p.file_offset + next_off_);
  const size_t left = std::min(p.len - next_off_, kMaxSendfileChunk);
  for (;;) {
    ssize_t sent = sendfile(socket_fd, p.fd, &offset, left);
    if (sent > 0) {
      Advance(static_cast<size_t>(sent));
      return Progress::kDone;
    }
    if (sent == 0) {
      ZeroRestOfPiece();
      return Progress::kDone;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Progress::kWouldBlock;
    if (errno == EINVAL) return CopyRestOfPiece(error);
    *error = errno;
    return Progress::kError;
  }
}

TcpReplyWriter::Progress TcpReplyWriter::CopyRestOfPiece(int* error) {
  Piece& p = pieces_[next_];
  const size_t len = p.len - next_off_;
  auto bytes = std::make_unique_for_overwrite<uint8_t[]>(len);
  if (!xdr::BufferChain::ReadFileBytes(p, next_off_, p.len, bytes.get())) {
    *error = errno;
    return Progress::kError;
  }
  p = Piece{bytes.get(), len};
  next_off_ = 0;
  copies_.push_back(std::move(bytes));
  return Progress::kDone;
}

void TcpReplyWriter::ZeroRestOfPiece() {
  std::vector<Piece> zeros;
  for (size_t z = pieces_[next_].len - next_off_; z > 0;) {
    const size_t len = std::min(z, kZerosSize);
    zeros.push_back(Piece{kZeros, len});
    z -= len;
  }
  pieces_.erase(pieces_.begin() + static_cast<std::ptrdiff_t>(next_));
  pieces_.insert(pieces_.begin() + static_cast<std::ptrdiff_t>(next_), zeros.begin(), zeros.end());
  next_off_ = 0;
}

}  // namespace nfs3d::rpc
