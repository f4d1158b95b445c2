// copy_floor: the least CPU per GB any copying server can spend moving file
// data over loopback TCP, with no RPC, no XDR and no threads handing work on.
// One "server" thread does only the system calls a WRITE or READ must make:
//   write  recv 1 MiB blocks from a TCP connection, pwrite each into a file
//   read   pread 1 MiB blocks of a file, send each on a TCP connection
//   sendfile  the same blocks by sendfile: the no-copy way to READ
// while a "client" thread streams the other end. Prints the server thread's
// CPU (its own utime+stime, kernel copies included) per GB moved, so the
// table's server CPU column can be read against it: 0.5x ganesha below this
// floor cannot be reached by copying.
//
// usage: copy_floor write|read|sendfile DIR [SECONDS [BLOCK]]   (DIR: on the export's
// file system; a scratch file of up to 256 MiB is made there, unlinked at once)
// prints: {"mode":"write","mb_per_s":6012.3,"server_cpu_s_per_gb":0.141}
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"

namespace {

constexpr uint64_t kFileBytes = 256ull << 20;  // offsets wrap inside this

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A connected pair of loopback TCP sockets: {server end, client end}.
bool LoopbackPair(int fds[2]) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if (listener < 0 || bind(listener, sa, sizeof(addr)) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, sa, &len) != 0) {
    return false;
  }
  fds[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = fds[1] >= 0 && connect(fds[1], sa, sizeof(addr)) == 0 &&
                  (fds[0] = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;
  close(listener);
  return ok;
}

// One whole block each way; false on an error or EOF.
bool SendBlock(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}
bool SendFileBlock(int sock, int file, off_t offset, size_t n) {
  while (n > 0) {
    const ssize_t k = sendfile(sock, file, &offset, n);
    if (k <= 0) return false;
    n -= static_cast<size_t>(k);
  }
  return true;
}
bool RecvBlock(int fd, char* p, size_t n) {
  return recv(fd, p, n, MSG_WAITALL) == static_cast<ssize_t>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  double seconds = 3;
  uint64_t block = 1 << 20;
  if ((mode != "write" && mode != "read" && mode != "sendfile") || argc < 3 || argc > 5 ||
      (argc > 3 && !absl::SimpleAtod(argv[3], &seconds)) ||
      (argc > 4 && (!absl::SimpleAtoi(argv[4], &block) || block == 0 || block > kFileBytes))) {
    std::fprintf(stderr, "usage: %s write|read|sendfile DIR [SECONDS [BLOCK]]\n", argv[0]);
    return 2;
  }
  const bool writing = mode == "write";
  const std::string path = std::string(argv[2]) + "/copy_floor." + std::to_string(getpid());
  const int file = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  unlink(path.c_str());  // the descriptor keeps it until we exit
  int sock[2] = {-1, -1};
  if (file < 0 || !LoopbackPair(sock)) {
    std::perror(file < 0 ? path.c_str() : "loopback");
    return 1;
  }
  const uint64_t blocks_in_file = kFileBytes / block;
  std::vector<char> data(block, 'x');
  if (!writing) {  // the file to read, in the page cache as a warm export's is
    for (uint64_t i = 0; i < blocks_in_file; ++i) {
      if (pwrite(file, data.data(), block, static_cast<off_t>(i * block)) < 0) return 1;
    }
  }

  // The client never waits long: the server end may stop reading or writing
  // at any moment once the time is up.
  const timeval io_timeout{2, 0};
  setsockopt(sock[1], SOL_SOCKET, SO_SNDTIMEO, &io_timeout, sizeof(io_timeout));
  setsockopt(sock[1], SOL_SOCKET, SO_RCVTIMEO, &io_timeout, sizeof(io_timeout));
  std::atomic<bool> stop{false};
  std::thread client([&] {
    std::vector<char> buf(block, 'y');
    while (!stop.load(std::memory_order_relaxed)) {
      if (!(writing ? SendBlock(sock[1], buf.data(), block)
                    : RecvBlock(sock[1], buf.data(), block))) {
        break;
      }
    }
  });

  uint64_t moved = 0;
  const double cpu_start = ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  bool ok = true;
  for (uint64_t i = 0; ok && std::chrono::steady_clock::now() < deadline; ++i) {
    const off_t offset = static_cast<off_t>((i % blocks_in_file) * block);
    if (writing) {
      ok = RecvBlock(sock[0], data.data(), block) &&
           pwrite(file, data.data(), block, offset) == static_cast<ssize_t>(block);
    } else if (mode == "read") {
      ok = pread(file, data.data(), block, offset) == static_cast<ssize_t>(block) &&
           SendBlock(sock[0], data.data(), block);
    } else {
      ok = SendFileBlock(sock[0], file, offset, block);
    }
    if (ok) moved += block;
  }
  const int err = ok ? 0 : errno;
  const double cpu = ThreadCpuSeconds() - cpu_start;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop.store(true);
  close(sock[0]);  // with data unread: a reset, which ends the client's send or recv
  client.join();
  close(sock[1]);
  close(file);
  if (!ok || moved == 0) {
    std::fprintf(stderr, "copy_floor %s: stopped after %llu bytes: %s\n", mode.c_str(),
                 static_cast<unsigned long long>(moved), std::strerror(err));
    return 1;
  }
  std::printf("{\"mode\":\"%s\",\"mb_per_s\":%.1f,\"server_cpu_s_per_gb\":%.4f}\n", mode.c_str(),
              static_cast<double>(moved) / secs / 1e6, cpu / (static_cast<double>(moved) / 1e9));
  return 0;
}
