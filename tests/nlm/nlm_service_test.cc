#include "nlm/nlm_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>

#include "gtest/gtest.h"

#include "nlm/nlm4_codec.h"
#include "nlm/nsm_codec.h"
#include "nlm/nsm_program.h"
#include "tests/nlm/fake_peer_caller.h"
#include "xdr/decoder.h"

namespace nfs3d::nlm {
namespace {

// Every handle is valid and names itself; "stale" is not.
nlm4_stats TestResolver(const rpc::CallContext&, const std::string& fh, std::string* key) {
  if (fh == "stale") return NLM4_STALE_FH;
  *key = fh;
  return NLM4_GRANTED;
}

rpc::TransportInfo Peer(const char* ip) {
  rpc::TransportInfo t;
  t.transport = rpc::Transport::kUdp;
  auto* sin = reinterpret_cast<sockaddr_in*>(&t.peer);
  sin->sin_family = AF_INET;
  inet_pton(AF_INET, ip, &sin->sin_addr);
  sin->sin_port = htons(800);
  t.peer_len = sizeof(sockaddr_in);
  auto* local = reinterpret_cast<sockaddr_in*>(&t.local);
  local->sin_family = AF_INET;
  inet_pton(AF_INET, "10.0.0.1", &local->sin_addr);
  t.local_len = sizeof(sockaddr_in);
  return t;
}

nlm4_lockargs LockArgs(const std::string& host, int32_t svid, uint64_t off, uint64_t len,
                       bool exclusive, bool block, const std::string& fh = "file1") {
  nlm4_lockargs a;
  a.cookie = "c" + std::to_string(svid);
  a.block = block;
  a.exclusive = exclusive;
  a.alock.caller_name = host;
  a.alock.fh = fh;
  a.alock.oh = host + "/" + std::to_string(svid);
  a.alock.svid = svid;
  a.alock.l_offset = off;
  a.alock.l_len = len;
  return a;
}

nlm4_unlockargs UnlockArgs(const nlm4_lockargs& l) {
  nlm4_unlockargs u;
  u.cookie = l.cookie;
  u.alock = l.alock;
  return u;
}

class NlmServiceTest : public ::testing::Test {
 protected:
  NlmServiceTest() {
    a_transport_ = Peer("10.0.0.2");
    b_transport_ = Peer("10.0.0.3");
    a_.transport = &a_transport_;
    a_.vers = kVersion4;
    b_.transport = &b_transport_;
    b_.vers = kVersion4;
  }

  std::unique_ptr<NlmService> Make(NlmOptions options = {}, StatusStore* store = nullptr) {
    options.notify_retry = absl::Milliseconds(10);
    return std::make_unique<NlmService>(options, TestResolver, &caller_, store);
  }

  FakePeerCaller caller_;
  rpc::TransportInfo a_transport_, b_transport_;
  rpc::CallContext a_, b_;
};

TEST_F(NlmServiceTest, ConflictingLockIsDeniedThenGrantedAfterUnlock) {
  auto s = Make();
  s->Start(false);
  nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  EXPECT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  nlm4_lockargs lb = LockArgs("B", 1, 10, 10, false, false);
  nlm4_res res = s->Lock(b_, lb, true);
  EXPECT_EQ(res.stat, NLM4_DENIED);
  EXPECT_EQ(res.cookie, lb.cookie);

  nlm4_testargs t;
  t.exclusive = false;
  t.alock = lb.alock;
  nlm4_testres tr = s->Test(b_, t);
  ASSERT_EQ(tr.stat, NLM4_DENIED);
  EXPECT_EQ(tr.holder.svid, 1);
  EXPECT_TRUE(tr.holder.exclusive);
  EXPECT_EQ(tr.holder.oh, "");  // not handed out (knfsd neither)
  EXPECT_EQ(tr.holder.l_len, 0u);

  EXPECT_EQ(s->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(b_, lb, true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->lock_count(), 1u);
}

TEST_F(NlmServiceTest, WaitingInACycleIsADeadlock) {
  auto s = Make();
  s->Start(false);
  rpc::TransportInfo c_transport = Peer("10.0.0.4");
  rpc::CallContext c = a_;
  c.transport = &c_transport;
  // A holds f1, B holds f2, C holds f3.
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 10, true, false, "f1"), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 10, true, false, "f2"), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(c, LockArgs("C", 3, 0, 10, true, false, "f3"), true).stat, NLM4_GRANTED);
  // A waits for B, B waits for C: a chain, no cycle yet.
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 1, 5, 1, false, true, "f2"), true).stat, NLM4_BLOCKED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 0, true, true, "f3"), true).stat, NLM4_BLOCKED);
  // C waiting for A would close it; without waiting it is a plain denial.
  EXPECT_EQ(s->Lock(c, LockArgs("C", 3, 9, 1, false, true, "f1"), true).stat, NLM4_DEADLCK);
  EXPECT_EQ(s->Lock(c, LockArgs("C", 3, 9, 1, false, false, "f1"), true).stat, NLM4_DENIED);
  EXPECT_EQ(s->blocked_count(), 2u);
  // Beside A's lock, not over it: no conflict, no cycle.
  EXPECT_EQ(s->Lock(c, LockArgs("C", 3, 20, 1, true, true, "f1"), true).stat, NLM4_GRANTED);
  // Another process of host C (svid 4) holds nothing: it may wait.
  EXPECT_EQ(s->Lock(c, LockArgs("C", 4, 0, 1, true, true, "f1"), true).stat, NLM4_BLOCKED);
}

TEST_F(NlmServiceTest, TwoWaitersOnOneLockAreNoDeadlock) {
  auto s = Make();
  s->Start(false);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false, "f1"), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 0, true, false, "f2"), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 0, true, true, "f1"), true).stat, NLM4_BLOCKED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 3, 0, 0, true, true, "f1"), true).stat, NLM4_BLOCKED);
  // A asking for f2 (held by B, who waits for A): that one is a cycle.
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, true, "f2"), true).stat, NLM4_DEADLCK);
}

TEST_F(NlmServiceTest, DeadlockSearchIsBounded) {
  NlmOptions options;
  options.max_blocked_per_host = 1000;
  auto s = Make(options);
  s->Start(false);
  // A chain of 300 owners, each waiting for the next one's file; the last
  // asking for the first file closes a cycle too long to be searched: it
  // waits like any other request (each LOCK's search stays cheap).
  constexpr int kOwners = 300;
  for (int i = 0; i < kOwners; ++i) {
    const std::string f = "f" + std::to_string(i);
    ASSERT_EQ(s->Lock(a_, LockArgs("A", i, 0, 1, true, false, f), true).stat, NLM4_GRANTED);
  }
  for (int i = 0; i + 1 < kOwners; ++i) {
    const std::string next = "f" + std::to_string(i + 1);
    ASSERT_EQ(s->Lock(a_, LockArgs("A", i, 0, 1, true, true, next), true).stat, NLM4_BLOCKED);
  }
  EXPECT_EQ(s->Lock(a_, LockArgs("A", kOwners - 1, 0, 1, true, true, "f0"), true).stat,
            NLM4_BLOCKED);
  // A short cycle is still found: owner 0 waits for 1; 1 asking for f0.
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 1, true, false, "g0"), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 1, true, false, "g1"), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 1, true, true, "g1"), true).stat, NLM4_BLOCKED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 1, true, true, "g0"), true).stat, NLM4_DEADLCK);
}

TEST_F(NlmServiceTest, StaleHandle) {
  auto s = Make();
  s->Start(false);
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false, "stale"), true).stat, NLM4_STALE_FH);
}

TEST_F(NlmServiceTest, BlockedLockIsGrantedWithACallback) {
  auto s = Make();
  s->Start(false);
  nlm4_lockargs la = LockArgs("A", 1, 0, 100, true, false);
  ASSERT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  nlm4_lockargs lb = LockArgs("B", 7, 50, 10, true, true);
  EXPECT_EQ(s->Lock(b_, lb, true).stat, NLM4_BLOCKED);
  // The client polls again: still one waiter.
  EXPECT_EQ(s->Lock(b_, lb, true).stat, NLM4_BLOCKED);
  EXPECT_EQ(s->blocked_count(), 1u);

  ASSERT_EQ(s->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);
  s->DrainCallbacks();
  EXPECT_EQ(s->blocked_count(), 0u);
  std::vector<PeerCall> calls = caller_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].prog, kProgram);
  EXPECT_EQ(calls[0].vers, kVersion4);
  EXPECT_EQ(calls[0].proc, kGranted);
  EXPECT_EQ(AddressString(calls[0].peer), "10.0.0.3");
  nlm4_testargs granted;
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(calls[0].args.data()), calls[0].args.size());
  ASSERT_TRUE(Decode(d, &granted));
  EXPECT_EQ(granted.cookie, lb.cookie);
  EXPECT_EQ(granted.alock.svid, 7);
  EXPECT_EQ(granted.alock.l_offset, 50u);
  EXPECT_TRUE(granted.exclusive);
  // B holds it now; asking again is idempotent.
  EXPECT_EQ(s->Lock(b_, lb, true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->lock_count(), 1u);
  EXPECT_EQ(s->Lock(a_, la, true).stat, NLM4_DENIED);
}

TEST_F(NlmServiceTest, RefusedCallbackReleasesTheLock) {
  auto s = Make();
  s->Start(false);
  caller_.set_granted_answer(NLM4_DENIED);
  nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  ASSERT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 0, true, true), true).stat, NLM4_BLOCKED);
  ASSERT_EQ(s->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);
  s->DrainCallbacks();
  EXPECT_EQ(s->lock_count(), 0u);
}

// A refused upgrade takes back only what the grant gave: the shared lock the
// owner held while it waited stays.
TEST_F(NlmServiceTest, RefusedUpgradeKeepsTheLockHeldBefore) {
  auto s = Make();
  s->Start(false);
  caller_.set_granted_answer(NLM4_DENIED);
  nlm4_lockargs a_shared = LockArgs("A", 1, 0, 100, false, false);
  nlm4_lockargs b_shared = LockArgs("B", 1, 0, 100, false, false);
  ASSERT_EQ(s->Lock(a_, a_shared, true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(b_, b_shared, true).stat, NLM4_GRANTED);
  // B waits to upgrade [0, 200) to exclusive; A's release lets it through.
  ASSERT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 200, true, true), true).stat, NLM4_BLOCKED);
  ASSERT_EQ(s->Unlock(a_, UnlockArgs(a_shared)).stat, NLM4_GRANTED);
  s->DrainCallbacks();
  ASSERT_EQ(s->lock_count(), 1u);
  // B still holds [0, 100) shared: another shared lock fits, an exclusive one does not.
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 2, 0, 100, false, false), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 3, 50, 10, true, false), true).stat, NLM4_DENIED);
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 4, 150, 10, true, false), true).stat, NLM4_GRANTED);
}

TEST_F(NlmServiceTest, UnreachableClientKeepsTheGrantedLockForItsNextPoll) {
  auto s = Make();
  s->Start(false);
  caller_.set_reachable(false);
  nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  ASSERT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  nlm4_lockargs lb = LockArgs("B", 1, 0, 0, true, true);
  ASSERT_EQ(s->Lock(b_, lb, true).stat, NLM4_BLOCKED);
  ASSERT_EQ(s->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);
  s->DrainCallbacks();
  EXPECT_EQ(s->lock_count(), 1u);
  EXPECT_EQ(s->Lock(b_, lb, true).stat, NLM4_GRANTED);
}

TEST_F(NlmServiceTest, CancelRemovesTheWaiter) {
  auto s = Make();
  s->Start(false);
  nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  ASSERT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  nlm4_lockargs lb = LockArgs("B", 1, 0, 0, true, true);
  ASSERT_EQ(s->Lock(b_, lb, true).stat, NLM4_BLOCKED);
  nlm4_cancargs c;
  c.cookie = lb.cookie;
  c.block = true;
  c.exclusive = true;
  c.alock = lb.alock;
  EXPECT_EQ(s->Cancel(b_, c).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Cancel(b_, c).stat, NLM4_DENIED);  // nothing left to cancel
  ASSERT_EQ(s->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);
  s->DrainCallbacks();
  EXPECT_TRUE(caller_.calls().empty());
  EXPECT_EQ(s->lock_count(), 0u);
}

TEST_F(NlmServiceTest, GracePeriodAllowsOnlyReclaims) {
  NlmOptions options;
  options.grace_period = absl::Seconds(60);
  auto s = Make(options);
  s->Start(true);
  EXPECT_TRUE(s->InGrace());
  nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  EXPECT_EQ(s->Lock(a_, la, true).stat, NLM4_DENIED_GRACE_PERIOD);
  nlm4_testargs t;
  t.alock = la.alock;
  EXPECT_EQ(s->Test(a_, t).stat, NLM4_DENIED_GRACE_PERIOD);
  la.reclaim = true;
  EXPECT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);  // unlocking is always fine
  EXPECT_EQ(s->lock_count(), 0u);
}

TEST_F(NlmServiceTest, GracePeriodEnds) {
  NlmOptions options;
  options.grace_period = absl::Milliseconds(50);
  auto s = Make(options);
  s->Start(true);
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(s->InGrace());
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
}

// Another head's grace period (SetOtherGrace) holds back new locks here too.
TEST_F(NlmServiceTest, OtherHeadsGracePeriodAllowsOnlyReclaims) {
  auto s = Make();
  std::atomic<bool> other_in_grace{true};
  s->SetOtherGrace([&] { return other_in_grace.load(); });
  s->Start(false);
  EXPECT_TRUE(s->InGrace());
  nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  EXPECT_EQ(s->Lock(a_, la, true).stat, NLM4_DENIED_GRACE_PERIOD);
  la.reclaim = true;
  EXPECT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  other_in_grace = false;
  EXPECT_FALSE(s->InGrace());
  la.reclaim = false;
  la.alock.l_offset = 100;  // another range of the same owner
  EXPECT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
}

TEST_F(NlmServiceTest, RebootedHostLosesItsLocksAndWaiters) {
  auto s = Make();
  s->Start(false);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false, "f1"), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 2, 0, 0, false, false, "f2"), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 0, true, true, "f1"), true).stat, NLM4_BLOCKED);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 3, 0, 0, false, true, "f2"), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 0, true, true, "f2"), true).stat, NLM4_BLOCKED);
  // SM_NOTIFY from B's address under a name we never saw: B is found by address.
  sockaddr_storage from = b_transport_.peer;
  EXPECT_TRUE(s->HostRebooted("b.example", 3, &from, false));
  EXPECT_EQ(s->blocked_count(), 0u);
  // A reboots: its locks go; nobody waits any more.
  EXPECT_TRUE(s->HostRebooted("A", 3, &a_transport_.peer, false));
  s->DrainCallbacks();
  EXPECT_EQ(s->lock_count(), 0u);
  EXPECT_TRUE(caller_.calls().empty());
}

// Found by tests/fuzz/nlm_identity_fuzz.cc: one SM_NOTIFY releases every
// name bound to the sender's address. Releasing the first must not hand its
// lock to a waiter of the second (a GRANTED callback for a lock the server
// drops a moment later): every name goes before any waiter is granted.
TEST_F(NlmServiceTest, RebootOfTwoNamesOfOneAddressGrantsNeitherTheOther) {
  auto s = Make();
  s->Start(false);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(a_, LockArgs("a.example", 1, 0, 0, true, true), true).stat, NLM4_BLOCKED);
  EXPECT_TRUE(s->HostRebooted("unknown.example", 3, &a_transport_.peer, false));
  s->DrainCallbacks();
  EXPECT_EQ(s->lock_count(), 0u);
  EXPECT_EQ(s->blocked_count(), 0u);
  EXPECT_TRUE(caller_.calls().empty());
}

TEST_F(NlmServiceTest, FreeAllReleasesAndWakesWaiters) {
  auto s = Make();
  s->Start(false);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
  ASSERT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 0, true, true), true).stat, NLM4_BLOCKED);
  s->FreeAll(a_, "A");
  s->DrainCallbacks();
  EXPECT_EQ(s->lock_count(), 1u);  // B's, granted
  EXPECT_EQ(caller_.calls().size(), 1u);
}

// A host is its name and its address: another address naming it changes
// nothing of its state, until it holds nothing (then the name is rebound).
TEST_F(NlmServiceTest, HostIsItsNameAndAddress) {
  auto s = Make();
  s->Start(false);
  nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  la.state = 120;
  ASSERT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Unlock(b_, UnlockArgs(la)).stat, NLM4_GRANTED);  // knfsd's answer; nothing done
  s->FreeAll(b_, "A");
  sockaddr_storage from_b = b_transport_.peer;
  EXPECT_FALSE(s->HostRebooted("A", 99, &from_b, false));
  EXPECT_EQ(s->Lock(b_, LockArgs("A", 2, 500, 1, true, false), true).stat, NLM4_DENIED_NOLOCKS);
  EXPECT_EQ(s->lock_count(), 1u);
  // Root on the server (a local statd) may say so for any host, even with a
  // state that went back (the client lost its state file).
  EXPECT_TRUE(s->HostRebooted("A", 99, &from_b, true));
  EXPECT_EQ(s->lock_count(), 0u);
  EXPECT_EQ(s->Lock(b_, LockArgs("A", 2, 500, 1, true, false), true).stat, NLM4_GRANTED);
}

TEST_F(NlmServiceTest, Ipv4MappedAddressIsTheSameHost) {
  auto s = Make();
  s->Start(false);
  const nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
  ASSERT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
  rpc::TransportInfo mapped = a_transport_;
  mapped.peer = {};
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&mapped.peer);
  sin6->sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::ffff:10.0.0.2", &sin6->sin6_addr);
  rpc::CallContext ctx = a_;
  ctx.transport = &mapped;
  EXPECT_EQ(s->Unlock(ctx, UnlockArgs(la)).stat, NLM4_GRANTED);
  EXPECT_EQ(s->lock_count(), 0u);
}

TEST_F(NlmServiceTest, NonBlockingAndNmLockNeverQueue) {
  auto s = Make();
  s->Start(false);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 0, true, false), true).stat, NLM4_DENIED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 0, true, true), false).stat, NLM4_DENIED);
  EXPECT_EQ(s->blocked_count(), 0u);
}

TEST_F(NlmServiceTest, WaiterLimitPerHost) {
  NlmOptions options;
  options.max_blocked_per_host = 2;
  auto s = Make(options);
  s->Start(false);
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 0, true, true), true).stat, NLM4_BLOCKED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 2, 0, 0, true, true), true).stat, NLM4_BLOCKED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 3, 0, 0, true, true), true).stat, NLM4_DENIED_NOLOCKS);
}

TEST_F(NlmServiceTest, LockLimitPerHost) {
  NlmOptions options;
  options.limits.max_per_host = 2;
  auto s = Make(options);
  s->Start(false);
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 1, true, false), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 1, 5, 1, true, false), true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(a_, LockArgs("A", 1, 9, 1, true, false), true).stat, NLM4_DENIED_NOLOCKS);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 1, 9, 1, true, false), true).stat, NLM4_GRANTED);
}

TEST_F(NlmServiceTest, ShareReservations) {
  auto s = Make();
  s->Start(false);
  nlm4_shareargs sa;
  sa.share = {"A", "file1", "ohA", fsm_DW, fsa_R};  // read, deny writers
  EXPECT_EQ(s->Share(a_, sa).stat, NLM4_GRANTED);
  nlm4_shareargs sb;
  sb.share = {"B", "file1", "ohB", fsm_DN, fsa_W};
  EXPECT_EQ(s->Share(b_, sb).stat, NLM4_DENIED);
  sb.share.access = fsa_R;
  EXPECT_EQ(s->Share(b_, sb).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Unshare(a_, sa).stat, NLM4_GRANTED);
  sb.share.access = fsa_RW;  // B replaces its own reservation
  EXPECT_EQ(s->Share(b_, sb).stat, NLM4_GRANTED);
}

class NlmStoreTest : public NlmServiceTest {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nlm_store_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(NlmStoreTest, RestartNotifiesClientsThatHeldLocks) {
  {
    absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE((*store)->previous_hosts().empty());
    auto s = Make({}, store->get());
    s->Start(false);
    ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
    ASSERT_EQ(s->Lock(b_, LockArgs("B", 1, 5, 1, true, false, "f2"), true).stat, NLM4_GRANTED);
    s->HostRebooted("B", 3, &b_transport_.peer, false);  // B rebooted meanwhile: forgotten
  }
  // "Restart": a new store and service on the same directory.
  absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  ASSERT_EQ((*store)->previous_hosts().size(), 1u);
  EXPECT_EQ((*store)->previous_hosts()[0], (MonitoredHost{"A", "10.0.0.2", "10.0.0.1"}));
  NlmOptions options;
  options.grace_period = absl::Seconds(60);
  auto s = Make(options, store->get());
  s->Start(true);
  s->DrainCallbacks();
  std::vector<PeerCall> calls = caller_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].prog, nsm::kProgram);
  EXPECT_EQ(calls[0].proc, nsm::kNotify);
  EXPECT_EQ(AddressString(calls[0].peer), "10.0.0.2");
  nsm::stat_chge change;
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(calls[0].args.data()), calls[0].args.size());
  ASSERT_TRUE(xdr::Decode(d, &change));
  EXPECT_EQ(change.mon_name, "10.0.0.1");  // the address A used to reach us
  EXPECT_EQ(change.state, (*store)->state());
  // A reclaims in the grace period; newcomers wait.
  nlm4_lockargs reclaim = LockArgs("A", 1, 0, 0, true, false);
  reclaim.reclaim = true;
  EXPECT_EQ(s->Lock(a_, reclaim, true).stat, NLM4_GRANTED);
  EXPECT_EQ(s->Lock(b_, LockArgs("B", 1, 0, 0, true, false), true).stat, NLM4_DENIED_GRACE_PERIOD);
}

// In the grace period a client's name stays bound to the address recorded
// for it: nobody else can reclaim under it first and leave it refused.
TEST_F(NlmStoreTest, ReclaimsOnlyFromTheRecordedAddress) {
  {
    absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
    ASSERT_TRUE(store.ok());
    auto s = Make({}, store->get());
    s->Start(false);
    ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
  }
  absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  NlmOptions options;
  options.grace_period = absl::Seconds(60);
  auto s = Make(options, store->get());
  s->Open(true);
  nlm4_lockargs reclaim = LockArgs("A", 1, 0, 0, true, false);
  reclaim.reclaim = true;
  EXPECT_EQ(s->Lock(b_, reclaim, true).stat, NLM4_DENIED_NOLOCKS);
  EXPECT_EQ(s->Lock(a_, reclaim, true).stat, NLM4_GRANTED);
}

// A successor (handover) and a restarted server still know the NSM state the
// client's LOCKs gave: a replayed, not newer SM_NOTIFY from its address is
// ignored there too.
TEST_F(NlmStoreTest, ClientsNsmStateOutlivesHandoverAndRestart) {
  NlmSnapshot snapshot;
  {
    absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
    ASSERT_TRUE(store.ok());
    auto s = Make({}, store->get());
    s->Start(false);
    nlm4_lockargs la = LockArgs("A", 1, 0, 0, true, false);
    la.state = 5;
    ASSERT_EQ(s->Lock(a_, la, true).stat, NLM4_GRANTED);
    s->Stop();
    snapshot = s->Snapshot();
  }
  sockaddr_storage from_a = a_transport_.peer;
  {
    absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_, /*bump=*/false);
    ASSERT_TRUE(store.ok());
    auto successor = Make({}, store->get());
    successor->StartFrom(snapshot);
    EXPECT_FALSE(successor->HostRebooted("A", 5, &from_a, false));
    EXPECT_EQ(successor->lock_count(), 1u);
  }
  absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  auto restarted = Make({}, store->get());
  restarted->Open(false);
  EXPECT_FALSE(restarted->HostRebooted("A", 3, &from_a, false));
  EXPECT_TRUE(restarted->HostRebooted("A", 7, &from_a, false));
}

TEST_F(NlmStoreTest, UnreachableClientIsRetriedThenGivenUp) {
  {
    absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
    ASSERT_TRUE(store.ok());
    auto s = Make({}, store->get());
    s->Start(false);
    ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
  }
  absl::StatusOr<std::unique_ptr<StatusStore>> store = StatusStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  caller_.set_reachable(false);
  NlmOptions options;
  options.notify_attempts = 3;
  auto s = Make(options, store->get());
  s->Start(true);
  s->DrainCallbacks();
  EXPECT_EQ(caller_.calls().size(), 3u);
}

TEST_F(NlmServiceTest, NsmNotifyReleasesAndCallsBackMonitors) {
  auto s = Make();
  s->Start(false);
  nsm::NsmService nsm(s.get());
  ASSERT_EQ(s->Lock(a_, LockArgs("A", 1, 0, 0, true, false), true).stat, NLM4_GRANTED);
  nsm::mon m;
  m.id.mon_name = "A";
  m.id.id = {"localhost", 200001, 1, 3};
  m.priv[0] = 42;
  ASSERT_TRUE(nsm.Monitor(m));
  ASSERT_TRUE(nsm.Monitor(m));  // same monitor again: replaced
  EXPECT_EQ(nsm.monitor_count(), 1u);
  nsm.Notify({"A", 3}, &a_transport_.peer, false);
  s->DrainCallbacks();
  EXPECT_EQ(s->lock_count(), 0u);
  std::vector<PeerCall> calls = caller_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].prog, 200001u);
  EXPECT_EQ(calls[0].proc, 3u);
  EXPECT_EQ(AddressString(calls[0].peer), "127.0.0.1");
  nsm::sm_status status;
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(calls[0].args.data()), calls[0].args.size());
  ASSERT_TRUE(xdr::Decode(d, &status));
  EXPECT_EQ(status.mon_name, "A");
  EXPECT_EQ(status.state, 3);
  EXPECT_EQ(status.priv[0], 42);
  nsm.UnmonitorAll(m.id.id);
  EXPECT_EQ(nsm.monitor_count(), 0u);
}

// Handover: a blocked request crosses Snapshot/StartFrom, and the
// successor sends its GRANTED callback when the holder unlocks there.
TEST_F(NlmServiceTest, BlockedLockCrossesAHandoverAndIsGrantedByTheSuccessor) {
  nlm4_lockargs la = LockArgs("A", 1, 0, 100, true, false);
  nlm4_lockargs lb = LockArgs("B", 7, 50, 10, true, true);
  b_.vers = kVersion3;
  NlmSnapshot snapshot;
  {
    auto before = Make();
    before->Start(false);
    ASSERT_EQ(before->Lock(a_, la, true).stat, NLM4_GRANTED);
    ASSERT_EQ(before->Lock(b_, lb, true).stat, NLM4_BLOCKED);
    before->Stop();
    snapshot = before->Snapshot();
  }
  ASSERT_EQ(snapshot.waiters.size(), 1u);
  EXPECT_FALSE(snapshot.waiters[0].granted);
  EXPECT_EQ(snapshot.waiters[0].address, "10.0.0.3");
  EXPECT_EQ(snapshot.waiters[0].vers, kVersion3);

  auto after = Make();
  after->StartFrom(snapshot);
  EXPECT_EQ(after->blocked_count(), 1u);
  // Re-sent after the handover: still the one waiter.
  EXPECT_EQ(after->Lock(b_, lb, true).stat, NLM4_BLOCKED);
  EXPECT_EQ(after->blocked_count(), 1u);
  EXPECT_TRUE(caller_.calls().empty());

  ASSERT_EQ(after->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);
  after->DrainCallbacks();
  EXPECT_EQ(after->blocked_count(), 0u);
  std::vector<PeerCall> calls = caller_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].proc, kGranted);
  EXPECT_EQ(calls[0].vers, kVersion3);
  EXPECT_EQ(AddressString(calls[0].peer), "10.0.0.3");
  nlm_testargs granted;
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(calls[0].args.data()), calls[0].args.size());
  ASSERT_TRUE(Decode(d, &granted));
  EXPECT_EQ(granted.cookie, lb.cookie);
  EXPECT_EQ(granted.alock.svid, 7);
  EXPECT_EQ(granted.alock.oh, lb.alock.oh);
  EXPECT_EQ(after->Lock(a_, la, true).stat, NLM4_DENIED);
}

// A grant whose callback never left the predecessor is called back by the
// successor, and the lock stays held throughout.
TEST_F(NlmServiceTest, UndeliveredGrantedCallbackIsSentByTheSuccessor) {
  nlm4_lockargs la = LockArgs("A", 1, 0, 100, true, false);
  nlm4_lockargs lb = LockArgs("B", 7, 50, 10, true, true);
  NlmSnapshot snapshot;
  {
    auto before = Make();
    before->Start(false);
    ASSERT_EQ(before->Lock(a_, la, true).stat, NLM4_GRANTED);
    ASSERT_EQ(before->Lock(b_, lb, true).stat, NLM4_BLOCKED);
    before->Stop();  // the callback queued by the unlock below is never sent
    ASSERT_EQ(before->Unlock(a_, UnlockArgs(la)).stat, NLM4_GRANTED);
    snapshot = before->Snapshot();
  }
  EXPECT_TRUE(caller_.calls().empty());
  ASSERT_EQ(snapshot.waiters.size(), 1u);
  EXPECT_TRUE(snapshot.waiters[0].granted);
  ASSERT_EQ(snapshot.locks.size(), 1u);

  auto after = Make();
  after->StartFrom(snapshot);
  after->DrainCallbacks();
  std::vector<PeerCall> calls = caller_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].proc, kGranted);
  nlm4_testargs granted;
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(calls[0].args.data()), calls[0].args.size());
  ASSERT_TRUE(Decode(d, &granted));
  EXPECT_EQ(granted.cookie, lb.cookie);
  EXPECT_EQ(after->blocked_count(), 0u);
  EXPECT_EQ(after->Lock(a_, la, true).stat, NLM4_DENIED);
}

}  // namespace
}  // namespace nfs3d::nlm
