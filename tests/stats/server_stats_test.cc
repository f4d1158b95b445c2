// The statistics kept by the dispatcher: a known sequence of calls gives
// exactly the expected counters; the Prometheus text round-trips through the
// parser nfs3stat uses.
#include "stats/server_stats.h"

#include <netinet/in.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/dispatcher.h"
#include "stats/prom_text.h"
#include "stats/prometheus.h"
#include "xdr/encoder.h"

namespace nfs3d::stats {
namespace {

using rpc::ProcResult;

// Numbered like NFSv3 so the dispatcher's status peek applies: results of
// every procedure but NULL start with an nfsstat3.
constexpr uint32_t kNfs = 100003;

ProcResult Null(void*, const rpc::CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return ProcResult::kSuccess;
}
ProcResult Ok(void*, const rpc::CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(0);
  return ProcResult::kSuccess;
}
ProcResult NoEnt(void*, const rpc::CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(2);
  return ProcResult::kSuccess;
}
ProcResult Garbage(void*, const rpc::CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return ProcResult::kGarbageArgs;
}
ProcResult Drop(void*, const rpc::CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return ProcResult::kDrop;
}
// READ3resok with post_op_attr present (84 bytes) and `count` data bytes.
ProcResult Read(void*, const rpc::CallContext&, xdr::Decoder& args, xdr::Encoder& out) {
  const uint32_t count = args.U32();
  out.U32(0);
  out.Bool(true);
  for (int i = 0; i < 21; ++i) out.U32(7);  // fattr3
  out.U32(count);
  out.Bool(false);
  std::string data(count, 'x');
  out.Opaque(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), count));
  return ProcResult::kSuccess;
}
// WRITE3resok: wcc_data with pre (24 bytes) and no post attributes.
ProcResult Write(void*, const rpc::CallContext&, xdr::Decoder& args, xdr::Encoder& out) {
  const uint32_t count = args.U32();
  out.U32(0);
  out.Bool(true);
  for (int i = 0; i < 6; ++i) out.U32(1);
  out.Bool(false);
  out.U32(count);
  out.U32(2);
  out.U64(0);
  return ProcResult::kSuccess;
}

const rpc::Procedure kProcs[] = {
    {.number = 0, .name = "NULL", .run = Null},
    {.number = 1, .name = "OK", .run = Ok},
    {.number = 2, .name = "NOENT", .run = NoEnt},
    {.number = 3, .name = "GARBAGE", .run = Garbage},
    {.number = 4, .name = "MAKE", .run = Ok, .idempotent = false},
    {.number = 5, .name = "DROP", .run = Drop},
    {.number = 6, .name = "READ", .run = Read},
    {.number = 7, .name = "WRITE", .run = Write},
};

std::string Call(uint32_t xid, uint32_t prog, uint32_t proc, uint32_t arg = 0) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  for (uint32_t w : {xid, 0u, 2u, prog, 3u, proc, 0u, 0u, 0u, 0u, arg}) e.U32(w);
  return chain.Flatten();
}

class StatsDispatcherTest : public ::testing::Test {
 protected:
  StatsDispatcherTest() {
    program_.number = kNfs;
    program_.name = "nfs";
    program_.versions.push_back({3, kProcs});
    rpc::DispatcherOptions options;
    options.stats = &stats_;
    dispatcher_ = std::make_unique<rpc::Dispatcher>(options);
    dispatcher_->AddProgram(&program_);
    for (auto* t : {&tcp_, &udp_}) {
      auto* peer = reinterpret_cast<sockaddr_in*>(&t->peer);
      peer->sin_family = AF_INET;
      peer->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      peer->sin_port = htons(800);
      t->peer_len = sizeof(sockaddr_in);
    }
    udp_.transport = rpc::Transport::kUdp;
  }

  bool Send(const std::string& message, const rpc::TransportInfo& t) {
    xdr::BufferChain reply;
    return dispatcher_->HandleCall(
        absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(message.data()), message.size()),
        t, &reply);
  }

  const ProcSnapshot& Proc(const Snapshot& s, const std::string& name) {
    for (const ProcSnapshot& p : s.procs) {
      if (p.name == name) return p;
    }
    static ProcSnapshot none;
    ADD_FAILURE() << "no " << name;
    return none;
  }

  ServerStats stats_;
  rpc::Program program_;
  std::unique_ptr<rpc::Dispatcher> dispatcher_;
  rpc::TransportInfo tcp_, udp_;
};

constexpr int kUdp = 0, kTcp = 1;

TEST_F(StatsDispatcherTest, KnownSequenceGivesExactCounters) {
  if (!NFS3D_STATS_ENABLED) GTEST_SKIP() << "statistics compiled out";
  uint32_t xid = 1;
  Send(Call(xid++, kNfs, 0), tcp_);
  Send(Call(xid++, kNfs, 0), tcp_);
  Send(Call(xid++, kNfs, 0), udp_);
  for (int i = 0; i < 3; ++i) Send(Call(xid++, kNfs, 1), tcp_);
  for (int i = 0; i < 2; ++i) Send(Call(xid++, kNfs, 2), udp_);
  Send(Call(xid++, kNfs, 3), tcp_);
  Send(Call(500, kNfs, 4), tcp_);  // non-idempotent ...
  Send(Call(500, kNfs, 4), tcp_);  // ... and its retransmission: replayed
  Send(Call(xid++, kNfs, 5), tcp_);
  Send(Call(xid++, kNfs, 6, 1000), tcp_);
  Send(Call(xid++, kNfs, 6, 70000), tcp_);
  Send(Call(xid++, kNfs, 7, 4096), udp_);
  Send(Call(xid++, kNfs, 99), tcp_);       // PROC_UNAVAIL
  Send(Call(xid++, 0x20000077, 0), tcp_);  // PROG_UNAVAIL
  Send(std::string("\1\2\3"), udp_);       // malformed: dropped

  const Snapshot s = stats_.Take();
  ASSERT_EQ(s.procs.size(), 8u);
  EXPECT_EQ(Proc(s, "NULL").calls[kTcp], 2u);
  EXPECT_EQ(Proc(s, "NULL").calls[kUdp], 1u);
  EXPECT_EQ(Proc(s, "NULL").errors[kTcp] + Proc(s, "NULL").errors[kUdp], 0u);
  EXPECT_EQ(Proc(s, "OK").calls[kTcp], 3u);
  EXPECT_EQ(Proc(s, "OK").errors[kTcp], 0u);
  EXPECT_EQ(Proc(s, "NOENT").calls[kUdp], 2u);
  EXPECT_EQ(Proc(s, "NOENT").errors[kUdp], 2u);  // nfsstat3 != NFS3_OK
  EXPECT_EQ(Proc(s, "GARBAGE").calls[kTcp], 1u);
  EXPECT_EQ(Proc(s, "GARBAGE").errors[kTcp], 1u);  // RPC-level failure
  EXPECT_EQ(Proc(s, "MAKE").calls[kTcp], 2u);      // the replay counts as a call
  EXPECT_EQ(Proc(s, "MAKE").errors[kTcp], 0u);
  EXPECT_EQ(Proc(s, "DROP").calls[kTcp], 1u);
  EXPECT_EQ(Proc(s, "DROP").errors[kTcp], 1u);
  EXPECT_EQ(Proc(s, "READ").calls[kTcp], 2u);
  EXPECT_EQ(Proc(s, "WRITE").calls[kUdp], 1u);

  EXPECT_EQ(s.messages[kTcp], 13u);
  EXPECT_EQ(s.messages[kUdp], 5u);
  auto event = [&](int t, RpcEvent e) { return s.events[t][static_cast<int>(e)]; };
  EXPECT_EQ(event(kTcp, RpcEvent::kGarbageArgs), 1u);
  EXPECT_EQ(event(kTcp, RpcEvent::kDropped), 1u);
  EXPECT_EQ(event(kTcp, RpcEvent::kDrcReplay), 1u);
  EXPECT_EQ(event(kTcp, RpcEvent::kProcUnavail), 1u);
  EXPECT_EQ(event(kTcp, RpcEvent::kProgUnavail), 1u);
  EXPECT_EQ(event(kUdp, RpcEvent::kMalformed), 1u);
  EXPECT_EQ(dispatcher_->drc_stats().hits, 1u);

  EXPECT_EQ(s.read_bytes, 71000u);
  EXPECT_EQ(s.write_bytes, 4096u);
  EXPECT_EQ(s.read_sizes[SizeBucket(1000)], 1u);
  EXPECT_EQ(s.read_sizes[SizeBucket(70000)], 1u);
  EXPECT_EQ(s.write_sizes[SizeBucket(4096)], 1u);

  // Every call that reached a procedure has one latency sample.
  uint64_t samples = 0, calls = 0;
  for (const ProcSnapshot& p : s.procs) {
    for (uint64_t b : p.latency) samples += b;
    calls += p.calls[kTcp] + p.calls[kUdp];
  }
  EXPECT_EQ(samples, calls);
}

TEST_F(StatsDispatcherTest, PrometheusTextRoundTrips) {
  if (!NFS3D_STATS_ENABLED) GTEST_SKIP() << "statistics compiled out";
  for (uint32_t xid = 1; xid <= 4; ++xid) Send(Call(xid, kNfs, 1), tcp_);
  Send(Call(9, kNfs, 2), udp_);
  std::string text = RenderPrometheus(
      stats_.Take(), {{"nfs3d_tcp_connections", "Open connections.", "gauge", {{"", 3}}}});
  absl::StatusOr<std::vector<Sample>> samples = ParsePrometheusText(text);
  ASSERT_TRUE(samples.ok()) << samples.status();
  auto find = [&](const std::string& name, const std::string& proc, const std::string& proto) {
    for (const Sample& s : *samples) {
      if (s.name == name && s.Label("proc") == proc && s.Label("proto") == proto) return s.value;
    }
    return -1.0;
  };
  EXPECT_EQ(find("nfs3d_rpc_calls_total", "OK", "tcp"), 4);
  EXPECT_EQ(find("nfs3d_rpc_calls_total", "OK", "udp"), 0);
  EXPECT_EQ(find("nfs3d_rpc_errors_total", "NOENT", "udp"), 1);
  EXPECT_EQ(find("nfs3d_rpc_duration_seconds_count", "OK", ""), 4);
  EXPECT_EQ(find("nfs3d_tcp_connections", "", ""), 3);
  // Every registered procedure is listed, with or without calls.
  for (const rpc::Procedure& p : kProcs) {
    EXPECT_GE(find("nfs3d_rpc_calls_total", p.name, "tcp"), 0) << p.name;
  }
}

TEST(ServerStatsTest, Buckets) {
  EXPECT_EQ(LatencyBucket(0), 0);
  EXPECT_EQ(LatencyBucket(1000), 0);  // 1 us
  EXPECT_EQ(LatencyBucket(1001), 1);  // just over: <= 2 us
  EXPECT_EQ(LatencyBucket(2000), 1);
  EXPECT_EQ(LatencyBucket(3000), 2);                                      // <= 4 us
  EXPECT_EQ(LatencyBucket(1000000), 10);                                  // 1 ms <= 1024 us
  EXPECT_EQ(LatencyBucket(uint64_t{100} * 1000000000), kLatencyBuckets);  // +Inf
  EXPECT_EQ(SizeBucket(0), 0);
  EXPECT_EQ(SizeBucket(512), 0);
  EXPECT_EQ(SizeBucket(513), 1);
  EXPECT_EQ(SizeBucket(4096), 3);
  EXPECT_EQ(SizeBucket(1 << 20), 11);
  EXPECT_EQ(SizeBucket((1 << 20) + 1), kSizeBuckets);
  for (int b = 0; b < kSizeBuckets; ++b) EXPECT_EQ(SizeBucket(SizeBound(b)), b);
}

TEST(ServerStatsTest, ShardsOfManyThreadsAddUp) {
  ServerStats stats;
  ASSERT_TRUE(stats.AddProgramVersion(7, 1, "p", {"NULL", "X"}));
  EXPECT_TRUE(stats.AddProgramVersion(7, 1, "p", {"NULL", "X"}));  // again: same slots
  uint32_t count = 0;
  EXPECT_EQ(stats.SlotBase(7, 1, &count), 0);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(stats.SlotBase(7, 2, &count), -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&stats] {
      for (int i = 0; i < 10000; ++i) {
        CallRecorder rec(&stats, 1, nullptr);
        rec.Procedure(7, 1, 1);
      }
    });
  }
  for (auto& t : threads) t.join();
  const Snapshot s = stats.Take();
#if NFS3D_STATS_ENABLED
  EXPECT_EQ(s.procs[1].calls[1], 40000u);
  EXPECT_EQ(s.messages[1], 40000u);
#else
  EXPECT_EQ(s.procs[1].calls[1], 0u);
#endif
}

// A predecessor's counters (a handover) count on in every later Take: a
// procedure both know is summed, one only the predecessor knew is kept.
TEST(ServerStatsTest, CarriedCountersAddToOwnOnes) {
  ServerStats stats;
  ASSERT_TRUE(stats.AddProgramVersion(7, 1, "p", {"NULL", "X"}));
  {
    CallRecorder rec(&stats, 1, nullptr);
    rec.Procedure(7, 1, 1);
  }
  Snapshot earlier;
  ProcSnapshot x;
  x.program = "p";
  x.prog = 7;
  x.vers = 1;
  x.proc = 1;
  x.name = "X";
  x.calls = {2, 5};
  x.latency[3] = 5;
  x.latency_ns = 100;
  earlier.procs.push_back(x);
  ProcSnapshot gone = x;
  gone.vers = 9;
  gone.calls = {0, 4};
  earlier.procs.push_back(gone);
  earlier.messages = {2, 9};
  earlier.events[0][static_cast<int>(RpcEvent::kGarbageArgs)] = 3;
  earlier.write_bytes = 4096;
  earlier.write_sizes[1] = 2;
  stats.Carry(earlier);
  stats.Carry(earlier);  // a second handover adds again
  const Snapshot s = stats.Take();
  const int own = NFS3D_STATS_ENABLED ? 1 : 0;
  ASSERT_EQ(s.procs.size(), 3u);
  EXPECT_EQ(s.procs[1].calls[0], 4u);
  EXPECT_EQ(s.procs[1].calls[1], 10u + own);
  EXPECT_EQ(s.procs[1].latency[3], 10u);
  EXPECT_GE(s.procs[1].latency_ns, 200u);
  EXPECT_EQ(s.procs[2].vers, 9u);
  EXPECT_EQ(s.procs[2].calls[1], 8u);
  EXPECT_EQ(s.messages[0], 4u);
  EXPECT_EQ(s.messages[1], 18u + own);
  EXPECT_EQ(s.events[0][static_cast<int>(RpcEvent::kGarbageArgs)], 6u);
  EXPECT_EQ(s.write_bytes, 8192u);
  EXPECT_EQ(s.write_sizes[1], 4u);
}

TEST(PromTextTest, ParsesLabelsEscapesAndSpecialValues) {
  auto samples = ParsePrometheusText(
      "# HELP x y\n# TYPE x counter\nx 1\ny{a=\"b\\\"c\",le=\"+Inf\"} 2.5\nz +Inf\n");
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ((*samples)[1].Label("a"), "b\"c");
  EXPECT_EQ((*samples)[1].value, 2.5);
  EXPECT_TRUE(std::isinf((*samples)[2].value));
  EXPECT_FALSE(ParsePrometheusText("x{a=\"b} 1\n").ok());
  EXPECT_FALSE(ParsePrometheusText("x nope\n").ok());
}

}  // namespace
}  // namespace nfs3d::stats
