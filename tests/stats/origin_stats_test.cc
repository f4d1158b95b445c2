// Per-origin accounting: the space-saving table keeps the busiest origins
// exact and the rest summed; the dispatcher attributes calls to their
// client, export and user; the cap holds with 10,000 distinct clients; the
// Prometheus families parse; the slow-call log is rate-limited.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/dispatcher.h"
#include "stats/origin_table.h"
#include "stats/prom_text.h"
#include "stats/prometheus_origins.h"
#include "stats/server_stats.h"
#include "stats/slow_call_log.h"
#include "xdr/encoder.h"

namespace nfs3d::stats {
namespace {

using rpc::ProcResult;

constexpr uint32_t kNfs = 100003;

sockaddr_storage V4(uint32_t host_order) {
  sockaddr_storage ss{};
  auto* in = reinterpret_cast<sockaddr_in*>(&ss);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(host_order);
  in->sin_port = htons(700);
  return ss;
}

CallOutcome OneCall() {
  CallOutcome c;
  c.latency_ns = 1000;
  c.latency_bucket = LatencyBucket(1000);
  return c;
}

TEST(OriginTableTest, KeysNameAddresses) {
  EXPECT_EQ(ClientName(ClientKey(V4(0xc0000207))), "192.0.2.7");
  sockaddr_storage ss{};
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
  in6->sin6_family = AF_INET6;
  inet_pton(AF_INET6, "2001:db8::1", &in6->sin6_addr);
  EXPECT_EQ(ClientName(ClientKey(ss)), "2001:db8::1");
  // The port does not matter: one client, many connections.
  sockaddr_storage other_port = V4(0xc0000207);
  reinterpret_cast<sockaddr_in*>(&other_port)->sin_port = htons(901);
  EXPECT_EQ(ClientKey(other_port), ClientKey(V4(0xc0000207)));
}

TEST(OriginTableTest, BusiestStayExactAndSumsAreTotal) {
  OriginTable table(8);
  uint64_t total = 0;
  // Two heavy clients, then a flood of one-off clients, then more heavy calls.
  for (int i = 0; i < 1000; ++i) {
    table.Record(ClientKey(V4(1)), nullptr, OneCall());
    table.Record(ClientKey(V4(2)), nullptr, OneCall());
    total += 2;
  }
  for (uint32_t i = 0; i < 5000; ++i) {
    table.Record(ClientKey(V4(0x0a000000 + i)), nullptr, OneCall());
    ++total;
  }
  for (int i = 0; i < 10; ++i) {
    table.Record(ClientKey(V4(1)), nullptr, OneCall());
    ++total;
  }
  EXPECT_EQ(table.size(), 8u);
  absl::flat_hash_map<OriginKey, OriginRow> merged;
  OriginCounters other;
  uint64_t evictions = 0;
  table.MergeInto(&merged, &other, &evictions);
  OriginSnapshot snap = FinishSnapshot(std::move(merged), other, evictions, 8, 0);
  ASSERT_GE(snap.rows.size(), 2u);
  EXPECT_EQ(ClientName(snap.rows[0].key), "0.0.0.1");
  EXPECT_EQ(snap.rows[0].counters.calls, 1010u);
  EXPECT_EQ(ClientName(snap.rows[1].key), "0.0.0.2");
  EXPECT_EQ(snap.rows[1].counters.calls, 1000u);
  uint64_t sum = snap.other.calls;
  for (const OriginRow& r : snap.rows) sum += r.counters.calls;
  EXPECT_EQ(sum, total);
  EXPECT_EQ(snap.evictions, 5000u - 6u);
}

TEST(OriginTableTest, TenThousandClientsHoldTheCap) {
  OriginTable table(128);
  const size_t empty_bytes = table.MemoryBytes();
  for (uint32_t round = 0; round < 3; ++round) {
    for (uint32_t i = 0; i < 10000; ++i) {
      table.Record(ClientKey(V4(0x0a000000 + i)), nullptr, OneCall());
    }
  }
  EXPECT_EQ(table.size(), 128u);
  EXPECT_EQ(table.MemoryBytes(), empty_bytes);  // nothing grew past the reservation
  std::printf("origin table: 128 tracked of 10000 clients, %zu bytes (%zu per tracked origin)\n",
              table.MemoryBytes(), BytesPerTrackedOrigin());
}

// --- through the dispatcher -------------------------------------------------

ProcResult Ok(void*, const rpc::CallContext& ctx, xdr::Decoder& args, xdr::Encoder& out) {
  // The "export" is the first argument word, as nfsd would find it from the
  // file handle.
  const uint32_t export_id = args.U32();
  if (export_id != 0) {
    ctx.export_id = export_id;
    ctx.export_known = true;
  }
  out.U32(export_id == 99 ? 2 : 0);  // export 99 answers NOENT
  return ProcResult::kSuccess;
}

const rpc::Procedure kProcs[] = {
    {.number = 0, .name = "NULL", .run = Ok},
    {.number = 1, .name = "GETATTR", .run = Ok},
    {.number = 2, .name = "MAKE", .run = Ok, .idempotent = false},
};

// An AUTH_SYS call from `uid` whose argument is `export_id`.
std::string Call(uint32_t xid, uint32_t proc, uint32_t uid, uint32_t export_id) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  for (uint32_t w : {xid, 0u, 2u, kNfs, 3u, proc}) e.U32(w);
  e.U32(1);   // AUTH_SYS
  e.U32(24);  // body length
  e.U32(0);   // stamp
  e.U32(4);   // machine name "host"
  e.U32(0x686f7374);
  e.U32(uid);
  e.U32(100);  // gid
  e.U32(0);    // no gids
  e.U32(0);    // AUTH_NONE verifier
  e.U32(0);
  e.U32(export_id);
  return chain.Flatten();
}

class OriginDispatchTest : public ::testing::Test {
 protected:
  OriginDispatchTest() {
    OriginLimits limits;
    limits.clients = 4;
    limits.exports = 4;
    limits.users = 4;
    stats_.SetOriginLimits(limits);
    program_.number = kNfs;
    program_.name = "nfs";
    program_.versions.push_back({3, kProcs});
    rpc::DispatcherOptions options;
    options.stats = &stats_;
    dispatcher_ = std::make_unique<rpc::Dispatcher>(options);
    dispatcher_->AddProgram(&program_);
  }

  void Send(uint32_t client, const std::string& message) {
    rpc::TransportInfo t;
    t.peer = V4(client);
    t.peer_len = sizeof(sockaddr_in);
    xdr::BufferChain reply;
    dispatcher_->HandleCall(
        absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(message.data()), message.size()),
        t, &reply);
  }

  ServerStats stats_;
  rpc::Program program_;
  std::unique_ptr<rpc::Dispatcher> dispatcher_;
};

const OriginRow* Find(const OriginSnapshot& s, const OriginKey& key) {
  for (const OriginRow& r : s.rows) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

TEST_F(OriginDispatchTest, CallsGoToTheirClientExportAndUser) {
  for (uint32_t i = 0; i < 30; ++i) Send(0xc0000201, Call(i, 1, 1000, 7));
  for (uint32_t i = 0; i < 10; ++i) Send(0xc0000202, Call(100 + i, 1, 2000, 99));
  Send(0xc0000202, Call(200, 0, 2000, 0));  // NULL: no export
  // A non-idempotent call and its retransmission (answered from the DRC).
  Send(0xc0000203, Call(300, 2, 0, 7));
  Send(0xc0000203, Call(300, 2, 0, 7));

  OriginsSnapshot s = stats_.TakeOrigins();
  const OriginRow* a = Find(s.clients, ClientKey(V4(0xc0000201)));
  const OriginRow* b = Find(s.clients, ClientKey(V4(0xc0000202)));
  const OriginRow* c = Find(s.clients, ClientKey(V4(0xc0000203)));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->counters.calls, 30u);
  EXPECT_EQ(a->counters.errors, 0u);
  EXPECT_EQ(b->counters.calls, 11u);
  EXPECT_EQ(b->counters.errors, 10u);
  EXPECT_EQ(c->counters.calls, 2u);
  EXPECT_EQ(c->counters.retransmits, 1u);
  EXPECT_EQ(s.clients.rows[0].key, ClientKey(V4(0xc0000201)));  // busiest first

  const OriginRow* e7 = Find(s.exports, ExportKey(7));
  const OriginRow* e99 = Find(s.exports, ExportKey(99));
  const OriginRow* none = Find(s.exports, OriginKey{kNoExport, 0});
  ASSERT_TRUE(e7 && e99 && none);
  EXPECT_EQ(e7->counters.calls, 31u);  // the DRC replay ran nothing: no export
  EXPECT_EQ(e99->counters.errors, 10u);
  EXPECT_EQ(none->counters.calls, 2u);  // NULL and the replay

  const OriginRow* u1000 = Find(s.users, UidKey(1000));
  const OriginRow* u2000 = Find(s.users, UidKey(2000));
  ASSERT_TRUE(u1000 && u2000);
  EXPECT_EQ(u1000->counters.calls, 30u);
  EXPECT_EQ(u2000->counters.calls, 11u);
  EXPECT_EQ(UserLabel(*u1000), "1000");

  std::string text;
  RenderOrigins(
      s, [](uint32_t id) { return id == 7 ? std::string("/srv/seven") : ""; }, &text);
  absl::StatusOr<std::vector<Sample>> samples = ParsePrometheusText(text);
  ASSERT_TRUE(samples.ok()) << samples.status();
  double seven = -1, other_clients = -1, a_count = -1;
  for (const Sample& x : *samples) {
    if (x.name == "nfs3d_export_calls_total" && x.Label("export") == "/srv/seven") seven = x.value;
    if (x.name == "nfs3d_client_calls_total" && x.Label("client") == "other") {
      other_clients = x.value;
    }
    if (x.name == "nfs3d_client_duration_seconds_count" && x.Label("client") == "192.0.2.1") {
      a_count = x.value;
    }
  }
  EXPECT_EQ(seven, 31);
  EXPECT_EQ(other_clients, 0);
  EXPECT_EQ(a_count, 30);
}

TEST_F(OriginDispatchTest, TenThousandClientsThroughTheDispatcher) {
  // Space-saving keeps every origin with more than 1/capacity of the calls:
  // here one client sends a third of them, between 10,000 one-off clients.
  for (uint32_t i = 0; i < 10000; ++i) {
    Send(0x0a000000 + i, Call(1000 + i, 1, 5000 + i, 7));
    if (i % 2 == 0) Send(0xc0000201, Call(i, 1, 1000, 7));
  }
  OriginsSnapshot s = stats_.TakeOrigins();
  EXPECT_EQ(s.clients.rows.size(), 4u);
  EXPECT_EQ(s.users.rows.size(), 4u);
  EXPECT_EQ(s.clients.rows[0].key, ClientKey(V4(0xc0000201)));
  EXPECT_EQ(s.clients.rows[0].counters.calls, 5000u);
  uint64_t sum = s.clients.other.calls;
  for (const OriginRow& r : s.clients.rows) sum += r.counters.calls;
  EXPECT_EQ(sum, 15000u);
  std::string text;
  RenderOrigins(s, nullptr, &text);
  absl::StatusOr<std::vector<Sample>> samples = ParsePrometheusText(text);
  ASSERT_TRUE(samples.ok());
  size_t client_series = 0;
  for (const Sample& x : *samples) client_series += x.name == "nfs3d_client_calls_total";
  EXPECT_EQ(client_series, 5u);  // 4 tracked + other
  std::printf("10000 clients, cap 4 per shard: client tables hold %zu bytes\n",
              s.clients.tracked_bytes);
}

TEST(OriginRecorderTest, KerberosCallersCountUnderTheirPrincipal) {
  ServerStats stats;
  for (int i = 0; i < 3; ++i) {
    CallRecorder rec(&stats, 1, nullptr);
    rec.Peer(V4(0xc0000205));
    rec.User(kKrb5i, 1000, "alice@EXAMPLE.ORG");
  }
  {
    CallRecorder rec(&stats, 1, nullptr);
    rec.Peer(V4(0xc0000205));
    rec.User(kAuthSys, 1000, "host.example.org");  // AUTH_SYS: the uid, not the machine
  }
  OriginsSnapshot s = stats.TakeOrigins();
  ASSERT_EQ(s.users.rows.size(), 2u);
  EXPECT_EQ(UserLabel(s.users.rows[0]), "alice@EXAMPLE.ORG");
  EXPECT_EQ(s.users.rows[0].counters.calls, 3u);
  EXPECT_EQ(UserLabel(s.users.rows[1]), "1000");
  ASSERT_EQ(s.clients.rows.size(), 1u);
  EXPECT_EQ(s.clients.rows[0].counters.calls, 4u);
}

// --- slow-call log ----------------------------------------------------------

TEST(SlowCallLogTest, LogsOnceWithDetailsAndIsRateLimited) {
  std::vector<std::string> lines;
  SlowCallLog log([](uint32_t) { return std::string("/srv/a"); }, 3,
                  [&](const std::string& line) { lines.push_back(line); });
  log.SetThresholdMs(5);
  SlowCall call;
  call.client = "192.0.2.9";
  call.user = "1000";
  call.has_export = true;
  call.export_id = 1;
  call.proc = "nfs GETATTR";
  const uint8_t fh[] = {0xab, 0xcd};
  call.handle = absl::Span<const uint8_t>(fh, 2);
  call.total_ns = 12'000'000;
  call.proc_ns = 11'000'000;
  for (int i = 0; i < 10; ++i) log.Report(call);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("12.0 ms nfs GETATTR"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("client 192.0.2.9 user 1000 export /srv/a fh abcd"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("procedure/backend 11.0 ms, rest 1.0 ms"), std::string::npos);
  EXPECT_EQ(log.suppressed_total(), 7u);
}

ProcResult Slow(void*, const rpc::CallContext& ctx, xdr::Decoder&, xdr::Encoder& out) {
  ctx.export_id = 3;
  ctx.export_known = true;
  // Not a timing assertion: the call only needs to take longer than 1 ms.
  struct timespec ts = {0, 3'000'000};
  nanosleep(&ts, nullptr);
  out.U32(0);
  return ProcResult::kSuccess;
}

TEST(SlowCallLogTest, DispatcherReportsSlowCallsOnly) {
  const rpc::Procedure procs[] = {{.number = 0, .name = "NULL", .run = Ok},
                                  {.number = 1, .name = "SLOW", .run = Slow}};
  rpc::Program program;
  program.number = kNfs;
  program.name = "nfs";
  program.versions.push_back({3, procs});
  ServerStats stats;
  std::vector<std::string> lines;
  SlowCallLog log(nullptr, 10, [&](const std::string& line) { lines.push_back(line); });
  log.SetThresholdMs(1);
  stats.SetSlowCallLog(&log);
  rpc::DispatcherOptions options;
  options.stats = &stats;
  rpc::Dispatcher dispatcher(options);
  dispatcher.AddProgram(&program);
  rpc::TransportInfo t;
  t.peer = V4(0xc0000209);
  xdr::BufferChain reply;
  // SLOW with a 2-byte handle as its first argument.
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  for (uint32_t w : {7u, 0u, 2u, kNfs, 3u, 1u, 1u, 24u, 0u, 4u, 0x686f7374u, 42u, 42u, 0u, 0u, 0u,
                     2u, 0xbeef0000u}) {
    e.U32(w);
  }
  const std::string slow = chain.Flatten();
  dispatcher.HandleCall(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(slow.data()), slow.size()), t,
      &reply);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("nfs SLOW xid 00000007 client 192.0.2.9 user 42 export export#3 fh beef"),
            std::string::npos)
      << lines[0];
}

}  // namespace
}  // namespace nfs3d::stats
