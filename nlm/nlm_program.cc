#include "nlm/nlm_program.h"

#include <utility>

#include "nlm/nlm4_codec.h"
#include "xdr/buffer_chain.h"
#include "xdr/encode_to_string.h"

namespace nfs3d::nlm {
namespace {

using rpc::CallContext;

// Per-version types: V4 uses the nlm4_* codecs, V1 (also version 3) the
// 32-bit ones. Handlers work on the v4 shapes the v1 types derive from.
struct V4 {
  using TestArgs = nlm4_testargs;
  using LockArgs = nlm4_lockargs;
  using CancArgs = nlm4_cancargs;
  using UnlockArgs = nlm4_unlockargs;
  using Res = nlm4_res;
  using TestRes = nlm4_testres;
  using ShareRes = nlm4_shareres;
};
struct V1 {
  using TestArgs = nlm_testargs;
  using LockArgs = nlm_lockargs;
  using CancArgs = nlm_cancargs;
  using UnlockArgs = nlm_unlockargs;
  using Res = nlm_res;
  using TestRes = nlm_testres;
  using ShareRes = nlm_shareres;
};

using xdr::EncodeToString;

void Null(NlmService&, const CallContext&, const Void&, Void*) {}

template <typename V>
void Test(NlmService& s, const CallContext& ctx, const typename V::TestArgs& a,
          typename V::TestRes* r) {
  static_cast<nlm4_testres&>(*r) = s.Test(ctx, a);
}

template <typename V>
void Lock(NlmService& s, const CallContext& ctx, const typename V::LockArgs& a,
          typename V::Res* r) {
  static_cast<nlm4_res&>(*r) = s.Lock(ctx, a, /*monitored=*/true);
}

template <typename V>
void Cancel(NlmService& s, const CallContext& ctx, const typename V::CancArgs& a,
            typename V::Res* r) {
  static_cast<nlm4_res&>(*r) = s.Cancel(ctx, a);
}

template <typename V>
void Unlock(NlmService& s, const CallContext& ctx, const typename V::UnlockArgs& a,
            typename V::Res* r) {
  static_cast<nlm4_res&>(*r) = s.Unlock(ctx, a);
}

// nfs3d is not an NLM client: nothing ever waits for a GRANTED here.
template <typename V>
void Granted(NlmService&, const CallContext&, const typename V::TestArgs& a, typename V::Res* r) {
  r->cookie = a.cookie;
  r->stat = NLM4_DENIED;
}

template <typename V>
void TestMsg(NlmService& s, const CallContext& ctx, const typename V::TestArgs& a, Void*) {
  typename V::TestRes res;
  static_cast<nlm4_testres&>(res) = s.Test(ctx, a);
  s.SendResult(ctx, kTestRes, EncodeToString(res));
}

template <typename V>
void LockMsg(NlmService& s, const CallContext& ctx, const typename V::LockArgs& a, Void*) {
  typename V::Res res;
  static_cast<nlm4_res&>(res) = s.Lock(ctx, a, true);
  s.SendResult(ctx, kLockRes, EncodeToString(res));
}

template <typename V>
void CancelMsg(NlmService& s, const CallContext& ctx, const typename V::CancArgs& a, Void*) {
  typename V::Res res;
  static_cast<nlm4_res&>(res) = s.Cancel(ctx, a);
  s.SendResult(ctx, kCancelRes, EncodeToString(res));
}

template <typename V>
void UnlockMsg(NlmService& s, const CallContext& ctx, const typename V::UnlockArgs& a, Void*) {
  typename V::Res res;
  static_cast<nlm4_res&>(res) = s.Unlock(ctx, a);
  s.SendResult(ctx, kUnlockRes, EncodeToString(res));
}

// GRANTED_MSG and the *_RES results are client-side messages: accepted, ignored.
// GRANTED_RES too: nfs3d sends GRANTED as a call and acts on its reply, so no
// GRANTED_RES, from the waiter's host or any other, takes a lock back.
void Ignore(NlmService&, const CallContext&, const Void&, Void*) {}

template <typename V>
void Share(NlmService& s, const CallContext& ctx, const nlm4_shareargs& a,
           typename V::ShareRes* r) {
  static_cast<nlm4_shareres&>(*r) = s.Share(ctx, a);
}

template <typename V>
void Unshare(NlmService& s, const CallContext& ctx, const nlm4_shareargs& a,
             typename V::ShareRes* r) {
  static_cast<nlm4_shareres&>(*r) = s.Unshare(ctx, a);
}

// NM_LOCK: a lock from a host without a status monitor; never blocks.
template <typename V>
void NmLock(NlmService& s, const CallContext& ctx, const typename V::LockArgs& a,
            typename V::Res* r) {
  nlm4_lockargs args = a;
  args.block = false;
  static_cast<nlm4_res&>(*r) = s.Lock(ctx, args, /*monitored=*/false);
}

void FreeAll(NlmService& s, const CallContext& ctx, const nlm4_notify& a, Void*) {
  s.FreeAll(ctx, a.name);
}

template <typename Args, typename Res,
          void (*Fn)(NlmService&, const CallContext&, const Args&, Res*)>
constexpr rpc::ProcFn Proc() {
  return &rpc::TypedProc<NlmService, Args, Res, Fn>;
}

// Rows that change lock state are non-idempotent: the duplicate request cache
// replays their first reply to a retransmission. NLM never modifies files.
template <typename V>
struct Table {
  using T = typename V::TestArgs;
  using L = typename V::LockArgs;
  using C = typename V::CancArgs;
  using U = typename V::UnlockArgs;
  using R = typename V::Res;
  // A row per procedure; clang-format would give each field a line of its own.
  // clang-format off
  static constexpr rpc::Procedure kRows[] = {
      {.number = kNull, .name = "NULL", .run = Proc<Void, Void, Null>()},
      {.number = kTest, .name = "TEST", .run = Proc<T, typename V::TestRes, Test<V>>()},
      {.number = kLock, .name = "LOCK", .run = Proc<L, R, Lock<V>>(), .idempotent = false},
      {.number = kCancel, .name = "CANCEL", .run = Proc<C, R, Cancel<V>>(), .idempotent = false},
      {.number = kUnlock, .name = "UNLOCK", .run = Proc<U, R, Unlock<V>>(), .idempotent = false},
      {.number = kGranted, .name = "GRANTED", .run = Proc<T, R, Granted<V>>()},
      {.number = kTestMsg, .name = "TEST_MSG", .run = Proc<T, Void, TestMsg<V>>()},
      {.number = kLockMsg, .name = "LOCK_MSG", .run = Proc<L, Void, LockMsg<V>>(),
       .idempotent = false},
      {.number = kCancelMsg, .name = "CANCEL_MSG", .run = Proc<C, Void, CancelMsg<V>>(),
       .idempotent = false},
      {.number = kUnlockMsg, .name = "UNLOCK_MSG", .run = Proc<U, Void, UnlockMsg<V>>(),
       .idempotent = false},
      {.number = kGrantedMsg, .name = "GRANTED_MSG", .run = Proc<Void, Void, Ignore>()},
      {.number = kTestRes, .name = "TEST_RES", .run = Proc<Void, Void, Ignore>()},
      {.number = kLockRes, .name = "LOCK_RES", .run = Proc<Void, Void, Ignore>()},
      {.number = kCancelRes, .name = "CANCEL_RES", .run = Proc<Void, Void, Ignore>()},
      {.number = kUnlockRes, .name = "UNLOCK_RES", .run = Proc<Void, Void, Ignore>()},
      {.number = kGrantedRes, .name = "GRANTED_RES", .run = Proc<Void, Void, Ignore>()},
      {.number = 16, .name = "", .run = nullptr},
      {.number = 17, .name = "", .run = nullptr},
      {.number = 18, .name = "", .run = nullptr},
      {.number = 19, .name = "", .run = nullptr},
      {.number = kShare, .name = "SHARE",
       .run = Proc<nlm4_shareargs, typename V::ShareRes, Share<V>>(), .idempotent = false},
      {.number = kUnshare, .name = "UNSHARE",
       .run = Proc<nlm4_shareargs, typename V::ShareRes, Unshare<V>>(), .idempotent = false},
      {.number = kNmLock, .name = "NM_LOCK", .run = Proc<L, R, NmLock<V>>(), .idempotent = false},
      {.number = kFreeAll, .name = "FREE_ALL", .run = Proc<nlm4_notify, Void, FreeAll>(),
       .idempotent = false},
  };
  // clang-format on
};

static_assert(std::size(Table<V4>::kRows) == kNumProcs);

}  // namespace

rpc::Program MakeNlmProgram(NlmService* service) {
  rpc::Program program;
  program.number = kProgram;
  program.name = "nlockmgr";
  absl::Span<const rpc::Procedure> v1(Table<V1>::kRows);
  program.versions = {
      // Version 1 ends at GRANTED_RES; SHARE and friends came with version 3.
      {kVersion1, v1.subspan(0, kGrantedRes + 1)},
      {kVersion3, v1},
      {kVersion4, Table<V4>::kRows},
  };
  program.service = service;
  return program;
}

}  // namespace nfs3d::nlm
