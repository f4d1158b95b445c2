// TcpReplyWriter against a real socket pair: gathered memory pieces, file
// pieces spliced through a pipe (or sent with sendfile when no pipe can be
// made), a full socket (kWouldBlock and resume), a batch abandoned with bytes
// still in its pipe, a file that shrank before it was sent (zeros keep
// the promised length), and a file that cannot be spliced (copied instead).
#include "rpc/tcp_reply_writer.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/splice_pipe.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {
namespace {

class TcpReplyWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A TCP-like stream; sendfile also works to AF_UNIX stream sockets.
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds_), 0);
    int small = 4096;
    setsockopt(fds_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    char path[] = "/tmp/nfs3d-writer-XXXXXX";
    file_ = mkstemp(path);
    ASSERT_GE(file_, 0);
    unlink(path);
  }
  void TearDown() override {
    close(fds_[0]);
    close(fds_[1]);
    close(file_);
  }

  void WriteFile(const std::string& data) {
    ASSERT_EQ(pwrite(file_, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  }

  // Fills the file with 300000 letters cycling through `period` of them
  // from `first`; returns what it wrote.
  std::string WriteLetters(char first, int period) {
    std::string content(300000, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(first + i % period);
    WriteFile(content);
    return content;
  }

  // "head", len bytes of the file from offset, "tail".
  xdr::BufferChain HeadFileTail(uint64_t offset, size_t len) {
    xdr::BufferChain body;
    body.Append("head", 4);
    body.AppendFile(nullptr, file_, offset, len);
    body.Append("tail", 4);
    return body;
  }

  // Runs the writer to completion, draining the peer whenever it blocks.
  std::string WriteAll(TcpReplyWriter& w) {
    std::string got;
    int err = 0;
    for (;;) {
      TcpReplyWriter::Progress p = w.WriteSome(fds_[0], &err);
      Drain(&got);
      if (p == TcpReplyWriter::Progress::kDone) break;
      EXPECT_EQ(p, TcpReplyWriter::Progress::kWouldBlock) << "errno " << err;
      if (p != TcpReplyWriter::Progress::kWouldBlock) break;
      ++would_block_;
    }
    Drain(&got);
    return got;
  }

  // WriteAll while no descriptor can be made (EMFILE) and the pool is
  // empty: the writer gets no pipe.
  std::string WriteAllWithoutPipes(TcpReplyWriter& w) {
    rlimit saved;
    EXPECT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
    rlimit none = saved;
    none.rlim_cur = 3;
    EXPECT_EQ(setrlimit(RLIMIT_NOFILE, &none), 0);
    std::vector<SplicePipe> pooled;
    for (SplicePipe p = SplicePipe::Take(); p.valid(); p = SplicePipe::Take()) {
      pooled.push_back(std::move(p));
    }
    std::string got = WriteAll(w);
    EXPECT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
    for (SplicePipe& p : pooled) SplicePipe::Put(std::move(p));
    return got;
  }

  void Drain(std::string* got) {
    char buf[65536];
    ssize_t n;
    while ((n = read(fds_[1], buf, sizeof(buf))) > 0) got->append(buf, static_cast<size_t>(n));
  }

  int fds_[2] = {-1, -1};
  int file_ = -1;
  int would_block_ = 0;
};

TEST_F(TcpReplyWriterTest, MemoryAndFilePiecesInOrder) {
  const std::string content = WriteLetters('a', 26);
  xdr::BufferChain body = HeadFileTail(1000, 200000);
  EXPECT_TRUE(body.has_file_segments());
  EXPECT_EQ(body.size(), 200008u);
  const uint8_t mark[4] = {1, 2, 3, 4};
  TcpReplyWriter w;
  w.Add(mark, sizeof(mark));
  w.Add(body);
  const std::string expected =
      std::string("\x01\x02\x03\x04", 4) + "head" + content.substr(1000, 200000) + "tail";
  EXPECT_EQ(WriteAll(w), expected);
  EXPECT_TRUE(w.done());
  EXPECT_GT(would_block_, 0);  // the small socket buffer filled up on the way
  // Flatten reads file segments the same way (DRC, tests).
  EXPECT_EQ(body.Flatten(), expected.substr(4));
}

TEST_F(TcpReplyWriterTest, FileShorterThanPromisedIsPaddedWithZeros) {
  WriteFile("0123456789");
  xdr::BufferChain body;
  body.AppendFile(nullptr, file_, 4, 100000);  // the file was truncated since
  body.Append("end", 3);
  TcpReplyWriter w;
  w.Add(body);
  std::string got = WriteAll(w);
  ASSERT_EQ(got.size(), 100003u);
  EXPECT_EQ(got.substr(0, 6), "456789");
  EXPECT_EQ(got.substr(6, 99994), std::string(99994, '\0'));
  EXPECT_EQ(got.substr(100000), "end");
  std::string flat = body.Flatten();
  EXPECT_EQ(flat.size(), 100003u);
  EXPECT_EQ(flat, got);
}

TEST_F(TcpReplyWriterTest, WithoutAPipeFileDataGoesBySendfile) {
  const std::string content = WriteLetters('A', 23);
  xdr::BufferChain body = HeadFileTail(7, 250000);
  TcpReplyWriter w;
  w.Add(body);
  EXPECT_EQ(WriteAllWithoutPipes(w), "head" + content.substr(7, 250000) + "tail");
  EXPECT_GT(would_block_, 0);  // sendfile resumed after a full socket
}

// A file whose file system cannot splice (EINVAL from splice and sendfile;
// /proc/self/cmdline has no splice_read) is read into memory and sent.
TEST_F(TcpReplyWriterTest, FileThatCannotBeSplicedIsCopied) {
  const int proc = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(proc, 0);
  char buf[4096];
  const ssize_t len = pread(proc, buf, sizeof(buf), 0);
  ASSERT_GT(len, 10);
  const std::string content(buf, static_cast<size_t>(len));
  for (bool with_pipe : {true, false}) {
    SCOPED_TRACE(with_pipe ? "spliced" : "sendfile");
    xdr::BufferChain body;
    body.Append("head", 4);
    body.AppendFile(nullptr, proc, 3, content.size() - 3);
    body.Append("tail", 4);
    TcpReplyWriter w;
    w.Add(body);
    const std::string got = with_pipe ? WriteAll(w) : WriteAllWithoutPipes(w);
    EXPECT_EQ(got, "head" + content.substr(3) + "tail");
    EXPECT_TRUE(w.done());
  }
  close(proc);
}

TEST_F(TcpReplyWriterTest, AbandonedBatchLeavesNothingForTheNext) {
  const std::string content = WriteLetters('A', 23);
  TcpReplyWriter w;
  xdr::BufferChain first;
  first.AppendFile(nullptr, file_, 0, 300000);
  w.Add(first);
  int err = 0;
  // The small socket buffer fills while the pipe still holds most of it.
  ASSERT_EQ(w.WriteSome(fds_[0], &err), TcpReplyWriter::Progress::kWouldBlock);
  std::string discarded;
  Drain(&discarded);
  ASSERT_LT(discarded.size(), content.size());
  w.Clear();  // e.g. the connection failed: the rest of that reply is dropped

  xdr::BufferChain second;
  second.Append("next", 4);
  second.AppendFile(nullptr, file_, 7, 5000);
  w.Add(second);
  EXPECT_EQ(WriteAll(w), "next" + content.substr(7, 5000));
  // And once more, with the pipe that batch put back.
  w.Clear();
  xdr::BufferChain third;
  third.AppendFile(nullptr, file_, 100, 70000);
  third.AppendFile(nullptr, file_, 0, 3);
  w.Add(third);
  EXPECT_EQ(WriteAll(w), content.substr(100, 70000) + content.substr(0, 3));
}

TEST_F(TcpReplyWriterTest, ClosedPeerIsAnError) {
  close(fds_[1]);
  fds_[1] = open("/dev/null", O_RDONLY);
  const uint8_t bytes[8] = {};
  TcpReplyWriter w;
  w.Add(bytes, sizeof(bytes));
  int err = 0;
  EXPECT_EQ(w.WriteSome(fds_[0], &err), TcpReplyWriter::Progress::kError);
  EXPECT_EQ(err, EPIPE);
}

TEST_F(TcpReplyWriterTest, ManySmallPiecesBeyondIovMax) {
  xdr::BufferChain body;
  std::string expected;
  std::vector<std::string> owned(3000);
  TcpReplyWriter w;
  for (size_t i = 0; i < owned.size(); ++i) {
    owned[i] = std::to_string(i) + ",";
    w.Add(reinterpret_cast<const uint8_t*>(owned[i].data()), owned[i].size());
    expected += owned[i];
  }
  EXPECT_EQ(WriteAll(w), expected);
}

}  // namespace
}  // namespace nfs3d::rpc
