// WRITE data spliced from the socket into the file ([tcp] splice_writes),
// end to end against the nfs3d binary. Every test runs with splicing on and
// off and expects the same: the bytes land whatever the record framing
// (several fragments, a header cut in two, data trickling in, pipelined
// calls, a count not a multiple of 4); stable_how, wcc data and the write
// verifier are as before; a retransmission gets the cached reply; bad
// arguments, a read-only export, a record that ends inside its data and a
// client that leaves mid-record are answered (or not) as before, and the
// connection or the server goes on.
#include <dirent.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

struct WriteReply {
  bool ok = false;  // an accepted reply
  uint32_t accept_stat = 0xffffffffu;
  uint32_t status = 0xffffffffu;
  std::optional<uint64_t> before_size;
  std::optional<uint64_t> after_size;
  uint32_t count = 0;
  uint32_t committed = 0;
  std::string verf;
  std::string raw;
};

WriteReply ParseWrite(const std::optional<std::string>& message) {
  WriteReply w;
  client::RpcReply r;
  if (!message || !client::ParseReply(Span(*message), &r) || r.reply_stat != 0) return w;
  w.raw = *message;
  w.accept_stat = r.accept_stat;
  if (r.accept_stat != 0) return w;
  w.ok = true;
  xdr::Decoder d(Span(r.results));
  w.status = d.U32();
  if (d.Bool()) {
    w.before_size = d.U64();
    for (int i = 0; i < 4; ++i) d.U32();
  }
  if (auto a = DecodePostOpAttr(d)) w.after_size = a->size;
  if (w.status == 0) {
    w.count = d.U32();
    w.committed = d.U32();
    w.verf = Str(d.FixedOpaque(8));
  }
  return w;
}

std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 24);
  }
  return s;
}

std::string WriteArgs(const std::string& fh, uint64_t offset, const std::string& data,
                      uint32_t stable = nfs3::UNSTABLE) {
  return Args()
      .Opaque(fh)
      .U64(offset)
      .U32(static_cast<uint32_t>(data.size()))
      .U32(stable)
      .Opaque(data)
      .str();
}

// A call message as a record of fragments of the given sizes (the last one
// takes the rest).
std::string Fragments(const std::string& message, const std::vector<size_t>& sizes) {
  std::string out;
  size_t pos = 0;
  for (size_t i = 0; i <= sizes.size(); ++i) {
    const bool last = i == sizes.size();
    const size_t n = last ? message.size() - pos : sizes[i];
    uint32_t mark = htonl((last ? 0x80000000u : 0) | static_cast<uint32_t>(n));
    out.append(reinterpret_cast<const char*>(&mark), 4);
    out.append(message, pos, n);
    pos += n;
  }
  return out;
}

class SpliceWriteE2eTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-splice-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export" / "sub");  // a sub-directory export
    fs::create_directories(dir_ / "ro");
    std::ofstream(dir_ / "ro" / "file") << "read-only";
    server_.Configure(
        dir_,
        absl::StrCat((dir_ / "export" / "sub").string(), " 127.0.0.1(rw,insecure,no_root_squash)\n",
                     (dir_ / "ro").string(), " 127.0.0.1(ro,insecure)\n"),
        absl::StrCat("\n[tcp]\nsplice_writes = ", GetParam() ? "64K" : "off",
                     "\n[log]\nlevel = debug\n"));
    ASSERT_TRUE(server_.Start()) << server_.Log();
    client_ = RawClient::Open(server_.port());
    ASSERT_NE(client_, nullptr);
    root_ = Mount(*client_, (dir_ / "export" / "sub").string());
    ASSERT_FALSE(root_.empty());
    file_ = NewHandle(Nfs(*client_, nfs3::kCreate, CreateArgs(root_, "f")));
    ASSERT_FALSE(file_.empty());
  }

  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  WriteReply Send(uint32_t xid, const std::string& args, const std::vector<size_t>& cuts = {}) {
    const std::string msg = client_->EncodeCall(xid, nfs3::kProgram, 3, nfs3::kWrite, args);
    EXPECT_TRUE(client_->SendBytes(Fragments(msg, cuts)));
    return Reply(xid);
  }
  WriteReply Reply(uint32_t xid) {
    for (;;) {
      std::optional<std::string> m = client_->Receive(absl::Seconds(10));
      if (!m) return WriteReply();
      client::RpcReply r;
      if (client::ParseReply(Span(*m), &r) && r.xid == xid) return ParseWrite(m);
    }
  }

  std::string FileBytes(const std::string& name = "f") {
    std::ifstream in(dir_ / "export" / "sub" / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Pipes nfs3d holds: splicing keeps its emptied pipes for the next WRITE.
  int ServerPipes() {
    int n = 0;
    const fs::path fds = fs::path("/proc") / std::to_string(server_.pid()) / "fd";
    for (const auto& e : fs::directory_iterator(fds)) {
      std::error_code ec;
      if (fs::read_symlink(e.path(), ec).string().rfind("pipe:", 0) == 0) ++n;
    }
    return n;
  }

  fs::path dir_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> client_;
  std::string root_, file_;
  uint32_t xid_ = 0x5911ce00u;
};

TEST_P(SpliceWriteE2eTest, DataLandsWhateverTheFraming) {
  const int pipes_before = ServerPipes();
  std::string expect;
  auto check = [&](const WriteReply& w, uint64_t offset, const std::string& data) {
    ASSERT_TRUE(w.ok);
    EXPECT_EQ(w.status, nfs3::NFS3_OK);
    EXPECT_EQ(w.count, data.size());
    if (expect.size() < offset + data.size()) expect.resize(offset + data.size());
    expect.replace(offset, data.size(), data);
  };
  // One fragment, 1 MiB.
  std::string a = Pattern(1 << 20, 1);
  check(Send(++xid_, WriteArgs(file_, 0, a)), 0, a);
  // Several fragments, cut inside the RPC header, inside the data (twice)
  // and 10 bytes before the end; a count that is not a multiple of 4.
  std::string b = Pattern((1 << 20) - 3, 2);
  check(Send(++xid_, WriteArgs(file_, 4096, b), {17, 300000, 1, 123456}), 4096, b);
  // The same, then its bytes trickling in: splices come up short.
  std::string c = Pattern(700001, 3);
  const std::string msg =
      client_->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kWrite, WriteArgs(file_, 2 << 20, c));
  const std::string stream = Fragments(msg, {70000, 200000});
  for (size_t pos = 0; pos < stream.size(); pos += 65536) {
    ASSERT_TRUE(client_->SendBytes(stream.substr(pos, 65536)));
    usleep(2000);
  }
  check(Reply(xid_), 2 << 20, c);
  // Pipelined: six WRITEs and a GETATTR in one send, replies in any order.
  std::string burst;
  std::vector<std::string> datas;
  const uint32_t first = xid_ + 1;
  for (int i = 0; i < 6; ++i) {
    datas.push_back(Pattern(300000 + i * 1001, 10 + i));
    burst += Fragments(client_->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kWrite,
                                           WriteArgs(file_, (3 << 20) + i * 400000, datas[i])),
                       {});
  }
  burst += Fragments(
      client_->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kGetattr, Args().Opaque(file_).str()),
      {});
  ASSERT_TRUE(client_->SendBytes(burst));
  int replies = 0;
  while (replies < 7) {
    std::optional<std::string> m = client_->Receive(absl::Seconds(10));
    ASSERT_TRUE(m.has_value());
    client::RpcReply r;
    ASSERT_TRUE(client::ParseReply(Span(*m), &r));
    ++replies;
    if (r.xid == xid_) continue;  // the GETATTR
    const size_t i = r.xid - first;
    ASSERT_LT(i, 6u);
    check(ParseWrite(m), (3 << 20) + i * 400000, datas[i]);
  }
  // A small WRITE, below the threshold.
  check(Send(++xid_, WriteArgs(file_, 100, "small")), 100, "small");
  EXPECT_TRUE(FileBytes() == expect);
  // Spliced WRITEs leave pooled pipes behind; without splicing there are none.
  if (GetParam()) {
    EXPECT_GT(ServerPipes(), pipes_before);
  } else {
    EXPECT_EQ(ServerPipes(), pipes_before);
  }
}

TEST_P(SpliceWriteE2eTest, StableHowWccVerifierAndRetransmission) {
  const std::string data = Pattern(1 << 20, 4);
  std::string verf;
  uint64_t size = 0;
  for (uint32_t stable : {nfs3::UNSTABLE, nfs3::DATA_SYNC, nfs3::FILE_SYNC}) {
    WriteReply w = Send(++xid_, WriteArgs(file_, size, data, stable));
    ASSERT_TRUE(w.ok);
    ASSERT_EQ(w.status, nfs3::NFS3_OK);
    EXPECT_EQ(w.committed, stable == nfs3::UNSTABLE ? nfs3::UNSTABLE : nfs3::FILE_SYNC);
    ASSERT_TRUE(w.before_size.has_value());
    EXPECT_EQ(*w.before_size, size);
    ASSERT_TRUE(w.after_size.has_value());
    EXPECT_EQ(*w.after_size, size + data.size());
    if (!verf.empty()) {
      EXPECT_EQ(w.verf, verf);
    }
    verf = w.verf;
    size += data.size();
  }
  NfsReply commit = Nfs(*client_, nfs3::kCommit, Args().Opaque(file_).U64(0).U32(0).str());
  ASSERT_EQ(commit.status, nfs3::NFS3_OK);
  EXPECT_EQ(commit.results.substr(commit.results.size() - 8), verf);
  // A retransmission after a reconnect, in other fragments: the cached reply
  // (byte for byte: a second run would report other times in its wcc data).
  const std::string args = WriteArgs(file_, 12345, Pattern(900000, 5), nfs3::FILE_SYNC);
  WriteReply first = Send(0x7e7e0001u, args);
  ASSERT_EQ(first.status, nfs3::NFS3_OK);
  client_ = RawClient::Open(server_.port());
  ASSERT_NE(client_, nullptr);
  WriteReply again = Send(0x7e7e0001u, args, {200, 400000});
  EXPECT_EQ(again.raw, first.raw);
  ASSERT_TRUE(server_.Stop());
  EXPECT_NE(server_.Log().find("drc: 1 hits"), std::string::npos) << server_.Log();
}

TEST_P(SpliceWriteE2eTest, BadCallsAreAnsweredAndTheConnectionGoesOn) {
  const std::string data = Pattern(500000, 6);
  const std::string before = FileBytes();
  // stable_how out of range: the decoder refuses it (GARBAGE_ARGS).
  WriteReply bad_stable = Send(++xid_, WriteArgs(file_, 0, data, 9));
  EXPECT_EQ(bad_stable.accept_stat, 4u);
  // A handle that is not one.
  WriteReply bad_fh = Send(++xid_, WriteArgs(std::string(32, 'x'), 0, data));
  ASSERT_TRUE(bad_fh.ok);
  EXPECT_NE(bad_fh.status, nfs3::NFS3_OK);
  // A read-only export.
  uint32_t st = 0;
  const std::string ro_root = Mount(*client_, (dir_ / "ro").string(), &st);
  ASSERT_FALSE(ro_root.empty());
  LookupResult ro = Lookup(*client_, ro_root, "file");
  ASSERT_EQ(ro.status, nfs3::NFS3_OK);
  EXPECT_EQ(Send(++xid_, WriteArgs(ro.fh, 0, data)).status, nfs3::NFS3ERR_ROFS);
  // A record that ends inside its data: GARBAGE_ARGS.
  std::string cut =
      client_->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kWrite, WriteArgs(file_, 0, data));
  cut.resize(cut.size() - 200000);
  ASSERT_TRUE(client_->SendBytes(Fragments(cut, {})));
  WriteReply garbage = Reply(xid_);
  EXPECT_EQ(garbage.accept_stat, 4u);  // GARBAGE_ARGS
  EXPECT_TRUE(FileBytes() == before);
  // The connection still serves.
  WriteReply good = Send(++xid_, WriteArgs(file_, 0, data));
  EXPECT_EQ(good.status, nfs3::NFS3_OK);
  EXPECT_TRUE(FileBytes() == data);
  std::ifstream ro_in(dir_ / "ro" / "file");
  std::string ro_text((std::istreambuf_iterator<char>(ro_in)), {});
  EXPECT_EQ(ro_text, "read-only");
}

// Data in many small TCP segments (1000-byte sends, no Nagle). On a real NIC
// each could take a pipe slot and fill the pipe early (then its bytes are
// read back into the record); loopback merges them, so this checks only that
// the bytes land.
TEST_P(SpliceWriteE2eTest, SmallSegments) {
  int one = 1;
  ASSERT_EQ(setsockopt(client_->fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
  const std::string data = Pattern(900000, 8);
  const std::string stream = Fragments(
      client_->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kWrite, WriteArgs(file_, 0, data)), {});
  for (size_t pos = 0; pos < stream.size(); pos += 1000) {
    ASSERT_TRUE(client_->SendBytes(stream.substr(pos, 1000)));
  }
  WriteReply w = Reply(xid_);
  EXPECT_EQ(w.status, nfs3::NFS3_OK);
  EXPECT_EQ(w.count, data.size());
  EXPECT_TRUE(FileBytes() == data);
}

TEST_P(SpliceWriteE2eTest, ClientLeavingMidRecordWritesNothing) {
  const std::string data = Pattern(1 << 20, 7);
  const std::string msg =
      client_->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kWrite, WriteArgs(file_, 0, data));
  const std::string stream = Fragments(msg, {});
  ASSERT_TRUE(client_->SendBytes(stream.substr(0, 600000)));
  usleep(100000);
  client_.reset();
  usleep(100000);
  EXPECT_EQ(FileBytes(), "");
  client_ = RawClient::Open(server_.port());
  ASSERT_NE(client_, nullptr);
  EXPECT_EQ(Send(++xid_, WriteArgs(file_, 0, data)).status, nfs3::NFS3_OK);
  EXPECT_TRUE(FileBytes() == data);
  EXPECT_TRUE(server_.Alive());
}

INSTANTIATE_TEST_SUITE_P(SpliceOnOff, SpliceWriteE2eTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Spliced" : "Copied"; });

}  // namespace
}  // namespace nfs3d::e2e
