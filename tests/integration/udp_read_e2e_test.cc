// READ over UDP against the nfs3d binary, with `[udp] sendfile` on (READ data
// spliced into the datagram) and off (read into memory): exactly the file's
// bytes for lengths around every boundary (0 .. the largest UDP READ, odd
// lengths whose XDR pad follows the file data), past EOF, after the file was
// truncated behind the client's back, and with several threads' READs and
// other calls in flight at once (no reply merged with another).
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

constexpr uint32_t kMaxUdpRead = 60 * 1024;  // nfsd's cap (kMaxUdpTransfer)
constexpr size_t kFileSize = 200000;

struct ReadResult {
  bool ok = false;  // a reply that decodes exactly, with nothing after it
  uint32_t status = 0xffffffffu;
  uint32_t count = 0;
  bool eof = false;
  std::string data;
};

ReadResult Read(RawClient& c, const std::string& fh, uint64_t offset, uint32_t count) {
  ReadResult out;
  NfsReply r = Nfs(c, nfs3::kRead, Args().Opaque(fh).U64(offset).U32(count).str());
  if (!r.ok || r.reply_stat != 0 || r.accept_stat != 0) return out;
  out.status = r.status;
  xdr::Decoder d(Span(r.results));
  d.U32();
  DecodePostOpAttr(d);
  if (r.status == nfs3::NFS3_OK) {
    out.count = d.U32();
    out.eof = d.Bool();
    out.data = Str(d.Opaque(kMaxUdpRead));
  }
  out.ok = d.ok() && d.remaining() == 0;
  return out;
}

char Byte(size_t i) { return static_cast<char>((i * 7 + i / 509 + 3) & 0xff); }

class UdpReadE2eTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("udpread");
    std::string bytes(kFileSize, '\0');
    for (size_t i = 0; i < kFileSize; ++i) bytes[i] = Byte(i);
    std::ofstream(Path("file"), std::ios::binary) << bytes;
    server_.Configure(dir_, ExportLine(dir_),
                      absl::StrCat("[udp]\nrsize_max = ", kMaxUdpRead,
                                   "\nsendfile = ", GetParam() ? "on" : "off", "\n"));
    ASSERT_TRUE(server_.Start()) << server_.Log();
    client_ = Open();
    ASSERT_NE(client_, nullptr);
    root_ = Mount(*client_, (dir_ / "export").string());
    ASSERT_FALSE(root_.empty());
    LookupResult file = Lookup(*client_, root_, "file");
    ASSERT_EQ(file.status, nfs3::NFS3_OK);
    fh_ = file.fh;
  }

  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  std::unique_ptr<RawClient> Open() {
    ClientOptions o;
    o.transport = rpc::Transport::kUdp;
    return RawClient::Open(server_.port(), o);
  }

  // READ of count bytes at offset returns the file's bytes there, up to EOF.
  void ExpectRead(RawClient& c, uint64_t offset, uint32_t count, size_t size = kFileSize) {
    SCOPED_TRACE(absl::StrCat("READ ", count, " at ", offset));
    ReadResult r = Read(c, fh_, offset, count);
    ASSERT_TRUE(r.ok);
    ASSERT_EQ(r.status, nfs3::NFS3_OK);
    const size_t want = offset >= size ? 0 : std::min<size_t>(count, size - offset);
    ASSERT_EQ(r.count, want);
    ASSERT_EQ(r.data.size(), want);
    EXPECT_EQ(r.eof, offset + want >= size);
    for (size_t i = 0; i < want; ++i) {
      if (r.data[i] != Byte(offset + i)) {
        ADD_FAILURE() << "byte " << offset + i << " differs";
        return;
      }
    }
  }

  fs::path Path(const std::string& name) { return dir_ / "export" / name; }

  fs::path dir_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> client_;
  std::string root_, fh_;
};

TEST_P(UdpReadE2eTest, EveryLengthReturnsTheFileBytes) {
  EXPECT_NE(server_.Log().find(GetParam() ? "sendfile on" : "sendfile off"), std::string::npos)
      << server_.Log();
  // kSendfileMinBytes (nfsd) is 16 KiB: below it READ data is read into
  // memory even with sendfile on.
  for (uint32_t count :
       {0u, 1u, 3u, 4u, 4095u, 16383u, 16384u, 16385u, 32768u, 32771u, 50001u, kMaxUdpRead}) {
    // Odd offsets are read into memory (rpc/udp_spliced_reply.cc).
    for (uint64_t offset : {0ul, 1ul, 2ul, 4093ul, 4094ul}) ExpectRead(*client_, offset, count);
  }
  // More than the largest UDP READ: the server sends what fits (count says).
  ReadResult r = Read(*client_, fh_, 0, kMaxUdpRead + 4096);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.count, kMaxUdpRead);
}

TEST_P(UdpReadE2eTest, ReadsAtAndPastEndOfFile) {
  ExpectRead(*client_, kFileSize - 10, 30001);  // 10 bytes, eof
  ExpectRead(*client_, kFileSize - 16385, 32768);
  ExpectRead(*client_, kFileSize, 32768);  // nothing, eof
  ExpectRead(*client_, kFileSize + 100000, 20000);
}

TEST_P(UdpReadE2eTest, FileTruncatedAfterLookup) {
  // The client holds the handle and the old size; the file shrinks.
  fs::resize_file(Path("file"), 20001);
  ExpectRead(*client_, 0, 32768, 20001);
  ExpectRead(*client_, 3, 20000, 20001);
  ExpectRead(*client_, 16384, 16384, 20001);
  ExpectRead(*client_, 40000, 16384, 20001);
}

TEST_P(UdpReadE2eTest, ConcurrentReadsAndOtherCallsStayApart) {
  constexpr int kThreads = 4;
  constexpr int kCalls = 120;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<RawClient> c = Open();
      if (c == nullptr) {
        ++failures;
        return;
      }
      std::mt19937 random(static_cast<uint32_t>(t) + 1);
      for (int i = 0; i < kCalls; ++i) {
        switch (i % 4) {
          case 0: {  // a small call between the READs
            NfsReply n = ToNfsReply(c->Call(nfs3::kProgram, 3, nfs3::kNull, {}));
            if (!n.ok || n.accept_stat != 0 || !n.results.empty()) ++failures;
            break;
          }
          case 1: {
            uint32_t status = 1;
            std::optional<Fattr> a = Getattr(*c, fh_, &status);
            if (status != nfs3::NFS3_OK || !a || a->size != kFileSize) ++failures;
            break;
          }
          default: {
            const uint64_t offset = random() % kFileSize;
            const uint32_t count = random() % (kMaxUdpRead + 1);
            ReadResult r = Read(*c, fh_, offset, count);
            const size_t want = std::min<size_t>(count, kFileSize - offset);
            bool same =
                r.ok && r.status == nfs3::NFS3_OK && r.count == want && r.data.size() == want;
            for (size_t b = 0; same && b < want; ++b) same = r.data[b] == Byte(offset + b);
            if (!same) {
              ++failures;
              ADD_FAILURE() << "READ " << count << " at " << offset << " came back wrong";
            }
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(SendfileOnAndOff, UdpReadE2eTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "SendfileOn" : "SendfileOff";
                         });

}  // namespace
}  // namespace nfs3d::e2e
