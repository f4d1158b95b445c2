// Issue 48, finding 2: any host released any client's locks. Client A
// ("host-a") locks from 127.0.0.1; another host, with AUTH_NONE from an
// unprivileged port, names A in SM_NOTIFY, FREE_ALL, UNLOCK and CANCEL from
// its own address, reads A's owner out of TEST, and replays A's own NSM
// state. A's lock must stay; the calls A itself makes must still release it.
#include "tests/hostile/nlm_hostile.h"

namespace nfs3d::e2e {
namespace {

TEST_F(NlmHostileTest, SmNotifyNamingAFromAnotherAddressKeepsAsLock) {
  LockAsA();
  for (const char* from : {kOtherClient, kStranger}) {
    ASSERT_TRUE(Notify(From(from), kHostA, 1001)) << from;
    EXPECT_FALSE(LocallyLockable(0, 100)) << "SM_NOTIFY from " << from << " released A's lock";
  }
  EXPECT_EQ(Lock(From(kOtherClient, false), LockArgs("host-b", 0, 100)), nlm::NLM4_DENIED);
}

TEST_F(NlmHostileTest, FreeAllNamingAFromAnotherAddressKeepsAsLock) {
  LockAsA();
  for (const char* from : {kOtherClient, kStranger}) {
    ASSERT_TRUE(FreeAll(From(from), kHostA, 1001)) << from;
    EXPECT_FALSE(LocallyLockable(0, 100)) << "FREE_ALL from " << from << " released A's lock";
  }
  EXPECT_EQ(Lock(From(kOtherClient, false), LockArgs("host-b", 0, 100)), nlm::NLM4_DENIED);
}

TEST_F(NlmHostileTest, UnlockWithAsOwnerFromAnotherAddressKeepsAsLock) {
  LockAsA();
  for (const char* from : {kOtherClient, kStranger}) {
    // knfsd's answer to unlocking what the caller does not hold: done.
    Unlock(From(from), LockOf(kHostA, 0, 100));
    EXPECT_FALSE(LocallyLockable(0, 100)) << "UNLOCK from " << from << " released A's lock";
  }
  EXPECT_EQ(Lock(From(kOtherClient, false), LockArgs("host-b", 0, 100)), nlm::NLM4_DENIED);
}

TEST_F(NlmHostileTest, CancelWithAsOwnerFromAnotherAddressKeepsAsWaiter) {
  // C holds the range; A waits for it.
  ASSERT_EQ(Lock(From(kAddressA, false), LockArgs("host-c", 0, 100)), nlm::NLM4_GRANTED);
  const nlm::nlm4_lockargs waiting = LockArgs(kHostA, 0, 100, /*block=*/true);
  ASSERT_EQ(Lock(From(kAddressA, false), waiting), nlm::NLM4_BLOCKED);
  for (const char* from : {kOtherClient, kStranger}) Cancel(From(from), waiting);
  // C lets go: A's request, still queued, gets the range at once (the
  // GRANTED callback finds no one listening; the lock stays A's).
  ASSERT_EQ(Unlock(From(kAddressA, false), LockOf("host-c", 0, 100)), nlm::NLM4_GRANTED);
  EXPECT_FALSE(LocallyLockable(0, 100)) << "CANCEL from another address dropped A's waiter";
  EXPECT_EQ(Lock(From(kOtherClient, false), LockArgs("host-b", 0, 100)), nlm::NLM4_DENIED);
}

TEST_F(NlmHostileTest, TestFromAnotherHostDoesNotRevealAsOwnerHandle) {
  LockAsA();
  nlm::nlm4_testargs args;
  args.cookie = "t";
  args.exclusive = true;
  args.alock = LockOf("host-b", 10, 1);
  NfsReply r = Call(From(kOtherClient, false), nlm::kProgram, nlm::kVersion4, nlm::kTest,
                    xdr::EncodeToString(args));
  ASSERT_TRUE(r.ok && r.reply_stat == 0 && r.accept_stat == 0);
  nlm::nlm4_testres res;
  xdr::Decoder d(Span(r.results));
  ASSERT_TRUE(xdr::Decode(d, &res));
  ASSERT_EQ(res.stat, nlm::NLM4_DENIED);
  EXPECT_TRUE(res.holder.exclusive);
  EXPECT_NE(res.holder.oh, LockOf(kHostA, 0, 100).oh);
  EXPECT_TRUE(res.holder.oh.empty());
}

// Naming A in a LOCK from elsewhere must not move A to the caller's address
// (after which FREE_ALL "from A" would come from the attacker).
TEST_F(NlmHostileTest, LockNamingAFromAnotherAddressDoesNotTakeAOver) {
  LockAsA();
  EXPECT_NE(Lock(From(kOtherClient), LockArgs(kHostA, 500, 10)), nlm::NLM4_GRANTED);
  ASSERT_TRUE(FreeAll(From(kOtherClient), kHostA, 1001));
  ASSERT_TRUE(Notify(From(kOtherClient), kHostA, 1001));
  EXPECT_FALSE(LocallyLockable(0, 100));
}

TEST_F(NlmHostileTest, SmNotifyWithAStateNotNewerThanAsKeepsAsLock) {
  LockAsA(/*state=*/5);
  // Even from A's own address: a replay of an old reboot, or the current state.
  for (int32_t state : {3, 5}) {
    ASSERT_TRUE(Notify(From(kAddressA), kHostA, state));
    EXPECT_FALSE(LocallyLockable(0, 100)) << "SM_NOTIFY with state " << state;
  }
  // A really rebooted: the next state.
  ASSERT_TRUE(Notify(From(kAddressA), kHostA, 7));
  EXPECT_TRUE(LocallyLockable(0, 100));
}

// A successor process (nfs3d --takeover) keeps A bound to its address and
// its NSM state: the same calls change nothing after the handover.
TEST_F(NlmHostileTest, BindingOutlivesAHandover) {
  LockAsA(/*state=*/5);
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  ASSERT_FALSE(LocallyLockable(0, 100));
  ASSERT_TRUE(Notify(From(kOtherClient), kHostA, 1001));
  ASSERT_TRUE(FreeAll(From(kStranger), kHostA, 1001));
  Unlock(From(kOtherClient), LockOf(kHostA, 0, 100));
  ASSERT_TRUE(Notify(From(kAddressA), kHostA, 5));  // A's own state, replayed
  EXPECT_FALSE(LocallyLockable(0, 100));
  EXPECT_EQ(Lock(From(kOtherClient, false), LockArgs("host-b", 0, 100)), nlm::NLM4_DENIED);
  EXPECT_EQ(Unlock(From(kAddressA, false), LockOf(kHostA, 0, 100)), nlm::NLM4_GRANTED);
  EXPECT_TRUE(LocallyLockable(0, 100));
}

// The paths A's own lock manager and status monitor take still work.
TEST_F(NlmHostileTest, AsOwnUnlockFreeAllAndSmNotifyReleaseItsLock) {
  LockAsA();
  EXPECT_EQ(Unlock(From(kAddressA, false), LockOf(kHostA, 0, 100)), nlm::NLM4_GRANTED);
  EXPECT_TRUE(LocallyLockable(0, 100));

  LockAsA();
  ASSERT_TRUE(FreeAll(From(kAddressA), kHostA, 5));
  EXPECT_TRUE(LocallyLockable(0, 100));

  LockAsA();
  ASSERT_TRUE(Notify(From(kAddressA), kHostA, 5));
  EXPECT_TRUE(LocallyLockable(0, 100));
  // After its reboot A locks again, and another client is refused.
  LockAsA(5);
  EXPECT_EQ(Lock(From(kOtherClient, false), LockArgs("host-b", 0, 100)), nlm::NLM4_DENIED);
}

}  // namespace
}  // namespace nfs3d::e2e
