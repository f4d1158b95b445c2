#include "rpc/dispatcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "rpc/program.h"
#include "rpc/rpc_message.h"
#include "xdr/buffer_chain.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc {
namespace {

constexpr uint32_t kProg = 0x20000001;

struct FakeService {
  std::atomic<int> runs{0};
  absl::Notification started;  // set by the blocking procedure
  absl::Notification release;  // it waits for this
  uint32_t last_uid = 0;
  const Procedure* last_row = nullptr;
};

struct U32Args {
  uint32_t v = 0;
};
struct U32Res {
  uint32_t v = 0;
};
bool Decode(xdr::Decoder& in, U32Args* a) {
  a->v = in.U32();
  return in.ok();
}
void Encode(xdr::Encoder& out, const U32Res& r) { out.U32(r.v); }

void Echo(FakeService& s, const CallContext& ctx, const U32Args& a, U32Res* r) {
  ++s.runs;
  s.last_uid = ctx.cred.uid;
  s.last_row = ctx.procedure;
  r->v = a.v;
}

void Block(FakeService& s, const CallContext& ctx, const U32Args& a, U32Res* r) {
  ++s.runs;
  s.started.Notify();
  s.release.WaitForNotification();
  r->v = a.v + 1;
}

ProcResult Null(void*, const CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return ProcResult::kSuccess;
}
ProcResult SystemErr(void*, const CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(0x55555555);  // partial results must not leak into the reply
  return ProcResult::kSystemErr;
}
ProcResult TooWeak(void*, const CallContext& ctx, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(0x55555555);  // results are discarded when the call is refused
  ctx.reject_auth = static_cast<uint32_t>(AuthStat::kTooWeak);
  return ProcResult::kSuccess;
}
ProcResult Drop(void*, const CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(1);
  return ProcResult::kDrop;
}

using EchoFn = decltype(&TypedProc<FakeService, U32Args, U32Res, Echo>);
constexpr EchoFn kEcho = &TypedProc<FakeService, U32Args, U32Res, Echo>;
constexpr EchoFn kBlock = &TypedProc<FakeService, U32Args, U32Res, Block>;

const Procedure kV1[] = {
    {0, "NULL", Null},
};
const Procedure kV2[] = {
    {.number = 0, .name = "NULL", .run = Null},
    {.number = 1, .name = "ECHO", .run = kEcho},
    {.number = 2, .name = "MISSING", .run = nullptr},  // PROC_UNAVAIL
    {.number = 3, .name = "SYSERR", .run = SystemErr, .idempotent = false},
    {.number = 4, .name = "DROP", .run = Drop, .idempotent = false},
    // Non-idempotent: cached.
    {.number = 5, .name = "ECHO_ONCE", .run = kEcho, .idempotent = false, .modifies = true},
    // Non-idempotent, waits.
    {.number = 6, .name = "BLOCK", .run = kBlock, .idempotent = false, .modifies = true},
    // Refuses at the RPC level.
    {.number = 7, .name = "TOOWEAK", .run = TooWeak, .idempotent = false},
};

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() {
    program_.number = kProg;
    program_.name = "fake";
    program_.versions = {{1, kV1}, {2, kV2}};
    program_.service = &service_;
    dispatcher_.AddProgram(&program_);
  }

  static std::vector<uint8_t> Call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                   std::vector<uint32_t> args = {}, uint32_t rpcvers = 2,
                                   std::vector<uint32_t> cred = {kAuthSys, 20, 0, 0, 1000, 100,
                                                                 0}) {
    xdr::BufferChain chain;
    xdr::Encoder out(&chain);
    for (uint32_t w : {xid, 0u, rpcvers, prog, vers, proc}) out.U32(w);
    for (uint32_t w : cred) out.U32(w);
    out.U32(kAuthNone);
    out.U32(0);
    for (uint32_t w : args) out.U32(w);
    std::string s = chain.Flatten();
    return std::vector<uint8_t>(s.begin(), s.end());
  }

  static std::string Words(std::initializer_list<uint32_t> words) {
    xdr::BufferChain chain;
    xdr::Encoder out(&chain);
    for (uint32_t w : words) out.U32(w);
    return chain.Flatten();
  }

  static TransportInfo Udp(const char* ip, uint16_t port) {
    TransportInfo t;
    t.transport = Transport::kUdp;
    auto* sin = reinterpret_cast<sockaddr_in*>(&t.peer);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    inet_pton(AF_INET, ip, &sin->sin_addr);
    t.peer_len = sizeof(sockaddr_in);
    return t;
  }

  // Runs a call; returns the reply bytes, or "DROPPED".
  std::string Run(const std::vector<uint8_t>& msg, const TransportInfo& t) {
    xdr::BufferChain reply;
    if (!dispatcher_.HandleCall(msg, t, &reply)) {
      EXPECT_TRUE(reply.empty());
      return "DROPPED";
    }
    return reply.Flatten();
  }
  std::string Run(const std::vector<uint8_t>& msg) { return Run(msg, Udp("127.0.0.1", 700)); }

  FakeService service_;
  Program program_;
  Dispatcher dispatcher_;
};

TEST_F(DispatcherTest, SuccessBytesExact) {
  EXPECT_EQ(Run(Call(0x1234, kProg, 2, 1, {0xcafef00d})),
            Words({0x1234, 1, 0, 0, 0, 0, 0xcafef00d}));
  EXPECT_EQ(service_.runs, 1);
  EXPECT_EQ(service_.last_uid, 1000u);
  ASSERT_NE(service_.last_row, nullptr);
  EXPECT_STREQ(service_.last_row->name, "ECHO");
  EXPECT_EQ(Run(Call(0x1235, kProg, 1, 0)), Words({0x1235, 1, 0, 0, 0, 0}));
}

TEST_F(DispatcherTest, ProgUnavail) {
  EXPECT_EQ(Run(Call(7, 100003, 3, 0)), Words({7, 1, 0, 0, 0, 1}));
}

TEST_F(DispatcherTest, ProgMismatchReportsLowAndHigh) {
  EXPECT_EQ(Run(Call(7, kProg, 5, 0)), Words({7, 1, 0, 0, 0, 2, 1, 2}));
  EXPECT_EQ(Run(Call(7, kProg, 0, 0)), Words({7, 1, 0, 0, 0, 2, 1, 2}));
}

TEST_F(DispatcherTest, ProcUnavail) {
  EXPECT_EQ(Run(Call(7, kProg, 2, 2)), Words({7, 1, 0, 0, 0, 3}));   // run == nullptr
  EXPECT_EQ(Run(Call(7, kProg, 2, 99)), Words({7, 1, 0, 0, 0, 3}));  // beyond the table
  EXPECT_EQ(Run(Call(7, kProg, 1, 1)), Words({7, 1, 0, 0, 0, 3}));   // exists only in v2
}

TEST_F(DispatcherTest, GarbageArgs) {
  EXPECT_EQ(Run(Call(7, kProg, 2, 1, {})), Words({7, 1, 0, 0, 0, 4}));
  EXPECT_EQ(service_.runs, 0);
}

TEST_F(DispatcherTest, SystemErrDiscardsPartialResults) {
  EXPECT_EQ(Run(Call(7, kProg, 2, 3)), Words({7, 1, 0, 0, 0, 5}));
}

TEST_F(DispatcherTest, DropSendsNothing) { EXPECT_EQ(Run(Call(7, kProg, 2, 4)), "DROPPED"); }

TEST_F(DispatcherTest, RpcMismatch) {
  EXPECT_EQ(Run(Call(7, kProg, 2, 0, {}, 3)), Words({7, 1, 1, 0, 2, 2}));
}

TEST_F(DispatcherTest, MalformedHeadersAreDropped) {
  EXPECT_EQ(Run({}), "DROPPED");
  EXPECT_EQ(Run({1, 2, 3}), "DROPPED");
  std::vector<uint8_t> reply_msg = Call(7, kProg, 2, 0);
  reply_msg[7] = 1;  // msg_type REPLY
  EXPECT_EQ(Run(reply_msg), "DROPPED");
  std::vector<uint8_t> truncated = Call(7, kProg, 2, 0);
  truncated.resize(truncated.size() - 4);
  EXPECT_EQ(Run(truncated), "DROPPED");
}

TEST_F(DispatcherTest, AuthErrors) {
  // AUTH_SYS body that claims 4 bytes of machine name but has none.
  EXPECT_EQ(Run(Call(7, kProg, 2, 0, {}, 2, {kAuthSys, 8, 0, 4})), Words({7, 1, 1, 1, 1}));
  // RPCSEC_GSS.
  EXPECT_EQ(Run(Call(7, kProg, 2, 0, {}, 2, {6, 4, 1})), Words({7, 1, 1, 1, 1}));
  // AUTH_DH.
  EXPECT_EQ(Run(Call(7, kProg, 2, 0, {}, 2, {3, 0})), Words({7, 1, 1, 1, 1}));
  // Credential longer than 400 bytes.
  EXPECT_EQ(Run(Call(7, kProg, 2, 0, {}, 2, {kAuthSys, 404})), Words({7, 1, 1, 1, 1}));
  // AUTH_NONE works.
  EXPECT_EQ(Run(Call(7, kProg, 2, 1, {5}, 2, {kAuthNone, 0})), Words({7, 1, 0, 0, 0, 0, 5}));
  EXPECT_EQ(service_.last_uid, 65534u);
}

TEST_F(DispatcherTest, ProcedureCanRefuseWithAuthError) {
  // MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK; not cached: a retry runs again.
  EXPECT_EQ(Run(Call(7, kProg, 2, 7)), Words({7, 1, 1, 1, 5}));
  EXPECT_EQ(Run(Call(7, kProg, 2, 7)), Words({7, 1, 1, 1, 5}));
  EXPECT_EQ(dispatcher_.drc_stats().hits, 0u);
}

TEST_F(DispatcherTest, Registered) {
  using P = std::pair<uint32_t, uint32_t>;
  EXPECT_EQ(dispatcher_.Registered(), (std::vector<P>{{kProg, 1}, {kProg, 2}}));
}

TEST_F(DispatcherTest, NonIdempotentRunsOnceAndReplaysIdentically) {
  std::string first = Run(Call(42, kProg, 2, 5, {9}));
  std::string second = Run(Call(42, kProg, 2, 5, {9}));
  EXPECT_EQ(first, Words({42, 1, 0, 0, 0, 0, 9}));
  EXPECT_EQ(first, second);
  EXPECT_EQ(service_.runs, 1);
  EXPECT_EQ(dispatcher_.drc_stats().hits, 1u);
}

TEST_F(DispatcherTest, SameXidOtherArgsRunsAgain) {
  EXPECT_EQ(Run(Call(42, kProg, 2, 5, {9})), Words({42, 1, 0, 0, 0, 0, 9}));
  EXPECT_EQ(Run(Call(42, kProg, 2, 5, {10})), Words({42, 1, 0, 0, 0, 0, 10}));
  EXPECT_EQ(service_.runs, 2);
  EXPECT_EQ(dispatcher_.drc_stats().hits, 0u);
}

TEST_F(DispatcherTest, IdempotentNeverCached) {
  Run(Call(42, kProg, 2, 1, {9}));
  Run(Call(42, kProg, 2, 1, {9}));
  EXPECT_EQ(service_.runs, 2);
  EXPECT_EQ(dispatcher_.drc_stats().insertions, 0u);
}

TEST_F(DispatcherTest, OtherClientAddressMisses) {
  Run(Call(42, kProg, 2, 5, {9}), Udp("127.0.0.1", 700));
  Run(Call(42, kProg, 2, 5, {9}), Udp("127.0.0.2", 700));
  Run(Call(42, kProg, 2, 5, {9}), Udp("127.0.0.1", 701));
  EXPECT_EQ(service_.runs, 3);
  EXPECT_EQ(dispatcher_.drc_stats().hits, 0u);
}

TEST_F(DispatcherTest, TcpReconnectFromNewPortHits) {
  TransportInfo a = Udp("127.0.0.1", 700);
  a.transport = Transport::kTcp;
  TransportInfo b = Udp("127.0.0.1", 701);
  b.transport = Transport::kTcp;
  std::string first = Run(Call(42, kProg, 2, 5, {9}), a);
  EXPECT_EQ(Run(Call(42, kProg, 2, 5, {9}), b), first);
  EXPECT_EQ(service_.runs, 1);
}

TEST_F(DispatcherTest, FailedCallsAreNotCached) {
  Run(Call(42, kProg, 2, 5, {}));  // GARBAGE_ARGS
  EXPECT_EQ(Run(Call(42, kProg, 2, 5, {})), Words({42, 1, 0, 0, 0, 4}));
  EXPECT_EQ(Run(Call(43, kProg, 2, 4)), "DROPPED");
  EXPECT_EQ(Run(Call(43, kProg, 2, 4)), "DROPPED");
  EXPECT_EQ(dispatcher_.drc_stats().hits, 0u);
  EXPECT_EQ(dispatcher_.drc_stats().in_progress_drops, 0u);
}

TEST_F(DispatcherTest, InProgressDuplicateIsDropped) {
  std::string first;
  std::thread worker([&] { first = Run(Call(77, kProg, 2, 6, {1})); });
  service_.started.WaitForNotification();
  EXPECT_EQ(Run(Call(77, kProg, 2, 6, {1})), "DROPPED");
  EXPECT_EQ(dispatcher_.drc_stats().in_progress_drops, 1u);
  service_.release.Notify();
  worker.join();
  EXPECT_EQ(first, Words({77, 1, 0, 0, 0, 0, 2}));
  EXPECT_EQ(Run(Call(77, kProg, 2, 6, {1})), first);
  EXPECT_EQ(service_.runs, 1);
}

TEST(DispatcherEvictionTest, EvictsAtBound) {
  FakeService service;
  Program program{kProg, "fake", {{2, kV2}}, &service};
  DispatcherOptions options;
  options.drc.max_entries = 2;
  Dispatcher dispatcher(options);
  dispatcher.AddProgram(&program);
  TransportInfo t;
  t.transport = Transport::kTcp;
  auto call = [&](uint32_t xid) {
    xdr::BufferChain chain;
    xdr::Encoder out(&chain);
    const uint32_t words[] = {xid, 0, 2, kProg, 2, 5, kAuthNone, 0, kAuthNone, 0, xid};
    for (uint32_t w : words) out.U32(w);
    std::string s = chain.Flatten();
    std::vector<uint8_t> msg(s.begin(), s.end());
    xdr::BufferChain reply;
    EXPECT_TRUE(dispatcher.HandleCall(msg, t, &reply));
  };
  call(1);
  call(2);
  call(3);  // evicts 1
  call(1);  // runs again, evicts 2
  call(3);  // hit
  EXPECT_EQ(service.runs, 4);
  EXPECT_EQ(dispatcher.drc_stats().evictions, 2u);
  EXPECT_EQ(dispatcher.drc_stats().hits, 1u);
}

TEST(DispatcherNoDrcTest, DisabledCacheRunsEveryCall) {
  FakeService service;
  Program program{kProg, "fake", {{2, kV2}}, &service};
  DispatcherOptions options;
  options.enable_drc = false;
  Dispatcher dispatcher(options);
  dispatcher.AddProgram(&program);
  TransportInfo t;
  for (int i = 0; i < 2; ++i) {
    xdr::BufferChain chain;
    xdr::Encoder out(&chain);
    const uint32_t words[] = {5, 0, 2, kProg, 2, 5, kAuthNone, 0, kAuthNone, 0, 1};
    for (uint32_t w : words) out.U32(w);
    std::string s = chain.Flatten();
    std::vector<uint8_t> msg(s.begin(), s.end());
    xdr::BufferChain reply;
    EXPECT_TRUE(dispatcher.HandleCall(msg, t, &reply));
  }
  EXPECT_EQ(service.runs, 2);
}

}  // namespace
}  // namespace nfs3d::rpc
