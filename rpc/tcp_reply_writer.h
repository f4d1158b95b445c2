// Writes a batch of RPC replies to a non-blocking TCP socket: each reply is its
// record mark and its body chain. Memory segments go out gathered with
// sendmsg; file segments (READ data over TCP) are spliced from the file into
// a pooled pipe and from there into the socket (sendfile when no pipe can be
// had), so file data is never copied in user space (unless its file system
// cannot splice: then it is read into memory). The writer only moves
// bytes; waiting for the socket to become writable is the caller's job.
#ifndef NFS3D_RPC_TCP_REPLY_WRITER_H_
#define NFS3D_RPC_TCP_REPLY_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "rpc/splice_pipe.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {

class TcpReplyWriter {
 public:
  enum class Progress { kDone, kWouldBlock, kError };

  // Queues bytes that must outlive the writer's use of them (until Clear or
  // kDone): a reply's record mark, then its body.
  void Add(const uint8_t* data, size_t len);
  void Add(const xdr::BufferChain& body);

  // Writes until everything is sent (kDone), the socket is full
  // (kWouldBlock: call again once it is writable) or fails (kError, *error
  // set to the errno).
  Progress WriteSome(int socket_fd, int* error);

  bool done() const { return next_ == pieces_.size(); }
  void Clear();

 private:
  using Piece = xdr::BufferChain::Segment;
  // Sends memory pieces from next_ on with one sendmsg.
  Progress SendMemory(int socket_fd, int* error);
  // Sends (part of) the file piece at next_: through pipe_, or with
  // sendfile when there is no pipe.
  Progress SendFile(int socket_fd, int* error);
  Progress SendFileDirect(int socket_fd, int* error);
  // The file piece at next_ ended early (the file shrank): what is left of
  // it becomes zeros, so the record keeps its promised length.
  void ZeroRestOfPiece();
  // The file at next_ cannot be spliced or sent with sendfile (EINVAL: its
  // file system has no splice_read): what is left of the piece is read into
  // memory and sent from there. kError if that read fails.
  Progress CopyRestOfPiece(int* error);
  void Advance(size_t n);

  std::vector<Piece> pieces_;
  size_t next_ = 0;      // first piece not completely sent
  size_t next_off_ = 0;  // bytes of pieces_[next_] already sent
  SplicePipe pipe_;      // held while a file piece is being sent
  size_t in_pipe_ = 0;   // bytes of pieces_[next_] spliced into pipe_, not sent
  std::vector<std::unique_ptr<uint8_t[]>> copies_;  // of CopyRestOfPiece
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_TCP_REPLY_WRITER_H_
