// NLM locks across handovers (nfs3d --takeover), end to end with the
// binary: a lock granted before stays held through several handovers (the
// file itself stays locked for processes on the server: the descriptor
// holding the OFD lock crossed), another host's conflicting lock is refused
// (DENIED, never a grace-period answer) after each, a new lock is granted
// right after a handover (no grace period), and the NSM state number stays
// the same (no client is told to reclaim). A blocking LOCK queued before a
// handover is granted by the successor with a GRANTED callback.
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "nlm/nlm4_codec.h"
#include "nlm/nsm_codec.h"
#include "tests/integration/e2e_harness.h"
#include "tests/integration/nlm_callback_listener.h"
#include "xdr/encode_to_string.h"

namespace nfs3d::e2e {
namespace {

class HandoverLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-handover-lock-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export");
    server_.Configure(dir_,
                      (dir_ / "export").string() + " 127.0.0.1(rw,insecure,no_root_squash)\n");
    ASSERT_TRUE(server_.Start()) << server_.Log();
    std::unique_ptr<RawClient> c = Open();
    root_ = Mount(*c, (dir_ / "export").string());
    ASSERT_FALSE(root_.empty());
    fh_ = NewHandle(Nfs(*c, nfs3::kCreate, CreateArgs(root_, "locked")));
    ASSERT_FALSE(fh_.empty());
  }

  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  std::unique_ptr<RawClient> Open() {
    ClientOptions o;
    o.transport = rpc::Transport::kTcp;
    return RawClient::Open(server_.port(), o);
  }

  nlm::nlm4_lock LockOf(const std::string& host, uint64_t offset, uint64_t len) {
    nlm::nlm4_lock l;
    l.caller_name = host;
    l.fh = fh_;
    l.oh = "owner@" + host;
    l.svid = 42;
    l.l_offset = offset;
    l.l_len = len;
    return l;
  }

  // NLM4 LOCK (non-blocking, exclusive) over a new connection: the status.
  uint32_t Lock(const std::string& host, uint64_t offset, uint64_t len, bool block = false) {
    nlm::nlm4_lockargs args;
    args.cookie = "c";
    args.block = block;
    args.exclusive = true;
    args.alock = LockOf(host, offset, len);
    args.state = 1;
    return NlmStatus(nlm::kLock, xdr::EncodeToString(args));
  }

  uint32_t Unlock(const std::string& host, uint64_t offset, uint64_t len) {
    nlm::nlm4_unlockargs args;
    args.cookie = "u";
    args.alock = LockOf(host, offset, len);
    return NlmStatus(nlm::kUnlock, xdr::EncodeToString(args));
  }

  uint32_t NlmStatus(uint32_t proc, const std::string& args) {
    std::unique_ptr<RawClient> c = Open();
    if (c == nullptr) return 0xffffffffu;
    NfsReply r = ToNfsReply(c->Call(nlm::kProgram, nlm::kVersion4, proc, args));
    if (!r.ok || r.reply_stat != 0 || r.accept_stat != 0) return 0xfffffffeu;
    xdr::Decoder d(Span(r.results));
    d.Opaque(nlm::kMaxNetobj);  // cookie
    return d.U32();
  }

  // SM_STAT: the server's NSM state number.
  int32_t NsmState() {
    std::unique_ptr<RawClient> c = Open();
    nsm::sm_name name;
    name.mon_name = "probe";
    NfsReply r =
        ToNfsReply(c->Call(nsm::kProgram, nsm::kVersion, nsm::kStat, xdr::EncodeToString(name)));
    if (!r.ok || r.results.size() < 8) return -1;
    xdr::Decoder d(Span(r.results));
    d.U32();
    return static_cast<int32_t>(d.U32());
  }

  // Whether a process here can lock [offset, offset+len) of the file: the
  // NLM lock is an OFD lock on the file itself.
  bool LocallyLockable(off_t offset, off_t len) {
    int fd = open((dir_ / "export" / "locked").c_str(), O_RDWR);
    if (fd < 0) return false;
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = offset;
    fl.l_len = len;
    bool ok = fcntl(fd, F_OFD_SETLK, &fl) == 0;
    close(fd);
    return ok;
  }

  fs::path dir_;
  NfsdProcess server_;
  std::string root_, fh_;
};

TEST_F(HandoverLockTest, LockHeldThroughHandoversWithNoGracePeriod) {
  ASSERT_EQ(Lock("host-a", 0, 100), nlm::NLM4_GRANTED);
  ASSERT_EQ(Lock("host-b", 0, 100), nlm::NLM4_DENIED);
  ASSERT_FALSE(LocallyLockable(0, 100));
  const int32_t state = NsmState();
  ASSERT_GT(state, 0);

  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(server_.TakeOver()) << server_.Log();
    // The predecessor is gone; its descriptor is not the one holding the lock.
    EXPECT_FALSE(LocallyLockable(0, 100)) << "round " << round;
    EXPECT_EQ(Lock("host-b", 0, 100), nlm::NLM4_DENIED) << "round " << round;
    // A new lock at once: no grace period.
    EXPECT_EQ(Lock("host-b", 1000 + round * 10, 10), nlm::NLM4_GRANTED) << "round " << round;
    EXPECT_EQ(NsmState(), state) << "round " << round;
  }
  EXPECT_NE(server_.Log().find("took over 1 locks"), std::string::npos) << server_.Log();
  // The holder lets go: the other host gets it, and it is a file lock again.
  EXPECT_EQ(Unlock("host-a", 0, 100), nlm::NLM4_GRANTED);
  EXPECT_EQ(Lock("host-b", 0, 100), nlm::NLM4_GRANTED);
  EXPECT_FALSE(LocallyLockable(0, 100));
  EXPECT_EQ(Unlock("host-b", 0, 100), nlm::NLM4_GRANTED);
  EXPECT_EQ(Unlock("host-b", 1000, 100), nlm::NLM4_GRANTED);
  EXPECT_TRUE(LocallyLockable(0, 100));
}

// A successor that did not get the state (its predecessor died after it was
// ready, before sending it) is a restart for the locks: a new NSM state and
// a grace period in which new locks wait.
TEST_F(HandoverLockTest, LostStateMeansGraceAsAfterARestart) {
  ASSERT_TRUE(server_.Stop());
  server_.set_start_env("NFS3D_TEST_HANDOVER_KILL=predecessor-finished");
  ASSERT_TRUE(server_.Start()) << server_.Log();
  ASSERT_EQ(Lock("host-a", 0, 100), nlm::NLM4_GRANTED);
  const int32_t state = NsmState();
  const pid_t old = server_.pid();
  const pid_t successor = server_.SpawnTakeover("NFS3D_TEST_HANDOVER_KILL=none");
  int status = 0;
  ASSERT_EQ(waitpid(old, &status, 0), old);
  EXPECT_TRUE(WIFSIGNALED(status));
  server_.Adopt(successor);
  for (int i = 0; i < 100 && !server_.Answers(rpc::Transport::kTcp); ++i) usleep(100000);
  ASSERT_TRUE(server_.Answers(rpc::Transport::kTcp)) << server_.Log();
  EXPECT_GT(NsmState(), state);
  EXPECT_EQ(Lock("host-b", 2000, 10), nlm::NLM4_DENIED_GRACE_PERIOD);
  EXPECT_NE(server_.Log().find("serving without the predecessor's state"), std::string::npos);
}

// The client's callback service (port 111) needs a loopback of its own.
class HandoverBlockedLockTest : public HandoverLockTest {
 protected:
  void SetUp() override {
    if (!PrivateLoopback()) GTEST_SKIP() << "needs a network namespace of its own (root)";
    HandoverLockTest::SetUp();
  }
};

TEST_F(HandoverBlockedLockTest, QueuedLockIsGrantedByTheSuccessorWithACallback) {
  NlmCallbackListener host_b;
  ASSERT_TRUE(host_b.Start().ok());
  ASSERT_EQ(Lock("host-a", 0, 100), nlm::NLM4_GRANTED);
  ASSERT_EQ(Lock("host-b", 0, 100, /*block=*/true), nlm::NLM4_BLOCKED);

  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  EXPECT_NE(server_.Log().find("1 waiters"), std::string::npos) << server_.Log();
  EXPECT_TRUE(host_b.Granted(absl::ZeroDuration()).empty());
  ASSERT_EQ(Unlock("host-a", 0, 100), nlm::NLM4_GRANTED);

  // Bounded wait for the callback, not a timing assertion.
  std::vector<nlm::nlm4_testargs> granted = host_b.Granted(absl::Seconds(20));
  ASSERT_EQ(granted.size(), 1u) << server_.Log();
  EXPECT_EQ(granted[0].cookie, "c");
  EXPECT_TRUE(granted[0].exclusive);
  EXPECT_EQ(granted[0].alock.caller_name, "host-b");
  EXPECT_EQ(granted[0].alock.fh, fh_);
  EXPECT_EQ(granted[0].alock.l_len, 100u);
  // host-b holds it: host-a is refused, host-b's own re-ask is granted.
  EXPECT_EQ(Lock("host-a", 0, 100), nlm::NLM4_DENIED);
  EXPECT_EQ(Lock("host-b", 0, 100), nlm::NLM4_GRANTED);
  EXPECT_FALSE(LocallyLockable(0, 100));
  EXPECT_EQ(Unlock("host-b", 0, 100), nlm::NLM4_GRANTED);
}

}  // namespace
}  // namespace nfs3d::e2e
