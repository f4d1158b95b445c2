// RPC-with-TLS against hostile hosts (docs/tls.md "Hostile clients"), on the
// nfs3d binary: many connections that probe and then stall their handshake,
// or send half a ClientHello, hold no request slot and cannot keep a real
// client out: the connection table is bounded (max_connections) and a
// handshaking connection counts as idle, so a new client takes its place;
// each stalled one is closed at the handshake deadline.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"
#include "tests/integration/tls_client.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace nfs3d::e2e {
namespace {

constexpr int kMaxConnections = 8;
constexpr int kFlood = 40;

TEST(TlsHandshakeFloodTest, StalledHandshakesCannotKeepAClientOut) {
  test_support::TempDir dir("nfs3d-tls-flood");
  const fs::path d = dir.path();
  const fs::path certs = d / "certs";
  const std::string make =
      absl::StrCat(test_support::SourceDir(), "/tests/integration/tls_make_certs.sh '",
                   certs.string(), "' >/dev/null 2>&1");
  ASSERT_EQ(std::system(make.c_str()), 0);
  fs::create_directories(d / "export");
  NfsdProcess server;
  server.Configure(
      d / "server", absl::StrCat(d.string(), "/export *(rw,insecure,xprtsec=tls)\n"),
      absl::StrCat("max_connections = ", kMaxConnections, "\nmax_requests = 2\n", "\n[tls]\n",
                   "certificate = ", (certs / "server.pem").string(),
                   "\nkey = ", (certs / "server.key").string(), "\nhandshake_timeout = 20\n"));
  ASSERT_TRUE(server.Start()) << server.Log();

  // Half of them stop after the probe, half in the middle of a ClientHello
  // (a record header promising more than is sent).
  std::vector<std::unique_ptr<TlsClient>> flood;
  for (int i = 0; i < kFlood; ++i) {
    auto c = std::make_unique<TlsClient>(server.port());
    ASSERT_NE(c->raw(), nullptr);
    if (c->Probe() != StartTlsReply(0x7150)) continue;  // closed to make room: fine
    if (i % 2 == 1) c->raw()->SendBytes(std::string("\x16\x03\x01\x02\x00\x01\x00", 7));
    flood.push_back(std::move(c));
  }
  // A real client still gets in, finishes its handshake and is served.
  TlsClient good(server.port());
  ASSERT_EQ(good.Probe(), StartTlsReply(0x7150));
  ASSERT_EQ(good.Handshake((certs / "ca.pem").string()), "");
  std::optional<client::RpcReply> r = good.Call(nfs3::kProgram, nfs3::kNull, "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->accept_stat, 0u);
  // The table stayed bounded: all but max_connections of the flood were
  // closed (the rest at their deadline).
  int closed = 0;
  for (auto& c : flood) closed += c->raw()->WaitClosed(absl::Seconds(60)) ? 1 : 0;
  EXPECT_EQ(closed, static_cast<int>(flood.size()));
  EXPECT_TRUE(server.Answers(rpc::Transport::kTcp));
  EXPECT_TRUE(server.Stop());
}

}  // namespace
}  // namespace nfs3d::e2e
