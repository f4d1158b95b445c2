// Pipes that carry READ data from the page cache to a TCP socket with two
// splice calls (file -> pipe -> socket), so file data is never copied in user
// space. One pipe holds a whole 1 MiB READ (F_SETPIPE_SZ): sendfile's own
// pipe is 64 KiB, and its 16 round trips per MiB cost more than pread +
// sendmsg (loopback, 1 MiB: sendfile 485 ms/GB vs pread+send 260 vs splice
// through a 1 MiB pipe 206).
//
// Pipes are pooled process-wide: a writer takes one for a file piece and puts
// it back once it is empty again, so descriptors scale with replies being
// sent, not with connections.
#ifndef NFS3D_RPC_SPLICE_PIPE_H_
#define NFS3D_RPC_SPLICE_PIPE_H_

#include <cstddef>

namespace nfs3d::rpc {

class SplicePipe {
 public:
  SplicePipe() = default;
  SplicePipe(SplicePipe&& other) noexcept;
  SplicePipe& operator=(SplicePipe&& other) noexcept;
  SplicePipe(const SplicePipe&) = delete;
  SplicePipe& operator=(const SplicePipe&) = delete;
  ~SplicePipe();

  // A pipe from the pool, or a new one; invalid when none can be made
  // (e.g. EMFILE): the caller then falls back to sendfile.
  static SplicePipe Take();
  // Returns an empty pipe to the pool (closed when the pool is full).
  static void Put(SplicePipe pipe);

  bool valid() const { return read_fd_ >= 0; }
  int read_fd() const { return read_fd_; }
  int write_fd() const { return write_fd_; }

 private:
  void Close();

  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_SPLICE_PIPE_H_
