// RPCSEC_GSS end to end inside one process: the test initiator
// (client/gss_initiator.h) talks to a Dispatcher with a GssServer through
// HandleCall, with real Kerberos tickets from the test KDC
// (tests/fixtures/krb5-kdc.sh; ctest fixture krb5, NFS3D_KRB5_DIR points at it).
#include "rpc/gss/gss_server.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "gtest/gtest.h"

#include "client/gss_initiator.h"
#include "rpc/dispatcher.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "rpc/gss/seq_window.h"
#include "rpc/program.h"
#include "stats/server_stats.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc::gss {
namespace {

constexpr uint32_t kProg = 0x20000077;
constexpr uint32_t kVers = 1;

struct Counter {
  uint32_t runs = 0;
};

ProcResult Null(void*, const CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return ProcResult::kSuccess;
}
// Who the caller is, then its arguments back.
ProcResult WhoAmI(void*, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out) {
  out.U32(ctx.cred.flavor);
  out.U32(ctx.cred.uid);
  out.U32(ctx.cred.gid);
  out.U32(ctx.cred.anonymous ? 1 : 0);
  absl::Span<const uint8_t> payload = in.Opaque(1 << 20);
  if (!in.ok()) return ProcResult::kGarbageArgs;
  out.Opaque(payload);
  return ProcResult::kSuccess;
}
// Not idempotent: counts its runs (duplicate request cache).
ProcResult Bump(void* service, const CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(++static_cast<Counter*>(service)->runs);
  return ProcResult::kSuccess;
}
// Results partly in memory, partly a file segment (as READ over TCP): a
// word, the file (its length a multiple of 4), a word.
int g_file_fd = -1;
constexpr size_t kFileBytes = 256 * 1024;
ProcResult FileBacked(void*, const CallContext&, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(0x11111111);
  out.chain()->AppendFile(nullptr, g_file_fd, 0, kFileBytes);
  out.U32(0x22222222);
  return ProcResult::kSuccess;
}
// Whether the procedure may leave file segments to the transport.
ProcResult MaySplice(void*, const CallContext& ctx, xdr::Decoder&, xdr::Encoder& out) {
  out.U32(ctx.transport->file_segments ? 1 : 0);
  return ProcResult::kSuccess;
}
const Procedure kProcs[] = {
    {0, "NULL", Null},
    {1, "WHOAMI", WhoAmI},
    {.number = 2, .name = "BUMP", .run = Bump, .idempotent = false},
    {3, "FILE", FileBacked},
    {4, "MAYSPLICE", MaySplice},
};

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

class GssServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("NFS3D_KRB5_DIR");
    if (dir == nullptr) GTEST_SKIP() << "no test KDC (NFS3D_KRB5_DIR unset)";
    dir_ = dir;
    // The test realm's krb5.conf; no replay cache files.
    setenv("KRB5_CONFIG", (dir_ + "/krb5.conf").c_str(), 1);
    setenv("KRB5RCACHENAME", "none:", 1);
    MakeServer({});
  }

  void MakeServer(GssServerOptions options) {
    options.keytab = dir_ + "/nfs.keytab";
    options.principal = "nfs/localhost";
    options.now = [this] { return now_; };
    absl::StatusOr<std::unique_ptr<GssServer>> gss = GssServer::Create(options);
    ASSERT_TRUE(gss.ok()) << gss.status();
    dispatcher_.reset();
    gss_ = std::move(*gss);
    program_ = SingleVersionProgram(kProg, "gss-test", kVers, kProcs, &counter_);
    stats_ = std::make_unique<stats::ServerStats>();
    dispatcher_ = std::make_unique<Dispatcher>(
        DispatcherOptions{.stats = stats_.get(), .wrapping = gss_.get()});
    dispatcher_->AddProgram(&program_);
  }

  // The reply to message, or "" when the server sends none.
  std::string Send(const std::string& message) {
    xdr::BufferChain reply;
    if (!dispatcher_->HandleCall(Bytes(message), transport_, &reply)) return "";
    return reply.Flatten();
  }

  std::unique_ptr<client::GssInitiator> Establish(const std::string& principal, GssService service,
                                                  bool gssapi_only = false) {
    client::GssInitiatorOptions o{.principal = principal,
                                  .client_keytab = dir_ + "/client.keytab",
                                  .service = service,
                                  .gssapi_only = gssapi_only};
    auto g = client::GssInitiator::Establish(
        o, kProg, kVers, xid_,
        [this](const std::string& m) -> absl::StatusOr<std::string> { return Send(m); });
    xid_ += 10;
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }

  // One call; the plain results (or the refusal in *header).
  absl::StatusOr<std::string> Call(client::GssInitiator& g, uint32_t proc, const std::string& args,
                                   ReplyHeader* header) {
    const uint32_t seq = g.NextSeq();
    const std::string reply = Send(g.EncodeCall(++xid_, kProg, kVers, proc, Bytes(args), seq));
    if (reply.empty()) return absl::DeadlineExceededError("no reply");
    return g.OpenReply(Bytes(reply), seq, header);
  }

  std::string dir_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  TransportInfo transport_{};
  Counter counter_;
  Program program_;
  std::unique_ptr<GssServer> gss_;
  std::unique_ptr<stats::ServerStats> stats_;
  std::unique_ptr<Dispatcher> dispatcher_;
  uint32_t xid_ = 1000;
};

struct WhoAmIRes {
  uint32_t flavor, uid, gid, anonymous;
  std::string echo;
};
WhoAmIRes ParseWhoAmI(const std::string& results) {
  xdr::Decoder d(Bytes(results));
  WhoAmIRes r{d.U32(), d.U32(), d.U32(), d.U32(), ""};
  absl::Span<const uint8_t> echo = d.Opaque(1 << 20);
  r.echo.assign(reinterpret_cast<const char*>(echo.data()), echo.size());
  EXPECT_TRUE(d.ok());
  return r;
}

std::string Args(const std::string& payload) {
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  e.Opaque(Bytes(payload));
  return c.Flatten();
}

TEST_F(GssServerTest, EachServiceRunsAsTheMappedUser) {
  for (GssService service : {GssService::kNone, GssService::kIntegrity, GssService::kPrivacy}) {
    SCOPED_TRACE(static_cast<int>(service));
    auto g = Establish("daemon", service);
    ASSERT_NE(g, nullptr);
    ReplyHeader h;
    absl::StatusOr<std::string> res = Call(*g, 1, Args("payload " + std::string(3000, 'x')), &h);
    ASSERT_TRUE(res.ok()) << res.status();
    ASSERT_EQ(h.accept_stat, 0u);
    WhoAmIRes who = ParseWhoAmI(*res);
    EXPECT_EQ(who.flavor, PseudoFlavor(service));
    EXPECT_EQ(who.uid, 1u);  // Debian's "daemon"
    EXPECT_EQ(who.gid, 1u);
    EXPECT_EQ(who.anonymous, 0u);
    EXPECT_TRUE(who.echo == "payload " + std::string(3000, 'x'));
  }
  EXPECT_EQ(gss_->contexts(), 3u);
  // Statistics per flavor, and per procedure from the plain results.
  const stats::Snapshot snap = stats_->Take();
  const int tcp = static_cast<int>(Transport::kTcp);
  for (stats::FlavorSlot f :
       {stats::FlavorSlot::kKrb5, stats::FlavorSlot::kKrb5i, stats::FlavorSlot::kKrb5p}) {
    EXPECT_EQ(snap.flavors[tcp][static_cast<int>(f)], 1u) << stats::FlavorSlotName(f);
  }
}

TEST_F(GssServerTest, MachineAndUnknownPrincipalsAreAnonymous) {
  for (const char* principal : {"nosuchuser", "host/localhost"}) {
    auto g = Establish(principal, GssService::kNone);
    ASSERT_NE(g, nullptr);
    ReplyHeader h;
    absl::StatusOr<std::string> res = Call(*g, 1, Args(""), &h);
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_EQ(ParseWhoAmI(*res).anonymous, 1u) << principal;
  }
}

TEST_F(GssServerTest, PrivacyHidesArgumentsAndResults) {
  auto g = Establish("daemon", GssService::kPrivacy);
  ASSERT_NE(g, nullptr);
  const std::string secret = "the quick brown fox jumps over the lazy dog";
  const uint32_t seq = g->NextSeq();
  const std::string call = g->EncodeCall(77, kProg, kVers, 1, Bytes(Args(secret)), seq);
  EXPECT_EQ(call.find(secret), std::string::npos);
  const std::string reply = Send(call);
  EXPECT_EQ(reply.find(secret), std::string::npos);
  ReplyHeader h;
  absl::StatusOr<std::string> res = g->OpenReply(Bytes(reply), seq, &h);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(ParseWhoAmI(*res).echo, secret);
}

// A handover (ExportContexts in one server, ImportContexts in the next):
// each context goes on in the new server with its tokens, done by OpenSSL
// or exported and imported by GSS-API, and its sequence window: a number
// used before is still a replay after.
TEST_F(GssServerTest, ContextsCarryOnInAnotherServer) {
  for (bool server_gssapi : {false, true}) {
    GssServerOptions options;
    options.gssapi_only = server_gssapi;
    MakeServer(options);
    std::vector<std::unique_ptr<client::GssInitiator>> clients;
    std::vector<std::string> used;  // a call of each, answered before
    for (GssService service : {GssService::kNone, GssService::kIntegrity, GssService::kPrivacy}) {
      clients.push_back(Establish("daemon", service));
      ASSERT_NE(clients.back(), nullptr);
      used.push_back(clients.back()->EncodeCall(++xid_, kProg, kVers, 1, Bytes(Args("before")),
                                                clients.back()->NextSeq()));
      ASSERT_FALSE(Send(used.back()).empty());
    }
    std::vector<HandedContext> handed = gss_->ExportContexts();
    ASSERT_EQ(handed.size(), 3u);
    for (const HandedContext& h : handed) {
      EXPECT_EQ(h.protection.keys.has_value(), !server_gssapi);
      EXPECT_EQ(h.protection.gss_token.empty(), !server_gssapi);
    }
    MakeServer(options);
    ASSERT_EQ(gss_->ImportContexts(handed), 3u);
    for (size_t i = 0; i < clients.size(); ++i) {
      SCOPED_TRACE(testing::Message() << "server on GSS-API " << server_gssapi << ", client " << i);
      ReplyHeader h;
      absl::StatusOr<std::string> res = Call(*clients[i], 1, Args("after"), &h);
      ASSERT_TRUE(res.ok()) << res.status();
      ASSERT_EQ(h.accept_stat, 0u);
      EXPECT_EQ(ParseWhoAmI(*res).uid, 1u);
      EXPECT_EQ(ParseWhoAmI(*res).echo, "after");
      EXPECT_TRUE(Send(used[i]).empty());  // a replay across the handover
    }
    EXPECT_EQ(gss_->contexts(), 3u);
  }
}

TEST_F(GssServerTest, ReplaysAndCallsTooOldAreDropped) {
  auto g = Establish("daemon", GssService::kIntegrity);
  ASSERT_NE(g, nullptr);
  const std::string first = g->EncodeCall(500, kProg, kVers, 0, {}, 1);
  EXPECT_FALSE(Send(first).empty());
  EXPECT_TRUE(Send(first).empty());  // the same sequence number again
  // A call overtaken on the server by more than the announced window of
  // later calls (it waited behind a slow one) is still answered, once.
  const std::string late = g->EncodeCall(501, kProg, kVers, 0, {}, 2);
  const uint32_t high = 2 + g->seq_window() + 5;
  EXPECT_FALSE(Send(g->EncodeCall(502, kProg, kVers, 0, {}, high)).empty());
  EXPECT_FALSE(Send(late).empty());
  EXPECT_TRUE(Send(late).empty());
  // Inside the window, unused: accepted out of order.
  EXPECT_FALSE(Send(g->EncodeCall(503, kProg, kVers, 0, {}, high - 3)).empty());
  // Beyond what the window remembers: dropped unseen.
  const std::string ancient = g->EncodeCall(504, kProg, kVers, 0, {}, 3);
  EXPECT_FALSE(Send(g->EncodeCall(505, kProg, kVers, 0, {}, 3 + SeqWindow::kTracked)).empty());
  EXPECT_TRUE(Send(ancient).empty());
}

// A call stuck in a backend is answered early by running its bytes again
// (rpc/running_call.h): that second run must not be taken for a replay, or
// the client would hear nothing until it retransmits.
TEST_F(GssServerTest, CallAnsweredEarlyIsNotAReplay) {
  auto g = Establish("daemon", GssService::kIntegrity);
  ASSERT_NE(g, nullptr);
  const std::string call = g->EncodeCall(600, kProg, kVers, 0, {}, 7);
  EXPECT_FALSE(Send(call).empty());
  transport_.answered_early = true;
  const std::string early = Send(call);
  transport_.answered_early = false;
  ASSERT_FALSE(early.empty());
  ReplyHeader header;
  EXPECT_TRUE(g->OpenReply(Bytes(early), 7, &header).ok());
  EXPECT_TRUE(Send(call).empty());  // from a client it is still a replay
}

TEST_F(GssServerTest, ForgedProtectionIsRefused) {
  auto g = Establish("daemon", GssService::kIntegrity);
  ASSERT_NE(g, nullptr);
  ReplyHeader h;
  // A changed argument byte: the checksum no longer matches → GARBAGE_ARGS,
  // still with a verifier the client can check.
  uint32_t seq = g->NextSeq();
  std::string call = g->EncodeCall(600, kProg, kVers, 1, Bytes(Args("abcdefgh")), seq);
  call[call.find("abcdefgh")] ^= 1;
  ASSERT_TRUE(g->OpenReply(Bytes(Send(call)), seq, &h).ok());
  EXPECT_EQ(h.accept_stat, static_cast<uint32_t>(AcceptStat::kGarbageArgs));
  // A changed header (procedure number): the header MIC fails → CREDPROBLEM.
  seq = g->NextSeq();
  call = g->EncodeCall(601, kProg, kVers, 1, Bytes(Args("x")), seq);
  call[23] ^= 2;  // proc 1 → 3
  std::string reply = Send(call);
  ASSERT_TRUE(g->OpenReply(Bytes(reply), seq, &h).ok());
  EXPECT_EQ(h.reply_stat, 1u);
  EXPECT_EQ(h.auth_stat, kAuthStatCredProblem);
  // krb5p: a flipped byte of the sealed body → GARBAGE_ARGS.
  g->set_service(GssService::kPrivacy);
  seq = g->NextSeq();
  call = g->EncodeCall(602, kProg, kVers, 1, Bytes(Args("abcdefgh")), seq);
  call[call.size() - 20] ^= 0x40;
  ASSERT_TRUE(g->OpenReply(Bytes(Send(call)), seq, &h).ok());
  EXPECT_EQ(h.accept_stat, static_cast<uint32_t>(AcceptStat::kGarbageArgs));
  EXPECT_EQ(counter_.runs, 0u);
  // Refusals count as auth errors, bad protection as garbage arguments.
  const stats::Snapshot snap = stats_->Take();
  const int tcp = static_cast<int>(Transport::kTcp);
  EXPECT_EQ(snap.events[tcp][static_cast<int>(stats::RpcEvent::kAuthError)], 1u);
  EXPECT_EQ(snap.events[tcp][static_cast<int>(stats::RpcEvent::kGarbageArgs)], 2u);
}

TEST_F(GssServerTest, BigAndFileBackedBodiesInEachService) {
  char path[] = "/tmp/gss_server_testXXXXXX";
  g_file_fd = mkstemp(path);
  ASSERT_GE(g_file_fd, 0);
  unlink(path);
  std::string file(kFileBytes, '\0');
  for (size_t i = 0; i < file.size(); ++i) file[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_EQ(write(g_file_fd, file.data(), file.size()), static_cast<ssize_t>(file.size()));
  std::string big(700 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 13);
  for (GssService service : {GssService::kNone, GssService::kIntegrity, GssService::kPrivacy}) {
    SCOPED_TRACE(static_cast<int>(service));
    auto g = Establish("daemon", service);
    ASSERT_NE(g, nullptr);
    ReplyHeader h;
    absl::StatusOr<std::string> res = Call(*g, 1, Args(big), &h);
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_TRUE(ParseWhoAmI(*res).echo == big);
    res = Call(*g, 3, "", &h);
    ASSERT_TRUE(res.ok()) << res.status();
    ASSERT_EQ(res->size(), kFileBytes + 8);
    EXPECT_EQ(res->substr(0, 4), "\x11\x11\x11\x11");
    EXPECT_TRUE(res->substr(4, kFileBytes) == file);
    EXPECT_EQ(res->substr(4 + kFileBytes), "\x22\x22\x22\x22");
  }
  close(g_file_fd);
  g_file_fd = -1;
}

// Integrity and privacy read every byte of the results, so procedures of
// those calls are told to keep them in memory; krb5 alone splices as sys does.
TEST_F(GssServerTest, ProtectedResultsAreNotLeftAsFileSegments) {
  transport_.file_segments = true;
  for (GssService service : {GssService::kNone, GssService::kIntegrity, GssService::kPrivacy}) {
    SCOPED_TRACE(static_cast<int>(service));
    auto g = Establish("daemon", service);
    ASSERT_NE(g, nullptr);
    ReplyHeader h;
    absl::StatusOr<std::string> res = Call(*g, 4, "", &h);
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_EQ(*res,
              service == GssService::kNone ? std::string("\0\0\0\1", 4) : std::string(4, '\0'));
  }
}

// Tokens made by nfs3d (OpenSSL) on one side and by MIT's GSS-API on the
// other, in each service and both directions.
TEST_F(GssServerTest, OwnTokensAndGssApiTokensInterwork) {
  std::string big(300 * 1024 + 4, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31 + i / 977);
  for (bool server_gssapi : {false, true}) {
    GssServerOptions options;
    options.gssapi_only = server_gssapi;
    MakeServer(options);
    for (GssService service : {GssService::kNone, GssService::kIntegrity, GssService::kPrivacy}) {
      SCOPED_TRACE(testing::Message() << "server on GSS-API " << server_gssapi << ", service "
                                      << static_cast<int>(service));
      auto g = Establish("daemon", service, /*gssapi_only=*/!server_gssapi);
      ASSERT_NE(g, nullptr);
      for (const std::string& payload : {std::string("short"), big}) {
        ReplyHeader h;
        absl::StatusOr<std::string> res = Call(*g, 1, Args(payload), &h);
        ASSERT_TRUE(res.ok()) << res.status();
        ASSERT_EQ(h.accept_stat, 0u);
        EXPECT_TRUE(ParseWhoAmI(*res).echo == payload);
      }
    }
  }
}

TEST_F(GssServerTest, UnknownDestroyedAndExpiredContexts) {
  auto g = Establish("daemon", GssService::kNone);
  ASSERT_NE(g, nullptr);
  ReplyHeader h;
  uint32_t seq = g->NextSeq();
  // DESTROY: answered with a verifier, then the handle is gone.
  std::string reply = Send(g->EncodeCall(700, kProg, kVers, 0, {}, seq, GssProc::kDestroy));
  ASSERT_TRUE(g->OpenReply(Bytes(reply), seq, &h).ok());
  EXPECT_EQ(h.accept_stat, 0u);
  EXPECT_EQ(gss_->contexts(), 0u);
  ASSERT_TRUE(Call(*g, 1, Args(""), &h).ok());
  EXPECT_EQ(h.reply_stat, 1u);
  EXPECT_EQ(h.auth_stat, kAuthStatCredProblem);

  // Past the ticket's lifetime (10 h in the test realm): CTXPROBLEM.
  auto old = Establish("daemon", GssService::kNone);
  ASSERT_NE(old, nullptr);
  now_ += absl::Hours(11);
  ASSERT_TRUE(Call(*old, 1, Args(""), &h).ok());
  EXPECT_EQ(h.reply_stat, 1u);
  EXPECT_EQ(h.auth_stat, kAuthStatCtxProblem);
}

TEST_F(GssServerTest, ContextCountIsBounded) {
  GssServerOptions o;
  o.max_contexts = 2;
  MakeServer(o);
  auto a = Establish("daemon", GssService::kNone);
  now_ += absl::Seconds(1);
  auto b = Establish("daemon", GssService::kNone);
  now_ += absl::Seconds(1);
  ReplyHeader h;
  ASSERT_TRUE(Call(*a, 0, "", &h).ok());  // a is now the more recently used
  auto c = Establish("nosuchuser", GssService::kNone);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(gss_->contexts(), 2u);
  ASSERT_TRUE(Call(*b, 0, "", &h).ok());
  EXPECT_EQ(h.auth_stat, kAuthStatCredProblem);  // b went
  ASSERT_TRUE(Call(*a, 0, "", &h).ok());
  EXPECT_EQ(h.reply_stat, 0u);
}

TEST_F(GssServerTest, BadTokensAreRefusedWithoutAContext) {
  GssServerOptions o;
  o.max_contexts = 1;
  MakeServer(o);
  auto live = Establish("daemon", GssService::kNone);
  ASSERT_NE(live, nullptr);
  // INIT with a token that is no Kerberos AP-REQ.
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  xdr::BufferChain cred_chain;
  xdr::Encoder ce(&cred_chain);
  xdr::Encode(ce, GssCred{.proc = GssProc::kInit});
  const std::string cred = cred_chain.Flatten();
  xdr::Encode(
      e, CallHeader{.xid = 9, .prog = kProg, .vers = kVers, .cred = {kRpcsecGss, Bytes(cred)}});
  const std::string junk(300, 'j');
  xdr::Encode(e, GssInitArg{.token = Bytes(junk)});
  const std::string reply = Send(chain.Flatten());
  ReplyHeader h;
  xdr::Decoder d(Bytes(reply));
  ASSERT_TRUE(xdr::Decode(d, &h));
  ASSERT_EQ(h.accept_stat, 0u);
  GssInitRes res;
  ASSERT_TRUE(xdr::Decode(d, &res));
  EXPECT_TRUE(GSS_ERROR(res.major));
  EXPECT_TRUE(res.handle.empty());
  // It took no room: the one live context is still there.
  EXPECT_EQ(gss_->contexts(), 1u);
  ASSERT_TRUE(Call(*live, 0, "", &h).ok());
  EXPECT_EQ(h.reply_stat, 0u);
}

TEST_F(GssServerTest, RetransmissionWithANewSequenceNumberHitsTheCache) {
  auto g = Establish("daemon", GssService::kPrivacy);
  ASSERT_NE(g, nullptr);
  ReplyHeader h;
  for (uint32_t attempt = 0; attempt < 2; ++attempt) {
    const uint32_t seq = g->NextSeq();
    const std::string reply = Send(g->EncodeCall(800, kProg, kVers, 2, {}, seq));
    absl::StatusOr<std::string> res = g->OpenReply(Bytes(reply), seq, &h);
    ASSERT_TRUE(res.ok()) << res.status();  // sealed for this attempt's seq
    xdr::Decoder d(Bytes(*res));
    EXPECT_EQ(d.U32(), 1u);
  }
  EXPECT_EQ(counter_.runs, 1u);
  // Another user on the same host with the same xid and arguments runs it.
  auto other = Establish("nosuchuser", GssService::kPrivacy);
  ASSERT_NE(other, nullptr);
  const uint32_t seq = other->NextSeq();
  ASSERT_TRUE(
      other->OpenReply(Bytes(Send(other->EncodeCall(800, kProg, kVers, 2, {}, seq))), seq, &h)
          .ok());
  EXPECT_EQ(counter_.runs, 2u);
}

}  // namespace
}  // namespace nfs3d::rpc::gss
