// OfdLockMirror and the lock manager with it, on real files: NLM locks are
// seen by processes on the server (fcntl locks of this test process) and
// theirs by NLM.
#include "nlm/ofd_lock_mirror.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "gtest/gtest.h"

#include "nlm/nlm_service.h"
#include "tests/nlm/fake_peer_caller.h"
#include "tests/support/temp_dir.h"

namespace nfs3d::nlm {
namespace {

class OfdLockMirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    for (const char* name : {"f1", "f2"}) {
      const int fd = open((dir_ + "/" + name).c_str(), O_CREAT | O_RDWR, 0644);
      ASSERT_GE(fd, 0);
      close(fd);
    }
    local_ = open(Path("f1").c_str(), O_RDWR);
    ASSERT_GE(local_, 0);
  }
  void TearDown() override { close(local_); }

  std::string Path(const std::string& file) const { return dir_ + "/" + file; }
  // Lock-table keys are file names here.
  OfdLockMirror::Opener Opener() const {
    return [this](const std::string& file) -> absl::StatusOr<int> {
      const int fd = open(Path(file).c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) return absl::NotFoundError(file);
      return fd;
    };
  }

  // A classic (per-process) fcntl lock of this process on f1, as any local
  // program would take: F_WRLCK/F_RDLCK/F_UNLCK over [start, start+len).
  bool LocalLock(short type, off_t start, off_t len) {
    struct flock fl = {};
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
    return fcntl(local_, F_SETLK, &fl) == 0;
  }

  test_support::TempDir tmp_{"ofd_mirror_test"};
  const std::string dir_ = tmp_.path();
  int local_ = -1;
  const LockOwner a_{"hostA", 1, "ohA"};
  const LockOwner b_{"hostB", 2, "ohB"};
};

TEST_F(OfdLockMirrorTest, AnNlmLockIsSeenLocallyUntilUnlocked) {
  OfdLockMirror m(Opener());
  ASSERT_TRUE(m.Set("f1", a_, 0, 99, true));
  EXPECT_FALSE(LocalLock(F_WRLCK, 50, 10));
  EXPECT_FALSE(LocalLock(F_RDLCK, 99, 1));
  EXPECT_TRUE(LocalLock(F_WRLCK, 100, 10));            // past the range
  ASSERT_TRUE(m.Set("f1", a_, 40, 59, std::nullopt));  // unlock the middle: a split
  EXPECT_TRUE(LocalLock(F_WRLCK, 45, 5));
  EXPECT_FALSE(LocalLock(F_WRLCK, 60, 1));
  m.Forget("f1", a_);  // closing the descriptor drops the rest
  EXPECT_EQ(m.descriptors(), 0u);
  EXPECT_TRUE(LocalLock(F_WRLCK, 0, 0));
}

TEST_F(OfdLockMirrorTest, ALocalLockIsAConflict) {
  OfdLockMirror m(Opener());
  ASSERT_TRUE(LocalLock(F_WRLCK, 10, 10));
  EXPECT_FALSE(m.Set("f1", a_, 0, 99, false));
  std::optional<Lock> holder = m.Conflict("f1", a_, 0, kToEnd, false);
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->first, 10u);
  EXPECT_EQ(holder->last, 19u);
  EXPECT_TRUE(holder->exclusive);
  EXPECT_EQ(holder->owner.svid, getpid());
  EXPECT_FALSE(m.Conflict("f1", a_, 20, 30, true).has_value());
  ASSERT_TRUE(LocalLock(F_UNLCK, 0, 0));
  EXPECT_TRUE(m.Set("f1", a_, 0, 99, false));
  EXPECT_FALSE(m.Conflict("f2", a_, 0, kToEnd, true).has_value());
  EXPECT_EQ(m.descriptors(), 1u);  // the probe of f2 kept no descriptor
}

TEST_F(OfdLockMirrorTest, ToEndOfFileReachesEveryOffset) {
  OfdLockMirror m(Opener());
  ASSERT_TRUE(m.Set("f1", a_, 100, kToEnd, true));
  EXPECT_FALSE(LocalLock(F_RDLCK, off_t{1} << 40, 1));
  EXPECT_TRUE(LocalLock(F_RDLCK, 0, 100));
  // A range starting beyond off_t cannot be held locally: not mirrored.
  EXPECT_TRUE(m.Set("f1", b_, kToEnd - 5, kToEnd, true));
}

TEST_F(OfdLockMirrorTest, ForgetHostDropsEveryLockOfItsOwners) {
  OfdLockMirror m(Opener());
  const LockOwner a2{"hostA", 9, "other"};
  ASSERT_TRUE(m.Set("f1", a_, 0, 9, true));
  ASSERT_TRUE(m.Set("f1", a2, 20, 29, false));
  ASSERT_TRUE(m.Set("f2", a_, 0, 9, true));
  ASSERT_TRUE(m.Set("f1", b_, 40, 49, true));
  EXPECT_FALSE(m.Set("f1", b_, 0, 9, true));  // owners conflict in the kernel too
  m.ForgetHost("hostA");
  EXPECT_EQ(m.descriptors(), 1u);
  EXPECT_TRUE(LocalLock(F_WRLCK, 0, 30));
  EXPECT_FALSE(LocalLock(F_WRLCK, 40, 1));
}

TEST_F(OfdLockMirrorTest, BeyondTheDescriptorBoundLocksAreNotMirrored) {
  OfdLockMirror m(Opener(), /*max_descriptors=*/1);
  ASSERT_TRUE(m.Set("f1", a_, 0, 9, true));
  EXPECT_TRUE(m.Set("f1", b_, 20, 29, true));
  EXPECT_EQ(m.descriptors(), 1u);
  EXPECT_TRUE(LocalLock(F_WRLCK, 20, 10));  // b's lock lives in the table only
}

// The lock manager with the mirror: a process on the server and an NLM
// client exclude each other both ways.
TEST_F(OfdLockMirrorTest, LockManagerAndLocalProcessesExcludeEachOther) {
  FakePeerCaller caller;
  OfdLockMirror mirror(Opener());
  NlmService s(
      {},
      [](const rpc::CallContext&, const std::string& fh, std::string* key) {
        *key = fh;
        return NLM4_GRANTED;
      },
      &caller, nullptr);
  s.SetMirror(&mirror);
  s.Start(false);
  rpc::TransportInfo t;
  auto* sin = reinterpret_cast<sockaddr_in*>(&t.peer);
  sin->sin_family = AF_INET;
  inet_pton(AF_INET, "10.0.0.2", &sin->sin_addr);
  t.peer_len = sizeof(sockaddr_in);
  rpc::CallContext ctx;
  ctx.transport = &t;
  ctx.vers = kVersion4;
  nlm4_lockargs la;
  la.alock.caller_name = "hostA";
  la.alock.fh = "f1";
  la.alock.oh = "ohA";
  la.alock.svid = 1;
  la.alock.l_offset = 0;
  la.alock.l_len = 100;
  la.exclusive = true;

  // A local lock makes the NLM lock conflict; TEST names the local holder.
  ASSERT_TRUE(LocalLock(F_RDLCK, 50, 1));
  EXPECT_EQ(s.Lock(ctx, la, true).stat, NLM4_DENIED);
  nlm4_testargs ta;
  ta.alock = la.alock;
  ta.exclusive = true;
  nlm4_testres tr = s.Test(ctx, ta);
  ASSERT_EQ(tr.stat, NLM4_DENIED);
  EXPECT_EQ(tr.holder.svid, getpid());
  EXPECT_EQ(tr.holder.l_offset, 50u);
  EXPECT_FALSE(tr.holder.exclusive);
  EXPECT_EQ(s.lock_count(), 0u);

  // Once it goes, NLM gets the lock, and then the local process cannot.
  ASSERT_TRUE(LocalLock(F_UNLCK, 0, 0));
  ASSERT_EQ(s.Lock(ctx, la, true).stat, NLM4_GRANTED);
  EXPECT_FALSE(LocalLock(F_WRLCK, 99, 1));
  nlm4_unlockargs ua;
  ua.alock = la.alock;
  ASSERT_EQ(s.Unlock(ctx, ua).stat, NLM4_GRANTED);
  EXPECT_TRUE(LocalLock(F_WRLCK, 99, 1));
  EXPECT_EQ(mirror.descriptors(), 0u);  // nothing held: descriptor closed

  // FREE_ALL (or the client's reboot) drops its locks on the file too.
  ASSERT_TRUE(LocalLock(F_UNLCK, 0, 0));
  ASSERT_EQ(s.Lock(ctx, la, true).stat, NLM4_GRANTED);
  s.FreeAll(ctx, "hostA");
  EXPECT_TRUE(LocalLock(F_WRLCK, 0, 100));
  s.Stop();
}

}  // namespace
}  // namespace nfs3d::nlm
