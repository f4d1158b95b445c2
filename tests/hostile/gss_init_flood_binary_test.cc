// Issue 48, finding 3, against the nfs3d binary over real UDP: a client
// holds an established krb5 context while 10,000 INITs with empty tokens
// and 10,000 with garbage tokens arrive from 64 other loopback addresses.
// None is given a handle; the client's context still works after. Needs
// the test KDC (ctest fixture krb5, NFS3D_KRB5_DIR).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "client/gss_initiator.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "rpc/rpc_message.h"
#include "tests/integration/e2e_harness.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::e2e {
namespace {

using rpc::gss::GssService;
constexpr int kFlood = 10'000;
constexpr int kSenders = 64;

class GssInitFloodBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* kdc = std::getenv("NFS3D_KRB5_DIR");
    if (kdc == nullptr) GTEST_SKIP() << "no test KDC (NFS3D_KRB5_DIR unset)";
    kdc_ = kdc;
    setenv("KRB5_CONFIG", (kdc_ + "/krb5.conf").c_str(), 1);  // nfs3d inherits it
    setenv("KRB5RCACHENAME", "none:", 1);
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-hostile-gss-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "krb");
    nfsd_.Configure(
        dir_, absl::StrCat((dir_ / "krb").string(), " 127.0.0.1(rw,insecure,sec=krb5:krb5i)\n"),
        absl::StrCat("\n[kerberos]\nkeytab = ", kdc_, "/nfs.keytab\nprincipal = nfs/localhost\n"));
    ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
  }
  void TearDown() override {
    if (kdc_.empty()) return;
    EXPECT_TRUE(nfsd_.Alive());
    nfsd_.Stop();
    fs::remove_all(dir_);
  }

  // The reply with this xid on c, or "" after `wait`.
  static std::string Await(RawClient& c, uint32_t xid, absl::Duration wait) {
    const absl::Time deadline = absl::Now() + wait;
    while (absl::Now() < deadline) {
      std::optional<std::string> m = c.Receive(deadline - absl::Now());
      if (!m) break;
      if (m->size() >= 4 && xdr::Decoder(test_support::Span(*m)).U32() == xid) return *m;
    }
    return "";
  }

  std::unique_ptr<client::GssInitiator> Establish(RawClient& c) {
    client::GssInitiatorOptions o{.principal = "daemon",
                                  .client_keytab = kdc_ + "/client.keytab",
                                  .service = GssService::kIntegrity};
    auto g = client::GssInitiator::Establish(
        o, nfs3::kProgram, 3, 100, [&c](const std::string& m) -> absl::StatusOr<std::string> {
          const uint32_t xid = xdr::Decoder(test_support::Span(m)).U32();
          if (!c.SendMessage(m)) return absl::UnavailableError("send failed");
          std::string reply = Await(c, xid, absl::Seconds(5));
          if (reply.empty()) return absl::DeadlineExceededError("no reply");
          return reply;
        });
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }

  // An NFS NULL under g: true when answered with SUCCESS and a good verifier.
  static bool NullWorks(RawClient& c, client::GssInitiator& g, uint32_t xid) {
    const uint32_t seq = g.NextSeq();
    if (!c.SendMessage(g.EncodeCall(xid, nfs3::kProgram, 3, 0, {}, seq))) return false;
    const std::string reply = Await(c, xid, absl::Seconds(5));
    rpc::ReplyHeader h;
    return !reply.empty() && g.OpenReply(test_support::Span(reply), seq, &h).ok() &&
           h.reply_stat == 0 && h.accept_stat == 0;
  }

  static std::string InitCall(uint32_t xid, const std::string& token) {
    xdr::BufferChain cred_chain;
    xdr::Encoder ce(&cred_chain);
    xdr::Encode(ce, rpc::gss::GssCred{.proc = rpc::gss::GssProc::kInit});
    const std::string cred = cred_chain.Flatten();
    xdr::BufferChain chain;
    xdr::Encoder e(&chain);
    xdr::Encode(e, rpc::CallHeader{.xid = xid,
                                   .prog = nfs3::kProgram,
                                   .vers = 3,
                                   .cred = {kRpcsecGss, test_support::Span(cred)}});
    xdr::Encode(e, rpc::gss::GssInitArg{.token = test_support::Span(token)});
    return chain.Flatten();
  }

  std::string kdc_;
  fs::path dir_;
  NfsdProcess nfsd_;
};

TEST_F(GssInitFloodBinaryTest, EstablishedContextSurvivesAnInitFlood) {
  auto owner = RawClient::Open(nfsd_.port(), {.transport = rpc::Transport::kUdp});
  ASSERT_NE(owner, nullptr);
  auto g = Establish(*owner);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(NullWorks(*owner, *g, 1000));

  std::vector<std::unique_ptr<RawClient>> senders;
  for (int i = 0; i < kSenders; ++i) {
    senders.push_back(RawClient::Open(
        nfsd_.port(),
        {.transport = rpc::Transport::kUdp, .local_ip = absl::StrCat("127.48.0.", i + 2)}));
    ASSERT_NE(senders.back(), nullptr);
  }
  std::mt19937 rng(48);
  int answered = 0, handles = 0;
  for (int i = 0; i < 2 * kFlood; ++i) {
    std::string token;
    if (i >= kFlood) {
      token.resize(16 + rng() % 200);
      for (char& ch : token) ch = static_cast<char>(rng());
    }
    RawClient& c = *senders[i % kSenders];
    const uint32_t xid = 0x48000000u + i;
    ASSERT_TRUE(c.SendMessage(InitCall(xid, token)));
    const std::string reply = Await(c, xid, absl::Seconds(5));
    if (reply.empty()) continue;  // UDP: a lost datagram is no failure here
    ++answered;
    xdr::Decoder d(test_support::Span(reply));
    rpc::ReplyHeader h;
    rpc::gss::GssInitRes res;
    if (xdr::Decode(d, &h) && h.reply_stat == 0 && h.accept_stat == 0 && xdr::Decode(d, &res) &&
        !res.handle.empty()) {
      ++handles;
    }
  }
  const bool works = NullWorks(*owner, *g, 2000);
  std::printf(
      "%d INITs over UDP from %d addresses: %d answered, %d with a handle; the "
      "established context %s\n",
      2 * kFlood, kSenders, answered, handles, works ? "works" : "was lost");
  EXPECT_EQ(handles, 0);
  EXPECT_TRUE(works);
}

}  // namespace
}  // namespace nfs3d::e2e
