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

void FreeAll(NlmService& s, const CallContext&, const nlm4_notify& a, Void*) { s.FreeAll(a.name); }

template <typename Args, typename Res, void (*Fn)(NlmService&, const CallContext&, const Args&, Res*)>
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
  static constexpr rpc::Procedure kRows[] = {
      {kNull, "NULL", Proc<Void, Void, Null>()},
      {kTest, "TEST", Proc<T, typename V::TestRes, Test<V>>()},
      {kLock, "LOCK", Proc<L, R, Lock<V>>(), false},
      {kCancel, "CANCEL", Proc<C, R, Cancel<V>>(), false},
      {kUnlock, "UNLOCK", Proc<U, R, Unlock<V>>(), false},
      {kGranted, "GRANTED", Proc<T, R, Granted<V>>()},
      {kTestMsg, "TEST_MSG", Proc<T, Void, TestMsg<V>>()},
      {kLockMsg, "LOCK_MSG", Proc<L, Void, LockMsg<V>>(), false},
      {kCancelMsg, "CANCEL_MSG", Proc<C, Void, CancelMsg<V>>(), false},
      {kUnlockMsg, "UNLOCK_MSG", Proc<U, Void, UnlockMsg<V>>(), false},
      {kGrantedMsg, "GRANTED_MSG", Proc<Void, Void, Ignore>()},
      {kTestRes, "TEST_RES", Proc<Void, Void, Ignore>()},
      {kLockRes, "LOCK_RES", Proc<Void, Void, Ignore>()},
      {kCancelRes, "CANCEL_RES", Proc<Void, Void, Ignore>()},
      {kUnlockRes, "UNLOCK_RES", Proc<Void, Void, Ignore>()},
      {kGrantedRes, "GRANTED_RES", Proc<Void, Void, Ignore>()},
      {16, "", nullptr},
      {17, "", nullptr},
      {18, "", nullptr},
      {19, "", nullptr},
      {kShare, "SHARE", Proc<nlm4_shareargs, typename V::ShareRes, Share<V>>(), false},
      {kUnshare, "UNSHARE", Proc<nlm4_shareargs, typename V::ShareRes, Unshare<V>>(), false},
      {kNmLock, "NM_LOCK", Proc<L, R, NmLock<V>>(), false},
      {kFreeAll, "FREE_ALL", Proc<nlm4_notify, Void, FreeAll>(), false},
  };
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
