// READ, WRITE, COMMIT through the table.
#include <atomic>
#include <string>
#include <thread>

#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7) % 26);
  return s;
}

TEST_F(Nfs3Test, WriteThenReadBack) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  const std::string data = Pattern(10001);  // not a multiple of 4: padding
  n3::WRITE3res w = client().Write(fh, 0, data, n3::FILE_SYNC);
  ASSERT_EQ(w.status, n3::NFS3_OK);
  EXPECT_EQ(w.count, data.size());
  EXPECT_EQ(w.committed, n3::FILE_SYNC);
  ASSERT_TRUE(w.file_wcc.after);
  EXPECT_EQ(w.file_wcc.after->size, data.size());

  ReadReply r = client().Read(fh, 0, 20000);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_EQ(r.count, data.size());
  EXPECT_EQ(r.data, data);
  EXPECT_TRUE(r.eof);
  ASSERT_TRUE(r.file_attributes);
  EXPECT_EQ(r.file_attributes->size, data.size());
}

TEST_F(Nfs3Test, ReadEof) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(client().Write(fh, 0, Pattern(100), n3::FILE_SYNC).status, n3::NFS3_OK);
  ReadReply mid = client().Read(fh, 0, 50);
  EXPECT_EQ(mid.count, 50u);
  EXPECT_FALSE(mid.eof);
  ReadReply exact = client().Read(fh, 50, 50);  // ends exactly at the end
  EXPECT_EQ(exact.count, 50u);
  EXPECT_TRUE(exact.eof);
  ReadReply past = client().Read(fh, 1000, 10);
  ASSERT_EQ(past.status, n3::NFS3_OK);
  EXPECT_EQ(past.count, 0u);
  EXPECT_TRUE(past.eof);
  ReadReply zero = client().Read(fh, 0, 0);
  ASSERT_EQ(zero.status, n3::NFS3_OK);
  EXPECT_EQ(zero.count, 0u);
}

// READs at the end of a file while WRITEs beside them grow it (issue 46: the
// client resends its writes and reads the page it writes into at once after
// a failover). No reply may say count 0 without eof, which the Linux client
// takes as an I/O error.
TEST_F(Nfs3Test, ReadAtTheEndWhileWritesGrowTheFileIsNeverEmptyWithoutEof) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  constexpr uint64_t kChunk = 512;
  constexpr int kWrites = 4000;
  std::atomic<uint64_t> end{0};  // bytes the writer has appended
  std::thread writer([&] {
    Nfs3TestClient w(program_);
    const std::string chunk = Pattern(kChunk);
    for (int i = 0; i < kWrites; ++i) {
      if (w.Write(fh, end.load(), chunk, n3::UNSTABLE).status != n3::NFS3_OK) return;
      end.fetch_add(kChunk);
    }
  });
  int empty_without_eof = 0, reads = 0;
  while (end.load() < kChunk * kWrites) {
    // At the end the writer reached, which its next WRITE extends.
    ReadReply r = client().Read(fh, end.load(), kChunk);
    ASSERT_EQ(r.status, n3::NFS3_OK);
    ++reads;
    if (r.count == 0 && !r.eof) ++empty_without_eof;
  }
  writer.join();
  EXPECT_EQ(empty_without_eof, 0) << "of " << reads << " reads";
}

TEST_F(Nfs3Test, ReadClampsToTransportRtmax) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  const std::string data = Pattern(200000);
  for (size_t off = 0; off < data.size(); off += 50000) {
    ASSERT_EQ(client().Write(fh, off, data.substr(off, 50000), n3::UNSTABLE).status, n3::NFS3_OK);
  }
  ReadReply tcp = client().Read(fh, 0, 100000);
  ASSERT_EQ(tcp.status, n3::NFS3_OK);
  EXPECT_EQ(tcp.count, 65536u);  // fixture TCP rtmax
  EXPECT_FALSE(tcp.eof);
  EXPECT_EQ(tcp.data, data.substr(0, 65536));
  client().caller.transport = rpc::Transport::kUdp;
  ReadReply udp = client().Read(fh, 1, 100000);
  EXPECT_EQ(udp.count, 32768u);  // fixture UDP rtmax
  EXPECT_EQ(udp.data, data.substr(1, 32768));
}

TEST_F(Nfs3Test, WriteOverWtmaxWritesWtmax) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  n3::WRITE3res w = client().Write(fh, 0, Pattern(70000), n3::UNSTABLE);
  ASSERT_EQ(w.status, n3::NFS3_OK);
  EXPECT_EQ(w.count, 65536u);
  EXPECT_EQ(client().Getattr(fh).obj_attributes.size, 65536u);
}

TEST_F(Nfs3Test, WriteCountBeyondDataIsGarbage) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  std::string reply;
  EXPECT_EQ(client().Run(
                n3::kWrite,
                [&](xdr::Encoder& e) {
                  EncodeFh(e, fh);
                  e.U64(0);
                  e.U32(100);  // count claims more than the 4 bytes sent
                  e.U32(n3::UNSTABLE);
                  e.String("abcd");
                },
                &reply),
            rpc::ProcResult::kGarbageArgs);
}

TEST_F(Nfs3Test, WriteStableModesAndCommitVerifier) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  const vfs::Verifier verf = backend_->WriteVerifier();
  for (n3::stable_how how : {n3::UNSTABLE, n3::DATA_SYNC, n3::FILE_SYNC}) {
    n3::WRITE3res w = client().Write(fh, 0, "hello", how);
    ASSERT_EQ(w.status, n3::NFS3_OK);
    EXPECT_GE(w.committed, how);  // never less stable than asked
    EXPECT_EQ(std::memcmp(w.verf, verf.data(), 8), 0);
  }
  n3::COMMIT3res c = client().Commit(fh, 0, 0);
  ASSERT_EQ(c.status, n3::NFS3_OK);
  EXPECT_EQ(std::memcmp(c.verf, verf.data(), 8), 0);
  EXPECT_TRUE(c.file_wcc.after);
}

TEST_F(Nfs3Test, ReadWithoutPermissionIsAcces) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(client().Setattr(fh, Mode(0600)).status, n3::NFS3_OK);
  client().caller.uid = 1000;
  client().caller.gid = 1000;
  ReadReply r = client().Read(fh, 0, 10);
  EXPECT_EQ(r.status, n3::NFS3ERR_ACCES);
  EXPECT_EQ(client().Write(fh, 0, "x", n3::UNSTABLE).status, n3::NFS3ERR_ACCES);
}

TEST_F(Nfs3Test, ReadOfDirectoryFails) {
  ReadReply r = client().Read(Root(kRwId), 0, 10);
  EXPECT_NE(r.status, n3::NFS3_OK);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
