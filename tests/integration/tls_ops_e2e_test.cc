// The operations side of RPC-with-TLS against the binary: the expiry
// warnings of the [tls] certificates in the log and their dates in
// /metrics, and each connection's TLS state (plain, TLS, mutual TLS with
// the client certificate's subject) in `nfs3stat --clients`, on the control
// socket's GET /connections and in nfs3d_tls_connections. The test
// certificates (tls_make_certs.sh) are valid for two days, so the server's
// and the CA's are both within the 30-day warning.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "stats/metrics_server.h"
#include "stats/prom_text.h"
#include "tests/integration/e2e_harness.h"
#include "tests/integration/tls_client.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certificate.h"

namespace nfs3d::e2e {
namespace {

class TlsOpsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path d = dir_.path();
    certs_ = d / "certs";
    const std::string make =
        absl::StrCat(test_support::SourceDir(), "/tests/integration/tls_make_certs.sh '",
                     certs_.string(), "' >/dev/null 2>&1");
    ASSERT_EQ(std::system(make.c_str()), 0) << make;
    // A client certificate of the CA whose subject holds an escape sequence
    // and a newline: it must reach no terminal, log line or page as such.
    const std::string evil = absl::StrCat(
        "cd '", certs_.string(), "' && printf 'extendedKeyUsage=clientAuth\\n' >evil.ext && ",
        "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout evil.key ",
        "-out evil.csr -subj \"/CN=evil$(printf '\\033[2J\\nforged')\" >/dev/null 2>&1 && ",
        "openssl x509 -req -in evil.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 ",
        "-out evil.pem -extfile evil.ext >/dev/null 2>&1");
    ASSERT_EQ(std::system(evil.c_str()), 0) << evil;
    fs::create_directories(d / "export");
    server_.Configure(d / "server", absl::StrCat(d.string(), "/export *(rw,insecure)\n"),
                      absl::StrCat("\n[tls]\ncertificate = ", (certs_ / "server.pem").string(),
                                   "\nkey = ", (certs_ / "server.key").string(),
                                   "\nca = ", (certs_ / "ca.pem").string(), "\n"));
    ASSERT_TRUE(server_.Start()) << server_.Log();
  }
  void TearDown() override { server_.Stop(); }

  std::string Ca() const { return (certs_ / "ca.pem").string(); }
  Identity Named(const std::string& name) const {
    return {(certs_ / (name + ".pem")).string(), (certs_ / (name + ".key")).string()};
  }
  // A TLS session whose handshake the server finished (a call came back).
  std::unique_ptr<TlsClient> Connect(const Identity& id = {}) {
    auto c = std::make_unique<TlsClient>(server_.port());
    EXPECT_EQ(c->Probe(), StartTlsReply(0x7150));
    EXPECT_EQ(c->Handshake(Ca(), id), "");
    EXPECT_TRUE(c->Call(nfs3::kProgram, nfs3::kNull, "").has_value());
    return c;
  }
  std::string Control() const {
    return stats::ControlSocketTarget((server_.dir() / "state").string());
  }
  std::string Nfs3stat(const std::string& args) const {
    const std::string cmd = absl::StrCat(test_support::Nfs3statBinary(), " --state-dir '",
                                         (server_.dir() / "state").string(), "' ", args, " 2>&1");
    std::FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return "";
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    pclose(p);
    return out;
  }
  std::vector<stats::Sample> Metrics() const {
    absl::StatusOr<std::string> page = stats::HttpGet(Control(), "/metrics");
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return {};
    absl::StatusOr<std::vector<stats::Sample>> samples = stats::ParsePrometheusText(*page);
    EXPECT_TRUE(samples.ok()) << samples.status();
    return samples.ok() ? *samples : std::vector<stats::Sample>{};
  }

  test_support::TempDir dir_{"nfs3d-tls-ops-e2e"};
  fs::path certs_;
  NfsdProcess server_;
};

double Value(const std::vector<stats::Sample>& samples, const std::string& name,
             const std::map<std::string, std::string>& labels) {
  for (const stats::Sample& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) match = match && s.Label(k) == v;
    if (match) return s.value;
  }
  return -1;
}

TEST_F(TlsOpsE2eTest, CertificatesAboutToExpireAreLoggedAndExported) {
  ASSERT_TRUE(server_.WaitForLog("tls: server certificate CN=localhost (")) << server_.Log();
  const std::string log = server_.Log();
  EXPECT_NE(log.find(absl::StrCat("(", (certs_ / "server.pem").string(), ") expires on ")),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("in 1 day"), std::string::npos) << log;
  EXPECT_NE(log.find("tls: ca certificate CN=nfs3d-test-ca ("), std::string::npos) << log;
  const std::vector<stats::Sample> m = Metrics();
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  const double server_end =
      Value(m, "nfs3d_tls_certificate_not_after_seconds", {{"certificate", "server"}});
  EXPECT_GT(server_end, now + 86400);
  EXPECT_LE(server_end, now + 2 * 86400 + 60);
  EXPECT_GT(Value(m, "nfs3d_tls_certificate_not_after_seconds", {{"certificate", "ca"}}), now);
  const double start =
      Value(m, "nfs3d_tls_certificate_not_before_seconds", {{"certificate", "server"}});
  EXPECT_GT(start, 0);
  EXPECT_LE(start, now + 60);
  // A reload checks again (same files, same warnings).
  const size_t from = server_.Log().size();
  ASSERT_EQ(kill(server_.pid(), SIGHUP), 0);
  EXPECT_TRUE(server_.WaitForLog("tls: server certificate CN=localhost (", from)) << server_.Log();
}

// A server certificate that has expired and a CA not valid yet (made
// in-process with those dates): nfs3d still starts (a renewal is a reload
// away) and says so as errors; the dates are in /metrics for the alerts.
TEST_F(TlsOpsE2eTest, ExpiredOrNotYetValidCertificatesAreErrors) {
  const absl::Time now = absl::Now();
  const test_support::TestCertificate expired = test_support::MakeTestCertificate(
      absl::ToTimeT(now - absl::Hours(24 * 90)), absl::ToTimeT(now - absl::Hours(24)), "old");
  const test_support::TestCertificate early =
      test_support::MakeTestCertificate(absl::ToTimeT(now + absl::Hours(24 * 3)),
                                        absl::ToTimeT(now + absl::Hours(24 * 900)), "future-ca");
  ASSERT_FALSE(expired.certificate_pem.empty());
  const fs::path d = fs::path(dir_.path()) / "dates";
  fs::create_directories(d / "export");
  std::ofstream(d / "old.pem") << expired.certificate_pem;
  std::ofstream(d / "old.key") << expired.key_pem;
  std::ofstream(d / "future-ca.pem") << early.certificate_pem;
  NfsdProcess server;
  server.Configure(d / "server", absl::StrCat(d.string(), "/export *(rw,insecure)\n"),
                   absl::StrCat("\n[tls]\ncertificate = ", (d / "old.pem").string(),
                                "\nkey = ", (d / "old.key").string(),
                                "\nca = ", (d / "future-ca.pem").string(), "\n"));
  ASSERT_TRUE(server.Start()) << server.Log();
  ASSERT_TRUE(server.WaitForLog("is not valid before")) << server.Log();
  const std::string log = server.Log();
  EXPECT_NE(log.find(absl::StrCat("ERROR: tls: server certificate CN=old (",
                                  (d / "old.pem").string(), ") expired on ")),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(": TLS clients refuse it"), std::string::npos) << log;
  EXPECT_NE(log.find("ERROR: tls: ca certificate CN=future-ca ("), std::string::npos) << log;
  EXPECT_NE(log.find("client certificates it issued do not verify (mtls)"), std::string::npos)
      << log;
  absl::StatusOr<std::string> page =
      stats::HttpGet(stats::ControlSocketTarget((server.dir() / "state").string()), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  absl::StatusOr<std::vector<stats::Sample>> m = stats::ParsePrometheusText(*page);
  ASSERT_TRUE(m.ok()) << m.status();
  const double t = absl::ToDoubleSeconds(now - absl::UnixEpoch());
  EXPECT_LT(Value(*m, "nfs3d_tls_certificate_not_after_seconds", {{"certificate", "server"}}), t);
  EXPECT_GT(Value(*m, "nfs3d_tls_certificate_not_before_seconds", {{"certificate", "ca"}}), t);
  EXPECT_TRUE(server.Stop());
}

TEST_F(TlsOpsE2eTest, ClientsShowTheirConnectionsTlsState) {
  ClientOptions plain_from;
  plain_from.local_ip = "127.0.0.2";
  std::unique_ptr<RawClient> plain = RawClient::Open(server_.port(), plain_from);
  ASSERT_NE(plain, nullptr);
  ASSERT_TRUE(plain->Call(nfs3::kProgram, 3, nfs3::kNull, "").has_value());
  std::unique_ptr<TlsClient> tls = Connect();
  std::unique_ptr<TlsClient> mtls = Connect(Named("client"));
  std::unique_ptr<TlsClient> evil = Connect(Named("evil"));
  const std::string protocol = tls->Protocol();
  EXPECT_EQ(protocol, "TLS1.3");

  // GET /connections: one line per connection, the subject escaped.
  absl::StatusOr<std::string> table = stats::HttpGet(Control(), "/connections");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_NE(table->find("127.0.0.2\t"), std::string::npos) << *table;
  EXPECT_NE(table->find("\tnone\t-\t-\t-\t-\n"), std::string::npos) << *table;
  EXPECT_NE(table->find("\ttls\tTLS1.3\t"), std::string::npos) << *table;
  EXPECT_NE(table->find("\tmtls\tTLS1.3\t"), std::string::npos) << *table;
  EXPECT_NE(table->find("\tCN=nfs-client\n"), std::string::npos) << *table;
  EXPECT_EQ(table->find('\x1b'), std::string::npos) << *table;
  EXPECT_NE(table->find("CN=evil\\x1b[2J\\nforged\n"), std::string::npos) << *table;

  const std::string out = Nfs3stat("--clients");
  std::printf("%s", out.c_str());  // what an admin sees, in the test's output
  EXPECT_NE(out.find("TLS\n"), std::string::npos) << out;
  EXPECT_NE(out.find("tls+mtls\n"), std::string::npos) << out;  // 127.0.0.1
  EXPECT_NE(out.find("none\n"), std::string::npos) << out;      // 127.0.0.2
  EXPECT_NE(out.find("CONNECTION"), std::string::npos) << out;
  EXPECT_NE(out.find("mtls     TLS1.3"), std::string::npos) << out;
  EXPECT_NE(out.find("CN=nfs-client"), std::string::npos) << out;
  EXPECT_NE(out.find("CN=evil\\x1b[2J\\nforged"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;

  // Counted by mode, version and cipher; no client, no subject.
  const std::vector<stats::Sample> m = Metrics();
  double tls_count = 0, mtls_count = 0;
  for (const stats::Sample& s : m) {
    if (s.name != "nfs3d_tls_connections") continue;
    EXPECT_EQ(s.Label("version"), "TLS1.3");
    EXPECT_FALSE(s.Label("cipher").empty());
    EXPECT_TRUE(s.Label("records") == "kernel" || s.Label("records") == "user");
    EXPECT_EQ(s.labels.size(), 4u);
    (s.Label("security") == "mtls" ? mtls_count : tls_count) += s.value;
  }
  EXPECT_EQ(tls_count, 1);
  EXPECT_EQ(mtls_count, 2);

  // Closed connections leave the table.
  mtls.reset();
  evil.reset();
  for (int i = 0; i < 300; ++i) {
    table = stats::HttpGet(Control(), "/connections");
    if (table.ok() && table->find("\tmtls\t") == std::string::npos) break;
    usleep(100000);
  }
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->find("\tmtls\t"), std::string::npos) << *table;
  EXPECT_NE(table->find("\ttls\t"), std::string::npos) << *table;
}

}  // namespace
}  // namespace nfs3d::e2e
