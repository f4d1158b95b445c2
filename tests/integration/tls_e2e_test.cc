// RPC-with-TLS (RFC 9289) against the nfs3d binary with an in-process GnuTLS
// client: the AUTH_TLS probe, the TLS 1.3 handshake (ALPN "sunrpc"), calls
// inside TLS, the exports' xprtsec= policy as knfsd applies it, mutual TLS
// with and without a client certificate, and clients that misbehave between
// probe and handshake. Certificates are made for each run
// (tls_make_certs.sh).
#include <gnutls/gnutls.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"
#include "tests/integration/tls_client.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace nfs3d::e2e {
namespace {

constexpr uint32_t kAcces = 13;  // NFS3ERR_ACCES

class TlsE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test_support::TempDir("nfs3d-tls-e2e");
    const fs::path d = dir_->path();
    certs_ = d / "certs";
    const std::string make =
        absl::StrCat(test_support::SourceDir(), "/tests/integration/tls_make_certs.sh '",
                     certs_.string(), "' >/dev/null 2>&1");
    ASSERT_EQ(std::system(make.c_str()), 0) << make;
    for (const char* e : {"tls", "mtls", "both", "plain", "any"}) {
      fs::create_directories(d / e);
      std::ofstream(d / e / "f") << "data";
    }
    const std::string opts = "rw,insecure,no_root_squash";
    const std::string exports =
        absl::StrCat(d.string(), "/tls *(", opts, ",xprtsec=tls)\n",        //
                     d.string(), "/mtls *(", opts, ",xprtsec=mtls)\n",      //
                     d.string(), "/both *(", opts, ",xprtsec=tls:mtls)\n",  //
                     d.string(), "/plain *(", opts, ",xprtsec=none)\n",     //
                     d.string(), "/any *(", opts, ")\n");
    server_ = new NfsdProcess();
    server_->Configure(d / "server", exports, TlsSection(""));
    ASSERT_TRUE(server_->Start()) << server_->Log();
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) server_->Stop();
    delete server_;
    server_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  static std::string TlsSection(const std::string& extra) {
    return absl::StrCat("\n[tls]\ncertificate = ", (certs_ / "server.pem").string(),
                        "\nkey = ", (certs_ / "server.key").string(),
                        "\nca = ", (certs_ / "ca.pem").string(), "\n", extra);
  }
  static std::string Ca() { return (certs_ / "ca.pem").string(); }
  static Identity Client() {
    return {(certs_ / "client.pem").string(), (certs_ / "client.key").string()};
  }
  static Identity Rogue() {
    return {(certs_ / "rogue.pem").string(), (certs_ / "rogue.key").string()};
  }

  // The root handle of an export, from MNT in clear text (as Linux sends it).
  static std::string Handle(const std::string& name) {
    std::unique_ptr<RawClient> c = RawClient::Open(server_->mount_port());
    if (c == nullptr) return "";
    return Mount(*c, (fs::path(dir_->path()) / name).string());
  }
  // GETATTR's status over TLS; 0xffffffff when no reply came.
  static uint32_t GetattrStatus(TlsClient& c, const std::string& fh) {
    std::optional<client::RpcReply> r =
        c.Call(nfs3::kProgram, nfs3::kGetattr, Args().Opaque(fh).str());
    return ToNfsReply(r).ok ? ToNfsReply(r).status : 0xffffffffu;
  }
  static uint32_t PlainGetattrStatus(const std::string& fh) {
    std::unique_ptr<RawClient> c = RawClient::Open(server_->port());
    if (c == nullptr) return 0xffffffffu;
    NfsReply r = Nfs(*c, nfs3::kGetattr, Args().Opaque(fh).str());
    return r.ok ? r.status : 0xffffffffu;
  }
  // A TLS session on a new connection, with or without a certificate.
  static std::unique_ptr<TlsClient> Connect(const Identity& id = {}) {
    auto c = std::make_unique<TlsClient>(server_->port());
    EXPECT_EQ(c->Probe(), StartTlsReply(0x7150));
    EXPECT_EQ(c->Handshake(Ca(), id), "");
    return c;
  }

  static test_support::TempDir* dir_;
  static fs::path certs_;
  static NfsdProcess* server_;
};
test_support::TempDir* TlsE2eTest::dir_ = nullptr;
fs::path TlsE2eTest::certs_;
NfsdProcess* TlsE2eTest::server_ = nullptr;

TEST_F(TlsE2eTest, ProbeHandshakeAndCallsInsideTls) {
  std::unique_ptr<TlsClient> c = Connect();
  EXPECT_EQ(c->Protocol(), "TLS1.3");
  EXPECT_EQ(c->Alpn(), "sunrpc");
  std::optional<client::RpcReply> null = c->Call(nfs3::kProgram, nfs3::kNull, "");
  ASSERT_TRUE(null.has_value());
  EXPECT_EQ(null->reply_stat, 0u);
  EXPECT_EQ(null->accept_stat, 0u);
  const std::string fh = Handle("tls");
  ASSERT_FALSE(fh.empty());
  EXPECT_EQ(GetattrStatus(*c, fh), 0u);
  // Many calls on the one session (records in user space here unless the
  // kernel has kTLS).
  for (int i = 0; i < 50; ++i) ASSERT_EQ(GetattrStatus(*c, fh), 0u) << i;
  // Without kTLS the records are encrypted in user space, and the log says
  // so once.
  const std::string log = server_->Log();
  if (!KernelHasTls()) {
    EXPECT_NE(log.find("kTLS unavailable: TCP_ULP tls"), std::string::npos) << log;
    EXPECT_EQ(log.find("kTLS unavailable"), log.rfind("kTLS unavailable")) << log;
  }
}

// knfsd's check_xprtsec_policy: a plaintext call on a tls-only export is
// NFS3ERR_ACCES (NFSv3), and so is a TLS call on a none-only export.
TEST_F(TlsE2eTest, PolicyRefusesTheWrongTransport) {
  const std::string tls = Handle("tls"), plain = Handle("plain"), any = Handle("any");
  ASSERT_FALSE(tls.empty());
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(PlainGetattrStatus(tls), kAcces);
  EXPECT_EQ(PlainGetattrStatus(plain), 0u);
  EXPECT_EQ(PlainGetattrStatus(any), 0u);
  std::unique_ptr<TlsClient> c = Connect();
  EXPECT_EQ(GetattrStatus(*c, plain), kAcces);
  EXPECT_EQ(GetattrStatus(*c, any), 0u);
}

TEST_F(TlsE2eTest, MutualTlsWithAndWithoutClientCertificate) {
  const std::string mtls = Handle("mtls"), tls = Handle("tls"), both = Handle("both");
  ASSERT_FALSE(mtls.empty());
  std::unique_ptr<TlsClient> with = Connect(Client());
  EXPECT_EQ(GetattrStatus(*with, mtls), 0u);
  EXPECT_EQ(GetattrStatus(*with, both), 0u);
  EXPECT_EQ(GetattrStatus(*with, tls), kAcces);  // as knfsd: tls admits no mTLS session
  std::unique_ptr<TlsClient> without = Connect();
  EXPECT_EQ(GetattrStatus(*without, mtls), kAcces);
  EXPECT_EQ(GetattrStatus(*without, both), 0u);
  EXPECT_EQ(PlainGetattrStatus(mtls), kAcces);
}

TEST_F(TlsE2eTest, CertificateFromAnotherCaEndsTheSession) {
  TlsClient c(server_->port());
  ASSERT_EQ(c.Probe(), StartTlsReply(0x7150));
  c.Handshake(Ca(), Rogue());  // TLS 1.3: the client may finish before the verdict
  EXPECT_FALSE(c.Call(nfs3::kProgram, nfs3::kNull, "").has_value());
  EXPECT_TRUE(server_->WaitForLog("client certificate refused")) << server_->Log();
}

// RFC 9289 §4.1 and knfsd's svcauth_tls_accept: AUTH_TLS on a procedure
// other than NULL is AUTH_BADCRED; over UDP (no TLS there) the probe gets an
// accepted NULL reply with an empty verifier; a second probe inside TLS is
// AUTH_BADCRED.
TEST_F(TlsE2eTest, ProbesTheServerCannotHonour) {
  ClientOptions udp;
  udp.transport = rpc::Transport::kUdp;
  std::unique_ptr<RawClient> u = RawClient::Open(server_->port(), udp);
  ASSERT_NE(u, nullptr);
  ASSERT_TRUE(u->SendMessage(ProbeMessage(0x51)));
  std::optional<std::string> r = u->Receive(absl::Seconds(10));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, Args().U32(0x51).U32(1).U32(0).U32(kAuthNone).U32(0).U32(0).str());

  std::unique_ptr<RawClient> t = RawClient::Open(server_->port());
  ASSERT_NE(t, nullptr);
  std::string getattr = ProbeMessage(0x52);
  getattr[23] = static_cast<char>(nfs3::kGetattr);  // proc
  ASSERT_TRUE(t->SendMessage(getattr));
  r = t->Receive(absl::Seconds(10));
  ASSERT_TRUE(r.has_value());
  // MSG_DENIED, AUTH_ERROR, AUTH_BADCRED.
  EXPECT_EQ(*r, Args().U32(0x52).U32(1).U32(1).U32(1).U32(1).str());

  std::unique_ptr<TlsClient> c = Connect();
  EXPECT_EQ(c->Exchange(ProbeMessage(0x53)), Args().U32(0x53).U32(1).U32(1).U32(1).U32(1).str());
  EXPECT_TRUE(c->Call(nfs3::kProgram, nfs3::kNull, "").has_value());  // the session goes on
}

TEST_F(TlsE2eTest, GarbageAfterTheProbeClosesTheConnection) {
  TlsClient c(server_->port());
  ASSERT_EQ(c.Probe(), StartTlsReply(0x7150));
  // A plaintext RPC record where a ClientHello belongs.
  ASSERT_TRUE(c.raw()->SendMessage(CallMessage(9, nfs3::kProgram, nfs3::kNull, "")));
  EXPECT_TRUE(c.raw()->WaitClosed(absl::Seconds(30)));
  EXPECT_TRUE(server_->Answers(rpc::Transport::kTcp));
}

// A server of its own: one request slot in all and a short handshake
// deadline. Clients that probe and then send nothing hold no slot (a plain
// call still runs beside them) and are closed after the deadline.
TEST_F(TlsE2eTest, StalledHandshakesHoldNoSlotAndAreClosed) {
  NfsdProcess server;
  server.Configure(fs::path(dir_->path()) / "stall", "",
                   "max_requests = 1\n" + TlsSection("handshake_timeout = 1\n"));
  // Configure puts `extra` in [nfsd]: max_requests is there, [tls] follows.
  ASSERT_TRUE(server.Start()) << server.Log();
  std::vector<std::unique_ptr<TlsClient>> stalled;
  for (int i = 0; i < 4; ++i) {
    stalled.push_back(std::make_unique<TlsClient>(server.port()));
    ASSERT_EQ(stalled.back()->Probe(), StartTlsReply(0x7150));
  }
  EXPECT_TRUE(server.Answers(rpc::Transport::kTcp));
  for (auto& c : stalled) EXPECT_TRUE(c->raw()->WaitClosed(absl::Seconds(60)));
  EXPECT_TRUE(server.Stop());
}

// A certificate file in PEM, as DER.
std::string DerOf(const fs::path& pem) {
  std::ifstream in(pem);
  std::stringstream text;
  text << in.rdbuf();
  const std::string t = text.str();
  gnutls_datum_t from{reinterpret_cast<unsigned char*>(const_cast<char*>(t.data())),
                      static_cast<unsigned int>(t.size())};
  gnutls_datum_t der{};
  if (gnutls_pem_base64_decode2("CERTIFICATE", &from, &der) < 0) return "";
  std::string out(reinterpret_cast<char*>(der.data), der.size);
  gnutls_free(der.data);
  return out;
}

// SIGHUP reads [tls] again: a renewed certificate (same file names) is what
// new handshakes get; a session made before goes on.
TEST_F(TlsE2eTest, ReloadPutsARenewedCertificateInForce) {
  NfsdProcess server;
  const fs::path d = fs::path(dir_->path()) / "reload";
  fs::create_directories(d / "export");
  for (const char* f : {"server.pem", "server.key"}) {
    fs::copy_file(certs_ / f, d / f, fs::copy_options::overwrite_existing);
  }
  server.Configure(d / "server", absl::StrCat(d.string(), "/export *(rw,insecure)\n"),
                   absl::StrCat("\n[tls]\ncertificate = ", (d / "server.pem").string(),
                                "\nkey = ", (d / "server.key").string(), "\n"));
  ASSERT_TRUE(server.Start()) << server.Log();
  auto before = std::make_unique<TlsClient>(server.port());
  ASSERT_EQ(before->Probe(), StartTlsReply(0x7150));
  ASSERT_EQ(before->Handshake(Ca()), "");
  EXPECT_EQ(before->PeerCertificate(), DerOf(certs_ / "server.pem"));
  // The renewal: the files are replaced, then nfs3d is told.
  fs::copy_file(certs_ / "server2.pem", d / "server.pem", fs::copy_options::overwrite_existing);
  fs::copy_file(certs_ / "server2.key", d / "server.key", fs::copy_options::overwrite_existing);
  const size_t log_from = server.Log().size();
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  ASSERT_TRUE(server.WaitForLog("loaded for new sessions", log_from)) << server.Log();
  auto after = std::make_unique<TlsClient>(server.port());
  ASSERT_EQ(after->Probe(), StartTlsReply(0x7150));
  ASSERT_EQ(after->Handshake(Ca()), "");
  EXPECT_EQ(after->PeerCertificate(), DerOf(certs_ / "server2.pem"));
  EXPECT_NE(DerOf(certs_ / "server.pem"), DerOf(certs_ / "server2.pem"));
  // The session made before the reload is still served.
  EXPECT_TRUE(before->Call(nfs3::kProgram, nfs3::kNull, "").has_value());
  EXPECT_TRUE(after->Call(nfs3::kProgram, nfs3::kNull, "").has_value());
  EXPECT_TRUE(server.Stop());
}

// nfs3d --takeover under a TLS session with WRITEs pipelined. Where the
// kernel keeps the records (kTLS) the connection crosses: the same session
// is answered by the successor, which names it in its log. Where a relay in
// the process keeps them (this host without the tls module) the session
// ends cleanly: every call read is answered, then close_notify and EOF; the
// client reconnects, makes a new session with the successor and sends again
// what went unanswered. No data is lost either way.
void TakeOverUnderTls(NfsdProcess& server, const fs::path& d, const std::string& ca) {
  std::string fh;
  {
    std::unique_ptr<RawClient> plain = RawClient::Open(server.mount_port());
    ASSERT_NE(plain, nullptr);
    fh = Mount(*plain, (d / "export").string());
    ASSERT_FALSE(fh.empty());
  }
  auto c = std::make_unique<TlsClient>(server.port());
  ASSERT_EQ(c->Probe(), StartTlsReply(0x7150));
  ASSERT_EQ(c->Handshake(ca), "");
  const NfsReply looked = ToNfsReply(c->Call(nfs3::kProgram, nfs3::kLookup, DirOp(fh, "file")));
  ASSERT_EQ(looked.status, 0u);
  xdr::Decoder decoder(Span(looked.results));
  decoder.U32();
  const std::string file = Str(decoder.Opaque(64));
  // 16 FILE_SYNC WRITEs of 4 KiB, each its own byte, sent before any reply
  // is read; then the handover.
  constexpr int kWrites = 16;
  constexpr size_t kChunk = 4096;
  auto write_args = [&](int i) {
    return Args()
        .Opaque(file)
        .U64(i * kChunk)
        .U32(kChunk)
        .U32(2)
        .Opaque(std::string(kChunk, static_cast<char>('a' + i)))
        .str();
  };
  std::map<uint32_t, int> unanswered;  // xid -> chunk
  for (int i = 0; i < kWrites; ++i) {
    const uint32_t xid = c->Send(nfs3::kProgram, nfs3::kWrite, write_args(i));
    ASSERT_NE(xid, 0u);
    unanswered[xid] = i;
  }
  const size_t log_from = server.Log().size();
  ASSERT_TRUE(server.TakeOver()) << server.Log();
  while (!unanswered.empty()) {
    std::optional<client::RpcReply> r = c->Receive();
    if (!r) break;
    EXPECT_EQ(ToNfsReply(r).status, 0u);
    unanswered.erase(r->xid);
  }
  if (KernelHasTls()) {
    EXPECT_TRUE(unanswered.empty());
    EXPECT_TRUE(c->Call(nfs3::kProgram, nfs3::kNull, "").has_value());
    EXPECT_TRUE(server.WaitForLog("took over the TLS connection", log_from)) << server.Log();
  } else {
    // The predecessor answered what it read before it ended the session.
    EXPECT_FALSE(c->Receive().has_value());
    EXPECT_TRUE(c->closed_cleanly());
    c = std::make_unique<TlsClient>(server.port());
    ASSERT_EQ(c->Probe(), StartTlsReply(0x7150));
    ASSERT_EQ(c->Handshake(ca), "");
    for (const auto& [xid, i] : unanswered) {
      const NfsReply r = ToNfsReply(c->Call(nfs3::kProgram, nfs3::kWrite, write_args(i)));
      EXPECT_EQ(r.status, 0u) << i;
    }
    EXPECT_EQ(server.Log().find("took over the TLS connection", log_from), std::string::npos);
  }
  std::ifstream in(d / "export" / "file", std::ios::binary);
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(content.size(), kWrites * kChunk);
  for (int i = 0; i < kWrites; ++i) {
    EXPECT_EQ(content.substr(i * kChunk, kChunk), std::string(kChunk, static_cast<char>('a' + i)))
        << i;
  }
}

TEST_F(TlsE2eTest, TakeoverCarriesKernelSessionsAndEndsRelayedOnesCleanly) {
  NfsdProcess server;
  const fs::path d = fs::path(dir_->path()) / "takeover";
  fs::create_directories(d / "export");
  std::ofstream(d / "export" / "file").flush();
  server.Configure(d / "server",
                   absl::StrCat(d.string(), "/export *(rw,insecure,no_root_squash,xprtsec=tls)\n"),
                   TlsSection(""));
  ASSERT_TRUE(server.Start()) << server.Log();
  TakeOverUnderTls(server, d, Ca());
  EXPECT_TRUE(server.Stop()) << server.Log();
}

// --check-exports (and the start) refuse an export that admits only TLS
// when [tls] cannot give it.
TEST_F(TlsE2eTest, CheckExportsWantsTlsConfiguration) {
  NfsdProcess bare;
  const fs::path d = fs::path(dir_->path()) / "bare";
  bare.Configure(d, absl::StrCat(dir_->path(), "/tls *(xprtsec=tls)\n"));
  std::string out;
  EXPECT_EQ(bare.Command("exports", {"check"}, &out), 1) << out;
  EXPECT_NE(out.find("admits only TLS and [tls] sets no certificate"), std::string::npos) << out;
  NfsdProcess no_ca;
  no_ca.Configure(fs::path(dir_->path()) / "no-ca",
                  absl::StrCat(dir_->path(), "/mtls *(xprtsec=mtls)\n"),
                  absl::StrCat("\n[tls]\ncertificate = ", (certs_ / "server.pem").string(),
                               "\nkey = ", (certs_ / "server.key").string(), "\n"));
  EXPECT_EQ(no_ca.Command("exports", {"check"}, &out), 1) << out;
  EXPECT_NE(out.find("needs a [tls] ca"), std::string::npos) << out;
  EXPECT_EQ(server_->Command("exports", {"check"}, &out), 0) << out;
}

}  // namespace
}  // namespace nfs3d::e2e
