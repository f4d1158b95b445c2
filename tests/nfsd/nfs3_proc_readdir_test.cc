// READDIR, READDIRPLUS through the table: sizes in XDR bytes, paging, cookies.
#include <fcntl.h>
#include <unistd.h>

#include <set>
#include <string>

#include "absl/strings/str_cat.h"

#include "tests/nfsd/nfs3_fixture.h"
#include "xdr/nfs3_codec.h"

namespace nfs3d::nfsd::testing {
namespace {

class Nfs3ReaddirTest : public Nfs3Test {
 protected:
  void MakeFiles(const std::string& dir, int n) {
    for (int i = 0; i < n; ++i) {
      int fd = open(Path(absl::StrCat(dir, "/file-with-a-longish-name-", i)).c_str(),
                    O_CREAT | O_WRONLY, 0644);
      ASSERT_GE(fd, 0);
      close(fd);
    }
  }
};

TEST_F(Nfs3ReaddirTest, PagesHonourCountAndResumeWithoutGaps) {
  MakeFiles("rw", 1000);
  const uint32_t kCount = 4096;
  std::multiset<std::string> names;
  uint64_t cookie = 0;
  uint8_t verf[8] = {};
  int pages = 0;
  for (;;) {
    n3::READDIR3res r = client().Readdir(Root(kRwId), cookie, verf, kCount);
    ASSERT_EQ(r.status, n3::NFS3_OK);
    EXPECT_LE(client().last_reply_size(), kCount);
    EXPECT_TRUE(r.dir_attributes);
    ++pages;
    ASSERT_LT(pages, 1000);
    for (const n3::entry3& e : r.entries) names.insert(e.name);
    if (r.eof) break;
    ASSERT_FALSE(r.entries.empty());
    cookie = r.entries.back().cookie;
    std::memcpy(verf, r.cookieverf, 8);
  }
  EXPECT_GT(pages, 5);
  EXPECT_EQ(names.size(), 1002u);  // 1000 files, ".", ".."
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(names.count("."), 1u);
  EXPECT_EQ(names.count(".."), 1u);
  EXPECT_EQ(names.count("file-with-a-longish-name-999"), 1u);
}

TEST_F(Nfs3ReaddirTest, ReplyFillsCountClosely) {
  MakeFiles("rw", 200);
  for (uint32_t count : {512u, 1000u, 1024u, 3333u, 8192u}) {
    n3::READDIR3res r = client().Readdir(Root(kRwId), 0, nullptr, count);
    ASSERT_EQ(r.status, n3::NFS3_OK) << count;
    EXPECT_LE(client().last_reply_size(), count);
    // Another entry would not have fitted (entries here are ~56 bytes).
    if (!r.eof) {
      EXPECT_GT(client().last_reply_size() + 60, count) << count;
    }
  }
}

TEST_F(Nfs3ReaddirTest, TooSmallForOneEntry) {
  n3::READDIR3res r = client().Readdir(Root(kRwId), 0, nullptr, 50);
  EXPECT_EQ(r.status, n3::NFS3ERR_TOOSMALL);
  n3::READDIRPLUS3res p = client().Readdirplus(Root(kRwId), 0, nullptr, 50, 150);
  EXPECT_EQ(p.status, n3::NFS3ERR_TOOSMALL);
}

TEST_F(Nfs3ReaddirTest, ReaddirOfFileIsNotdir) {
  n3::nfs_fh3 f = MakeFile(Root(kRwId), "f");
  EXPECT_EQ(client().Readdir(f, 0, nullptr, 4096).status, n3::NFS3ERR_NOTDIR);
}

TEST_F(Nfs3ReaddirTest, ReaddirplusHonoursDircountAndMaxcount) {
  MakeFiles("rw", 300);
  const uint32_t kDircount = 1024;
  const uint32_t kMaxcount = 8192;
  std::set<std::string> names;
  uint64_t cookie = 0;
  uint8_t verf[8] = {};
  for (int pages = 0;; ++pages) {
    ASSERT_LT(pages, 1000);
    n3::READDIRPLUS3res r = client().Readdirplus(Root(kRwId), cookie, verf, kDircount, kMaxcount);
    ASSERT_EQ(r.status, n3::NFS3_OK);
    EXPECT_LE(client().last_reply_size(), kMaxcount);
    size_t dir_bytes = 0;
    for (const n3::entryplus3& e : r.entries) {
      dir_bytes += n3::DircountSize(e);
      EXPECT_TRUE(names.insert(e.name).second) << e.name;
      ASSERT_TRUE(e.name_attributes) << e.name;
      ASSERT_TRUE(e.name_handle) << e.name;
      EXPECT_EQ(e.name_attributes->fileid, e.fileid) << e.name;
    }
    EXPECT_LE(dir_bytes, kDircount);
    if (r.eof) break;
    ASSERT_FALSE(r.entries.empty());
    cookie = r.entries.back().cookie;
    std::memcpy(verf, r.cookieverf, 8);
  }
  EXPECT_EQ(names.size(), 302u);
}

// What the lab's client kernels ask for (bench/kernels.sh captured it):
// 5.10 sends READDIRPLUS with dircount 4096 and maxcount 32768, 6.1 and 6.12
// 65536 and 65536; 6.12 also goes on with READDIR from a READDIRPLUS cookie
// when a plain `ls` needs no attributes. Every page's cookie and verifier
// resume the other procedure without a gap or a repeat.
TEST_F(Nfs3ReaddirTest, KernelSizesAndMixedProceduresResumeWithoutGaps) {
  MakeFiles("rw", 600);
  struct Sizes {
    uint32_t dircount, maxcount;
  };
  for (const Sizes& sz : {Sizes{4096, 32768}, Sizes{65536, 65536}}) {
    SCOPED_TRACE(absl::StrCat("dircount ", sz.dircount, " maxcount ", sz.maxcount));
    std::multiset<std::string> names;
    uint64_t cookie = 0;
    uint8_t verf[8] = {};
    for (int page = 0;; ++page) {
      ASSERT_LT(page, 1000);
      bool eof;
      if (page % 2 == 0) {
        n3::READDIRPLUS3res r =
            client().Readdirplus(Root(kRwId), cookie, verf, sz.dircount, sz.maxcount);
        ASSERT_EQ(r.status, n3::NFS3_OK) << page;
        EXPECT_LE(client().last_reply_size(), sz.maxcount);
        for (const n3::entryplus3& e : r.entries) names.insert(e.name);
        eof = r.eof;
        if (!eof) {
          ASSERT_FALSE(r.entries.empty()) << page;
          cookie = r.entries.back().cookie;
        }
        std::memcpy(verf, r.cookieverf, 8);
      } else {
        n3::READDIR3res r = client().Readdir(Root(kRwId), cookie, verf, sz.maxcount);
        ASSERT_EQ(r.status, n3::NFS3_OK) << page;
        for (const n3::entry3& e : r.entries) names.insert(e.name);
        eof = r.eof;
        if (!eof) {
          ASSERT_FALSE(r.entries.empty()) << page;
          cookie = r.entries.back().cookie;
        }
        std::memcpy(verf, r.cookieverf, 8);
      }
      if (eof) break;
    }
    EXPECT_EQ(names.size(), 602u);  // 600 files, ".", ".."
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  }
}

TEST_F(Nfs3ReaddirTest, ReaddirplusHandlesWork) {
  MakeFile(Root(kRwId), "f");
  n3::READDIRPLUS3res r = client().Readdirplus(Root(kRwId), 0, nullptr, 4096, 32768);
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_TRUE(r.eof);
  const uint64_t root_id = client().Getattr(Root(kRwId)).obj_attributes.fileid;
  int seen = 0;
  for (const n3::entryplus3& e : r.entries) {
    ASSERT_TRUE(e.name_handle) << e.name;
    n3::GETATTR3res g = client().Getattr(*e.name_handle);
    ASSERT_EQ(g.status, n3::NFS3_OK) << e.name;
    if (e.name == "f") {
      EXPECT_EQ(g.obj_attributes.type, n3::NF3REG);
      ++seen;
    } else {
      // "." and ".." of the export root are both the root.
      EXPECT_EQ(g.obj_attributes.fileid, root_id) << e.name;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
