// UDP replies whose READ data is spliced from the file (rpc/udp_spliced_reply.h):
// one datagram with exactly the chain's bytes for every length around the
// boundaries; odd offsets and a file that shrank are not spliced; a datagram left pending is
// aborted; through the listener, many threads' replies never merge.
#include "rpc/udp_spliced_reply.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/rpc_server.h"
#include "rpc/service.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {
namespace {

namespace fs = std::filesystem;

// A file of `size` bytes whose byte i is a function of i.
class PatternFile {
 public:
  explicit PatternFile(size_t size) {
    path_ = fs::path(::testing::TempDir()) /
            ("udp-spliced-" + std::to_string(getpid()) + "-" + std::to_string(next_++));
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = Byte(i);
    EXPECT_EQ(pwrite(fd_, bytes.data(), size, 0), static_cast<ssize_t>(size));
  }
  ~PatternFile() {
    close(fd_);
    fs::remove(path_);
  }
  static char Byte(size_t i) { return static_cast<char>((i * 131 + i / 251) & 0xff); }
  int fd() const { return fd_; }

 private:
  static inline int next_ = 0;
  fs::path path_;
  int fd_ = -1;
};

// Two UDP sockets on loopback: the server's (non-blocking, as the listener's)
// and the client's.
class SocketPair {
 public:
  explicit SocketPair(int family = AF_INET) : family_(family) {
    server_ = socket(family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    client_ = socket(family, SOCK_DGRAM, 0);
    int bytes = 4 << 20;
    setsockopt(client_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
    if (family == AF_INET) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      std::memcpy(&to_, &a, sizeof(a));
      to_len_ = sizeof(a);
    } else {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      std::memcpy(&to_, &a, sizeof(a));
      to_len_ = sizeof(a);
    }
    ok_ = bind(client_, reinterpret_cast<sockaddr*>(&to_), to_len_) == 0 &&
          getsockname(client_, reinterpret_cast<sockaddr*>(&to_), &to_len_) == 0;
  }
  ~SocketPair() {
    close(server_);
    close(client_);
  }
  bool ok() const { return ok_; }
  int server() const { return server_; }
  msghdr Address() {
    msghdr m{};
    m.msg_name = &to_;
    m.msg_namelen = to_len_;
    return m;
  }
  // The next datagram the client got, or nothing within `ms`.
  std::optional<std::string> Receive(int ms = 2000) {
    pollfd p{client_, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return std::nullopt;
    std::string buf(70000, '\0');
    const ssize_t n = recv(client_, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<size_t>(n));
    return buf;
  }
  bool SendPlain(const std::string& bytes) {
    msghdr m = Address();
    iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    return sendmsg(server_, &m, 0) == static_cast<ssize_t>(bytes.size());
  }

 private:
  int family_;
  int server_ = -1, client_ = -1;
  sockaddr_storage to_{};
  socklen_t to_len_ = 0;
  bool ok_ = false;
};

// header (28 bytes) + len file bytes from offset + XDR pad + trailer.
xdr::BufferChain ReadReply(const PatternFile& f, uint64_t offset, size_t len,
                           const std::string& trailer = "") {
  xdr::BufferChain chain;
  const std::string header = "RPC+NFS READ reply head.." + std::to_string(len % 10) + "..";
  chain.Append(header.data(), header.size());
  chain.AppendFile(nullptr, f.fd(), offset, len);
  static const uint8_t kPad[4] = {};
  if (len % 4) chain.Append(kPad, 4 - len % 4);
  if (!trailer.empty()) chain.Append(trailer.data(), trailer.size());
  return chain;
}

// gso: with UDP_SEGMENT (loopback's MTU holds any datagram).
void ExpectOneDatagram(SocketPair& s, const xdr::BufferChain& chain, const std::string& what,
                       bool gso = true) {
  UdpSplicedReply spliced;
  const auto gso_size = static_cast<uint16_t>(gso ? chain.size() : 0);
  ASSERT_EQ(spliced.Prepare(chain, gso_size), UdpSplicedReply::Prepared::kReady) << what;
  ASSERT_TRUE(spliced.Send(s.server(), s.Address(), chain)) << what << ": " << strerror(errno);
  std::optional<std::string> got = s.Receive();
  ASSERT_TRUE(got.has_value()) << what;
  EXPECT_EQ(got->size(), chain.size()) << what;
  EXPECT_TRUE(*got == chain.Flatten()) << what;
  EXPECT_FALSE(s.Receive(0).has_value()) << what << ": a second datagram";
}

TEST(UdpSplicedReplyTest, EveryLengthArrivesAsOneExactDatagram) {
  SocketPair s;
  ASSERT_TRUE(s.ok());
  PatternFile f(70000);
  for (size_t len : {1, 3, 4, 5, 4095, 4096, 4097, 16383, 16384, 16385, 32767, 32768, 61440}) {
    for (uint64_t offset : {0, 2, 4094}) {
      ExpectOneDatagram(s, ReadReply(f, offset, len),
                        "len " + std::to_string(len) + " at " + std::to_string(offset));
    }
  }
  // Bytes after the file data (another flavour's verifier, say) follow it.
  ExpectOneDatagram(s, ReadReply(f, 6, 10001, "trailer"), "with a trailer");
  // Checksummed in software (a datagram over the MTU): even lengths only.
  for (size_t len : {2, 4, 4094, 4096, 16386, 32768, 61440}) {
    for (uint64_t offset : {0, 2, 4094}) {
      ExpectOneDatagram(s, ReadReply(f, offset, len),
                        "no GSO: len " + std::to_string(len) + " at " + std::to_string(offset),
                        false);
    }
  }
  UdpSplicedReply odd;
  EXPECT_EQ(odd.Prepare(ReadReply(f, 0, 4095)), UdpSplicedReply::Prepared::kCannotSplice);
  // 16 pages and a pad: more pipe buffers than one send into a socket takes.
  UdpSplicedReply many;
  const xdr::BufferChain wide = ReadReply(f, 3262, 61174);
  EXPECT_EQ(many.Prepare(wide, static_cast<uint16_t>(wide.size())),
            UdpSplicedReply::Prepared::kCannotSplice);
}

TEST(UdpSplicedReplyTest, OddFileOffsetsGoFromMemory) {
  // Spliced pages at an odd offset got a wrong UDP checksum (Linux 6.18).
  PatternFile f(40000);
  for (uint64_t offset : {1, 4093}) {
    UdpSplicedReply spliced;
    EXPECT_EQ(spliced.Prepare(ReadReply(f, offset, 20000)),
              UdpSplicedReply::Prepared::kCannotSplice);
  }
}

TEST(UdpSplicedReplyTest, WorksOverIpv6) {
  SocketPair s(AF_INET6);
  if (!s.ok()) GTEST_SKIP() << "no IPv6 loopback";
  PatternFile f(40000);
  ExpectOneDatagram(s, ReadReply(f, 4094, 32769), "IPv6, 32769 bytes");
}

TEST(UdpSplicedReplyTest, FileThatShrankSendsNothing) {
  SocketPair s;
  ASSERT_TRUE(s.ok());
  PatternFile f(20000);
  // The reply promises 30000 bytes from a 20000-byte file (it was truncated
  // after the reply was built).
  xdr::BufferChain chain = ReadReply(f, 0, 30000);
  UdpSplicedReply spliced;
  EXPECT_EQ(spliced.Prepare(chain), UdpSplicedReply::Prepared::kFileShrank);
  EXPECT_FALSE(s.Receive(100).has_value());
  // Nothing is left pending: the next datagram is whole and alone.
  ASSERT_TRUE(s.SendPlain("next"));
  EXPECT_EQ(s.Receive(), std::optional<std::string>("next"));
}

TEST(UdpSplicedReplyTest, ChainsItCannotSpliceAreRefused) {
  PatternFile f(100);
  xdr::BufferChain starts_with_file;
  starts_with_file.AppendFile(nullptr, f.fd(), 0, 100);
  UdpSplicedReply a;
  EXPECT_EQ(a.Prepare(starts_with_file), UdpSplicedReply::Prepared::kCannotSplice);
  PatternFile big(70000);
  UdpSplicedReply b;
  EXPECT_EQ(b.Prepare(ReadReply(big, 0, 65500)), UdpSplicedReply::Prepared::kCannotSplice);
}

TEST(UdpSplicedReplyTest, AbortDropsThePendingDatagram) {
  SocketPair s;
  ASSERT_TRUE(s.ok());
  msghdr m = s.Address();
  char head[] = "half a reply";
  iovec iov{head, sizeof(head)};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  ASSERT_EQ(sendmsg(s.server(), &m, MSG_MORE), static_cast<ssize_t>(sizeof(head)));
  AbortPendingDatagram(s.server(), s.Address());
  ASSERT_TRUE(s.SendPlain("whole"));
  EXPECT_EQ(s.Receive(), std::optional<std::string>("whole"));
  EXPECT_FALSE(s.Receive(0).has_value());
  // With nothing pending it sends nothing either.
  AbortPendingDatagram(s.server(), s.Address());
  EXPECT_FALSE(s.Receive(100).has_value());
}

// Answers [xid][seed] with [xid] + the file's bytes [seed % 4096, + len):
// len = 16 KiB + seed % 20000 as a file segment when the transport takes
// them, read into memory otherwise; seed 0 is a small reply of [xid] only.
class FileReplies : public RpcService {
 public:
  explicit FileReplies(const PatternFile& f) : f_(f) {}
  bool HandleCall(absl::Span<const uint8_t> message, const TransportInfo& info,
                  xdr::BufferChain* reply) override {
    if (message.size() < 8) return false;
    reply->Append(message.data(), 4);
    uint32_t seed;
    std::memcpy(&seed, message.data() + 4, 4);
    seed = ntohl(seed);
    if (seed == 0) return true;
    file_segments_seen_ += info.file_segments ? 1 : 0;
    const uint64_t offset = seed % 4096;
    const size_t len = (16 << 10) + seed % 20000;
    if (info.file_segments) {
      reply->AppendFile(nullptr, f_.fd(), offset, len);
    } else {
      std::string bytes(len, '\0');
      EXPECT_EQ(pread(f_.fd(), bytes.data(), len, static_cast<off_t>(offset)),
                static_cast<ssize_t>(len));
      reply->Append(bytes.data(), len);
    }
    static const uint8_t kPad[4] = {};
    if (len % 4) reply->Append(kPad, 4 - len % 4);
    return true;
  }
  std::atomic<int> file_segments_seen_{0};

 private:
  const PatternFile& f_;
};

std::string Expected(uint32_t xid, uint32_t seed) {
  std::string out(4, '\0');
  const uint32_t be = htonl(xid);
  std::memcpy(out.data(), &be, 4);
  if (seed == 0) return out;
  const uint64_t offset = seed % 4096;
  const size_t len = (16 << 10) + seed % 20000;
  for (size_t i = 0; i < len; ++i) out.push_back(PatternFile::Byte(offset + i));
  out.append((4 - len % 4) % 4, '\0');
  return out;
}

struct ListenerCase {
  bool sendfile;
  bool pacing;
};

class UdpSplicedListenerTest : public ::testing::TestWithParam<ListenerCase> {};

// Several client threads, each with its own socket, keep calls in flight;
// big (spliced) and small replies are built by four workers and leave
// through one socket: every reply is whole, alone, and the one asked for.
TEST_P(UdpSplicedListenerTest, ConcurrentRepliesNeverMerge) {
  PatternFile f(4096 + (16 << 10) + 20000);
  FileReplies service(f);
  RpcServerOptions options;
  options.io_threads = 1;
  options.worker_threads = 4;
  options.udp_sendfile = GetParam().sendfile;
  if (!GetParam().pacing) options.udp_pacing.mode = UdpPacingOptions::Mode::kOff;
  RpcServer server(options, &service);
  auto port = server.ListenUdp("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  server.Start();

  constexpr int kThreads = 4;
  constexpr uint32_t kCalls = 320;
  constexpr uint32_t kWindow = 16;
  std::atomic<int> wrong{0}, answered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int fd = socket(AF_INET, SOCK_DGRAM, 0);
      int bytes = 4 << 20;
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(*port);
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to));
      std::string buf(70000, '\0');
      // Windows of kWindow calls in flight, retransmitted until answered (a
      // loaded machine may drop some).
      for (uint32_t first = 0; first < kCalls; first += kWindow) {
        std::map<uint32_t, uint32_t> waiting;  // xid -> seed
        for (uint32_t i = first; i < std::min(kCalls, first + kWindow); ++i) {
          const uint32_t xid = (static_cast<uint32_t>(t) << 24) | (i + 1);
          waiting[xid] = i % 5 == 0 ? 0 : xid * 2654435761u % 100000 + 1;
        }
        for (int attempt = 0; attempt < 20 && !waiting.empty(); ++attempt) {
          for (const auto& [xid, seed] : waiting) {
            const uint32_t call[2] = {htonl(xid), htonl(seed)};
            send(fd, call, sizeof(call), 0);
          }
          pollfd p{fd, POLLIN, 0};
          while (!waiting.empty() && poll(&p, 1, 1000) > 0) {
            const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
            if (n < 4) continue;
            uint32_t xid;
            std::memcpy(&xid, buf.data(), 4);
            auto it = waiting.find(ntohl(xid));
            if (it == waiting.end()) continue;  // answered already (a retransmission)
            if (buf.compare(0, static_cast<size_t>(n), Expected(it->first, it->second)) != 0) {
              ++wrong;
            }
            ++answered;
            waiting.erase(it);
          }
        }
      }
      close(fd);
    });
  }
  for (std::thread& t : threads) t.join();
  server.Stop();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(answered.load(), kThreads * static_cast<int>(kCalls));
  if (GetParam().sendfile) {
    EXPECT_GT(service.file_segments_seen_.load(), 0);
  } else {
    EXPECT_EQ(service.file_segments_seen_.load(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(SendfileAndPacing, UdpSplicedListenerTest,
                         ::testing::Values(ListenerCase{true, false}, ListenerCase{true, true},
                                           ListenerCase{false, false}),
                         [](const ::testing::TestParamInfo<ListenerCase>& p) {
                           return std::string(p.param.sendfile ? "Sendfile" : "InMemory") +
                                  (p.param.pacing ? "Paced" : "Unpaced");
                         });

}  // namespace
}  // namespace nfs3d::rpc
