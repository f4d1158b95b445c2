// The open connections' TLS state on its way from nfs3d to a terminal: the
// GET /connections text (both directions, and what a hostile line becomes),
// nfs3stat's TLS column and connection table, and nfs3top's 't' view.
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "stats/connections_text.h"
#include "tools/nfs3stat/connections.h"
#include "tools/nfs3stat/origins.h"
#include "tools/nfs3top/screen.h"

namespace nfs3d::nfs3stat {
namespace {

using stats::ConnectionRow;

std::vector<ConnectionRow> Rows() {
  return {{"192.0.2.7", 812, "mtls", "TLS1.3", "AES-256-GCM", "kernel", "CN=host7,O=Example"},
          {"192.0.2.7", 700, "tls", "TLS1.3", "CHACHA20-POLY1305", "user", ""},
          {"2001:db8::1", 1001, "none", "", "", "", ""},
          {"192.0.2.9", 900, "none", "", "", "", ""}};
}

// Printable ASCII but for the line and field separators.
bool AllPrintable(const std::string& text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c != '\n' && c != '\t' && (u < 0x20 || u >= 0x7f)) return false;
  }
  return true;
}

TEST(ConnectionsTextTest, RoundTrip) {
  const std::string text = stats::FormatConnections(Rows());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "192.0.2.7\t812\tmtls\tTLS1.3\tAES-256-GCM\tkernel\tCN=host7,O=Example");
  EXPECT_NE(text.find("\n2001:db8::1\t1001\tnone\t-\t-\t-\t-\n"), std::string::npos) << text;
  const std::vector<ConnectionRow> back = stats::ParseConnections(text);
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0].subject, "CN=host7,O=Example");
  EXPECT_EQ(back[1].port, 700);
  EXPECT_EQ(back[1].subject, "");
  EXPECT_EQ(back[2].client, "2001:db8::1");
  EXPECT_EQ(back[2].version, "");
}

TEST(ConnectionsTextTest, HostileTextStaysOneLineOfPrintableFields) {
  ConnectionRow evil{"192.0.2.1",
                     1,
                     "mtls",
                     "TLS1.3",
                     "AES-128-GCM",
                     "user",
                     "CN=a\tb\nc\x1b[2J\x9b" + std::string(5000, 'x')};
  const std::string text = stats::FormatConnections({evil});
  EXPECT_EQ(text.find('\n'), text.size() - 1) << text;
  EXPECT_TRUE(AllPrintable(text));
  EXPECT_LE(text.size(), 100 + stats::kConnectionFieldLimit);
  const std::vector<ConnectionRow> back = stats::ParseConnections(text);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].subject.substr(0, 12), "CN=a?b?c?[2J");
  // What a hostile page may hold: wrong field counts and ports are
  // skipped, control characters become '?'.
  const std::vector<ConnectionRow> parsed = stats::ParseConnections(
      "1.2.3.4\t1\tnone\n"                               // too few fields
      "1.2.3.4\t99999\tnone\t-\t-\t-\t-\n"               // no such port
      "1.2.3.4\tx\tnone\t-\t-\t-\t-\n"                   // not a port
      "1.2.3.4\t2\tmtls\tv\tc\tuser\tCN=\x1b]0;t\x07\n"  // kept, made printable
      "a\tb\tc\td\te\tf\tg\th\n");                       // too many
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].subject, "CN=?]0;t?");
}

TEST(ConnectionsViewTest, SummaryPerClientAndTable) {
  const std::map<std::string, std::string> s = SecurityByClient(Rows());
  EXPECT_EQ(s.at("192.0.2.7"), "tls+mtls");
  EXPECT_EQ(s.at("192.0.2.9"), "none");
  EXPECT_EQ(s.count("192.0.2.8"), 0u);

  const std::string table = FormatConnectionTable(Rows(), 10);
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "CONNECTION            SECURITY VERSION CIPHER            RECORDS SUBJECT");
  EXPECT_NE(table.find("\n192.0.2.7:700         tls      TLS1.3  CHACHA20-POLY1305 user    -\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("\n192.0.2.7:812         mtls     TLS1.3  AES-256-GCM       kernel  "
                       "CN=host7,O=Example\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("\n[2001:db8::1]:1001    none     -"), std::string::npos) << table;
  // Sorted by client and port; cut at the limit.
  EXPECT_LT(table.find("192.0.2.7:700"), table.find("192.0.2.7:812"));
  const std::string two = FormatConnectionTable(Rows(), 2);
  EXPECT_NE(two.find("... 2 more\n"), std::string::npos) << two;
  // A long subject is cut to the line.
  std::vector<ConnectionRow> long_subject = {Rows()[0]};
  long_subject[0].subject = "CN=" + std::string(500, 'y');
  const std::string cut = FormatConnectionTable(long_subject, 10, 100);
  for (size_t start = 0, end; (end = cut.find('\n', start)) != std::string::npos; start = end + 1) {
    EXPECT_LE(end - start, 100u) << cut;
  }
  EXPECT_NE(cut.find("yyy...\n"), std::string::npos) << cut;
  EXPECT_NE(FormatConnectionTable({}, 10).find("(no TCP connection)"), std::string::npos);
}

TEST(ConnectionsViewTest, ClientTableGetsATlsColumn) {
  std::vector<OriginView> rows = {{"192.0.2.7", 10}, {"192.0.2.8", 5}};
  const std::map<std::string, std::string> s = SecurityByClient(Rows());
  const std::string table = FormatOrigins(rows, "client", 0, 10, &s);
  EXPECT_NE(table.find(" P99 TLS\n"), std::string::npos) << table;
  EXPECT_NE(table.find(" tls+mtls\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\n192.0.2.8 "), std::string::npos) << table;
  EXPECT_NE(table.find(" -\n"), std::string::npos) << table;  // no open connection
  EXPECT_EQ(FormatOrigins(rows, "client", 0, 10).find("TLS"), std::string::npos);
}

TEST(ConnectionsViewTest, Nfs3topShowsConnectionsOnT) {
  nfs3top::Sample sample;
  sample.clients = {{"192.0.2.7", 10}};
  sample.connections_known = true;
  sample.connections = Rows();
  nfs3top::Frame frame;
  frame.rows = 30;
  frame.columns = 100;
  std::string screen = nfs3top::Render(sample, frame);
  EXPECT_NE(screen.find(" TLS\n"), std::string::npos) << screen;
  EXPECT_NE(screen.find(" tls+mtls\n"), std::string::npos) << screen;
  EXPECT_NE(screen.find("\nEXPORT "), std::string::npos) << screen;
  EXPECT_EQ(screen.find("\nCONNECTION "), std::string::npos) << screen;
  frame.show_connections = true;
  screen = nfs3top::Render(sample, frame);
  EXPECT_NE(screen.find("\nCONNECTION "), std::string::npos) << screen;
  EXPECT_NE(screen.find("CN=host7,O=Example"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("\nEXPORT "), std::string::npos) << screen;
  sample.connections_known = false;  // the TCP endpoint
  screen = nfs3top::Render(sample, frame);
  EXPECT_NE(screen.find("only on the control socket"), std::string::npos) << screen;
  EXPECT_EQ(screen.find(" TLS\n"), std::string::npos) << screen;
}

}  // namespace
}  // namespace nfs3d::nfs3stat
