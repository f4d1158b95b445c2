// Issue 48, finding 3: anyone who can send a datagram to nfs3d may start
// RPCSEC_GSS context creation. A flood of INIT calls with empty or garbage
// tokens, or with tokens of a mechanism other than Kerberos (SPNEGO), must
// not push the established Kerberos contexts of real clients out of the
// table, nor leave state behind that lives longer than seconds.
//
// In one process, as tests/rpc/gss/gss_server_test.cc: a Dispatcher with a
// GssServer, fed the calls as the UDP transport would (HandleCall with a UDP
// TransportInfo naming the sender), and real tickets from the test KDC
// (ctest fixture krb5, NFS3D_KRB5_DIR).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "client/gss_initiator.h"
#include "rpc/dispatcher.h"
#include "rpc/gss/gss_server.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "rpc/program.h"
#include "stats/server_stats.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc::gss {
namespace {

constexpr uint32_t kProg = 0x20000078;
constexpr uint32_t kVers = 1;
constexpr int kFlood = 10'000;

ProcResult Null(void*, const CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return ProcResult::kSuccess;
}
const Procedure kProcs[] = {{0, "NULL", Null}};

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A SPNEGO NegTokenInit (RFC 4178) offering Kerberos, without a mechanism
// token: a SPNEGO acceptor answers it with a round of negotiation and keeps
// a context for the next.
std::string SpnegoNegTokenInit() {
  const uint8_t token[] = {
      0x60, 0x1b, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02,         // SPNEGO OID
      0xa0, 0x11, 0x30, 0x0f, 0xa0, 0x0d, 0x30, 0x0b,                     // negTokenInit, mechTypes
      0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02};  // krb5 OID
  return std::string(reinterpret_cast<const char*>(token), sizeof(token));
}

// What the server answered to a context creation call.
struct InitAnswer {
  bool accepted = false;  // MSG_ACCEPTED, SUCCESS, with an rpc_gss_init_res
  uint32_t auth_stat = 0;
  uint32_t major = 0;
  std::string handle;
};

class GssInitFloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("NFS3D_KRB5_DIR");
    if (dir == nullptr) GTEST_SKIP() << "no test KDC (NFS3D_KRB5_DIR unset)";
    dir_ = dir;
    setenv("KRB5_CONFIG", (dir_ + "/krb5.conf").c_str(), 1);
    setenv("KRB5RCACHENAME", "none:", 1);
    transport_.transport = Transport::kUdp;
    SetPeer("192.0.2.10");
  }

  void MakeServer(GssServerOptions options) {
    options.keytab = dir_ + "/nfs.keytab";
    options.principal = "nfs/localhost";
    options.now = [this] { return now_; };
    absl::StatusOr<std::unique_ptr<GssServer>> gss = GssServer::Create(options);
    ASSERT_TRUE(gss.ok()) << gss.status();
    dispatcher_.reset();
    gss_ = std::move(*gss);
    program_ = SingleVersionProgram(kProg, "gss-flood", kVers, kProcs, nullptr);
    dispatcher_ =
        std::make_unique<Dispatcher>(DispatcherOptions{.stats = &stats_, .wrapping = gss_.get()});
    dispatcher_->AddProgram(&program_);
  }

  void SetPeer(const std::string& ip) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&transport_.peer);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(40000);
    inet_pton(AF_INET, ip.c_str(), &sin->sin_addr);
    transport_.peer_len = sizeof(sockaddr_in);
  }

  std::string Send(const std::string& message) {
    xdr::BufferChain reply;
    if (!dispatcher_->HandleCall(Bytes(message), transport_, &reply)) return "";
    return reply.Flatten();
  }

  // INIT (handle empty) or CONTINUE_INIT with this token.
  InitAnswer Init(const std::string& token, const std::string& handle = "") {
    xdr::BufferChain cred_chain;
    xdr::Encoder ce(&cred_chain);
    xdr::Encode(ce, GssCred{.proc = handle.empty() ? GssProc::kInit : GssProc::kContinueInit,
                            .handle = Bytes(handle)});
    const std::string cred = cred_chain.Flatten();
    xdr::BufferChain chain;
    xdr::Encoder e(&chain);
    xdr::Encode(
        e,
        CallHeader{.xid = ++xid_, .prog = kProg, .vers = kVers, .cred = {kRpcsecGss, Bytes(cred)}});
    xdr::Encode(e, GssInitArg{.token = Bytes(token)});
    const std::string reply = Send(chain.Flatten());
    InitAnswer answer;
    ReplyHeader h;
    xdr::Decoder d(Bytes(reply));
    if (!xdr::Decode(d, &h)) return answer;
    answer.auth_stat = h.auth_stat;
    GssInitRes res;
    if (h.reply_stat != 0 || h.accept_stat != 0 || !xdr::Decode(d, &res)) return answer;
    answer.accepted = true;
    answer.major = res.major;
    answer.handle.assign(reinterpret_cast<const char*>(res.handle.data()), res.handle.size());
    return answer;
  }

  std::unique_ptr<client::GssInitiator> Establish(const std::string& principal) {
    client::GssInitiatorOptions o{.principal = principal,
                                  .client_keytab = dir_ + "/client.keytab",
                                  .service = GssService::kIntegrity};
    auto g = client::GssInitiator::Establish(
        o, kProg, kVers, xid_,
        [this](const std::string& m) -> absl::StatusOr<std::string> { return Send(m); });
    xid_ += 10;
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }

  // A NULL call on the context: true when answered and its verifier checks.
  bool Works(client::GssInitiator& g) {
    const uint32_t seq = g.NextSeq();
    const std::string reply = Send(g.EncodeCall(++xid_, kProg, kVers, 0, {}, seq));
    if (reply.empty()) return false;
    ReplyHeader h;
    return g.OpenReply(Bytes(reply), seq, &h).ok() && h.reply_stat == 0 && h.accept_stat == 0;
  }

  std::string dir_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  TransportInfo transport_{};
  Program program_;
  stats::ServerStats stats_;
  std::unique_ptr<GssServer> gss_;
  std::unique_ptr<Dispatcher> dispatcher_;
  uint32_t xid_ = 5000;
};

// The default configuration: 10,000 INITs with an empty token and 10,000
// with random bytes, from as many spoofed UDP sources; each is refused with
// a GSS error and no handle, none takes a place in the table, and the
// established contexts all go on.
TEST_F(GssInitFloodTest, EmptyAndGarbageTokenFloodLeavesEstablishedContextsWorking) {
  MakeServer({});
  std::vector<std::unique_ptr<client::GssInitiator>> clients;
  for (const char* principal : {"daemon", "nosuchuser", "host/localhost"}) {
    clients.push_back(Establish(principal));
    ASSERT_NE(clients.back(), nullptr);
  }
  std::mt19937 rng(48);
  int handles = 0, not_errors = 0;
  for (int i = 0; i < 2 * kFlood; ++i) {
    SetPeer("10.48." + std::to_string((i >> 8) & 0xff) + "." + std::to_string(i & 0xff));
    std::string token;
    if (i >= kFlood) {
      token.resize(16 + rng() % 200);
      for (char& c : token) c = static_cast<char>(rng());
      if (i % 2 == 0) token[0] = 0x60;  // looks like an InitialContextToken
    }
    InitAnswer a = Init(token);
    ASSERT_TRUE(a.accepted) << i;
    handles += a.handle.empty() ? 0 : 1;
    not_errors += GSS_ERROR(a.major) ? 0 : 1;
  }
  const size_t left = gss_->contexts();
  int working = 0;
  for (auto& g : clients) working += Works(*g) ? 1 : 0;
  std::printf(
      "after %d INITs: %d handles given, %d non-errors; %zu contexts in the table, "
      "%d of %zu established contexts still work\n",
      2 * kFlood, handles, not_errors, left, working, clients.size());
  EXPECT_EQ(handles, 0);
  EXPECT_EQ(not_errors, 0);
  EXPECT_EQ(left, clients.size());
  EXPECT_EQ(working, static_cast<int>(clients.size()));
}

// Only Kerberos by default: a SPNEGO token is refused at the first round.
TEST_F(GssInitFloodTest, SpnegoIsRefusedByDefault) {
  MakeServer({});
  InitAnswer a = Init(SpnegoNegTokenInit());
  ASSERT_TRUE(a.accepted);
  EXPECT_TRUE(GSS_ERROR(a.major)) << a.major;
  EXPECT_TRUE(a.handle.empty());
  EXPECT_EQ(gss_->contexts(), 0u);
}

// With SPNEGO let in on purpose, its rounds leave half-open contexts: a
// flood of them from one address and from many stays within the bounds,
// never pushes out an established context even with a table that holds only
// those, and what it left is gone seconds later.
TEST_F(GssInitFloodTest, HalfOpenContextsAreBoundedAndExpire) {
  GssServerOptions o;
  o.krb5_only = false;
  o.max_contexts = 3;  // the established ones fill it
  MakeServer(o);
  std::vector<std::unique_ptr<client::GssInitiator>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(Establish("daemon"));
    ASSERT_NE(clients.back(), nullptr);
  }
  const std::string spnego = SpnegoNegTokenInit();
  // One address: at most max_half_open_per_address of its own.
  std::string last_handle;
  for (int i = 0; i < kFlood; ++i) {
    InitAnswer a = Init(spnego);
    ASSERT_TRUE(a.accepted);
    if (!a.handle.empty()) last_handle = a.handle;
  }
  ASSERT_FALSE(last_handle.empty()) << "SPNEGO gave no second round; nothing to bound";
  const size_t one_address = gss_->half_open_contexts();
  // Many addresses: at most max_half_open in all.
  for (int i = 0; i < kFlood; ++i) {
    SetPeer("10.49." + std::to_string((i >> 8) & 0xff) + "." + std::to_string(i & 0xff));
    ASSERT_TRUE(Init(spnego).accepted);
  }
  const size_t many = gss_->half_open_contexts();
  int working = 0;
  for (auto& g : clients) working += Works(*g) ? 1 : 0;
  std::printf(
      "half-open after %d INITs from one address: %zu; after %d more from %d addresses: "
      "%zu; %d of %zu established contexts work\n",
      kFlood, one_address, kFlood, kFlood, many, working, clients.size());
  EXPECT_LE(one_address, o.max_half_open_per_address);
  EXPECT_LE(many, o.max_half_open);
  EXPECT_EQ(working, static_cast<int>(clients.size()));

  // A half-open context is there for its next round (a bad token: a GSS
  // error, not an unknown handle)...
  SetPeer("10.49.39.15");  // the last sender
  InitAnswer fresh = Init(spnego);
  ASSERT_FALSE(fresh.handle.empty());
  now_ += o.half_open_lifetime / 2;
  InitAnswer next = Init("not a token", fresh.handle);
  EXPECT_TRUE(next.accepted);
  // ...and past its lifetime it is gone: CONTINUE_INIT names an unknown one.
  InitAnswer late = Init(spnego);
  ASSERT_FALSE(late.handle.empty());
  now_ += o.half_open_lifetime + absl::Seconds(1);
  InitAnswer expired = Init("not a token", late.handle);
  EXPECT_FALSE(expired.accepted);
  EXPECT_EQ(expired.auth_stat, kAuthStatCredProblem);
  // A new INIT sweeps what expired.
  ASSERT_FALSE(Init(spnego).handle.empty());
  EXPECT_EQ(gss_->half_open_contexts(), 1u);
  for (auto& g : clients) EXPECT_TRUE(Works(*g));
}

}  // namespace
}  // namespace nfs3d::rpc::gss
