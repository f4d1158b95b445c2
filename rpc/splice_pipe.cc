#include "rpc/splice_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <mutex>
#include <utility>
#include <vector>

namespace nfs3d::rpc {

namespace {
// Room for a whole 1 MiB READ (the default pipe-max-size, so no privilege is
// needed). If the kernel refuses, the default 64 KiB pipe still works, in
// more rounds.
constexpr int kPipeBytes = 1 << 20;
// Idle pipes kept for reuse; more than the replies that are sent at once
// would only hold descriptors.
constexpr size_t kMaxIdle = 64;

struct Pool {
  std::mutex mu;
  std::vector<SplicePipe> idle;
};

Pool& ThePool() {
  static Pool* pool = new Pool;  // never destroyed: writers may outlive statics
  return *pool;
}
}  // namespace

SplicePipe::SplicePipe(SplicePipe&& other) noexcept
    : read_fd_(std::exchange(other.read_fd_, -1)), write_fd_(std::exchange(other.write_fd_, -1)) {}

SplicePipe& SplicePipe::operator=(SplicePipe&& other) noexcept {
  if (this != &other) {
    Close();
    read_fd_ = std::exchange(other.read_fd_, -1);
    write_fd_ = std::exchange(other.write_fd_, -1);
  }
  return *this;
}

SplicePipe::~SplicePipe() { Close(); }

void SplicePipe::Close() {
  if (read_fd_ >= 0) close(read_fd_);
  if (write_fd_ >= 0) close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

SplicePipe SplicePipe::Take() {
  {
    Pool& pool = ThePool();
    std::lock_guard<std::mutex> lock(pool.mu);
    if (!pool.idle.empty()) {
      SplicePipe p = std::move(pool.idle.back());
      pool.idle.pop_back();
      return p;
    }
  }
  SplicePipe p;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return p;
  p.read_fd_ = fds[0];
  p.write_fd_ = fds[1];
  fcntl(p.write_fd_, F_SETPIPE_SZ, kPipeBytes);
  return p;
}

void SplicePipe::Put(SplicePipe pipe) {
  if (!pipe.valid()) return;
  Pool& pool = ThePool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.idle.size() < kMaxIdle) pool.idle.push_back(std::move(pipe));
}

}  // namespace nfs3d::rpc
