#include "conf/exports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/build_paths.h"

namespace nfs3d::conf {
namespace {

using Kind = ExportClient::Kind;
using SquashMode = ExportOptions::SquashMode;

constexpr std::string_view kFile = "/etc/nfs3d/exports";

ExportTable ParseOk(std::string_view text) {
  absl::StatusOr<ExportTable> t = ParseExports(text, kFile);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : ExportTable{};
}

void ExpectError(std::string_view text, int line, std::string_view problem) {
  absl::StatusOr<ExportTable> t = ParseExports(text, kFile);
  ASSERT_FALSE(t.ok()) << "accepted:\n" << text;
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  std::string msg(t.status().message());
  std::string prefix = std::string(kFile) + ":" + std::to_string(line) + ": ";
  EXPECT_EQ(msg.substr(0, prefix.size()), prefix) << msg;
  EXPECT_NE(msg.find(problem), std::string::npos)
      << "message '" << msg << "' lacks '" << problem << "'";
}

// A peer address as the transport would hand it over.
struct Peer {
  sockaddr_storage ss{};
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&ss); }
};

Peer V4(const char* text) {
  Peer p;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(700);
  EXPECT_EQ(inet_pton(AF_INET, text, &sin.sin_addr), 1) << text;
  std::memcpy(&p.ss, &sin, sizeof(sin));
  return p;
}

Peer V6(const char* text) {
  Peer p;
  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(700);
  EXPECT_EQ(inet_pton(AF_INET6, text, &sin6.sin6_addr), 1) << text;
  std::memcpy(&p.ss, &sin6, sizeof(sin6));
  return p;
}

Peer Any(const char* text) { return std::strchr(text, ':') != nullptr ? V6(text) : V4(text); }

// True if the single-client export "/x SPEC" admits `addr` (named `name`).
bool Admits(const std::string& spec, const char* addr, std::string_view name = "") {
  ExportTable t = ParseOk("/x " + spec + "\n");
  if (t.exports.size() != 1) return false;
  return t.exports[0].Match(Any(addr).sa(), name) != nullptr;
}

TEST(ExportsTest, EmptyAndComments) {
  ExportTable t = ParseOk("");
  EXPECT_TRUE(t.exports.empty());
  t = ParseOk("# just a comment\n\n   \n\t# indented comment \\\n");
  EXPECT_TRUE(t.exports.empty());
}

TEST(ExportsTest, ShippedExampleParses) {
  std::ifstream in(std::string(nfs3d::test_support::SourceDir()) + "/conf/exports");
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_FALSE(ss.str().empty());
  ExportTable t = ParseOk(ss.str());
  EXPECT_TRUE(t.exports.empty());
  // Its examples, uncommented, are valid too.
  std::string examples;
  std::string line;
  bool in_examples = false;
  std::istringstream lines(ss.str());
  while (std::getline(lines, line)) {
    if (line == "# Examples:") in_examples = true;
    if (in_examples && line.rfind("# ", 0) == 0 && line != "# Examples:") {
      examples += line.substr(2) + "\n";
    }
  }
  t = ParseOk(examples);
  ASSERT_EQ(t.exports.size(), 3u);
  EXPECT_EQ(t.exports[1].path, "/srv/media files");
  EXPECT_EQ(t.exports[2].clients.size(), 2u);
}

TEST(ExportsTest, CephfsOptionNamesTheBackend) {
  ExportTable t = ParseOk("/ceph/a -cephfs=/volumes//a/ 10.0.0.0/8(rw) host(ro)\n/srv/b *(rw)\n");
  ASSERT_EQ(t.exports.size(), 2u);
  EXPECT_EQ(t.exports[0].path, "/ceph/a");
  EXPECT_EQ(t.exports[0].cephfs_path, std::optional<std::string>("/volumes/a"));
  EXPECT_FALSE(t.exports[1].cephfs_path.has_value());  // knfsd lines: local directories
  ExpectError("/x a(rw,cephfs=/v) b(rw)\n", 1, "cephfs= differs");
  ExpectError("/x *(cephfs=relative)\n", 1, "absolute CephFS path");
  ExpectError("/x *(cephfs=/v,mountpoint)\n", 1, "not cephfs=");
}

TEST(ExportsTest, CephfsUserAndKeyringPerExport) {
  ExportTable t = ParseOk(
      "/ceph/a -cephfs=/a,cephfs_user=nfs-a,cephfs_keyring=/etc/ceph/a.keyring 10.0.0.0/8(rw)\n"
      "/ceph/b *(rw,cephfs=/b)\n");
  ASSERT_EQ(t.exports.size(), 2u);
  EXPECT_EQ(t.exports[0].cephfs_user, "nfs-a");
  EXPECT_EQ(t.exports[0].cephfs_keyring, "/etc/ceph/a.keyring");
  EXPECT_EQ(t.exports[1].cephfs_user, "");  // the [ceph] section's
  EXPECT_EQ(t.exports[1].cephfs_keyring, "");
  ExpectError("/x *(cephfs=/v,cephfs_user=client.a)\n", 1, "without 'client.'");
  ExpectError("/x *(cephfs=/v,cephfs_user=)\n", 1, "cephx user id");
  ExpectError("/x *(cephfs=/v,cephfs_keyring=rel)\n", 1, "absolute path");
  ExpectError("/x a(cephfs=/v,cephfs_user=u) b(cephfs=/v)\n", 1, "one export mounts as one user");
  ExpectError("/x *(rw,cephfs_user=u)\n", 1, "need cephfs=");
}

TEST(ExportsTest, Defaults) {
  ExportTable t = ParseOk("/srv host\n");
  ASSERT_EQ(t.exports.size(), 1u);
  const ExportOptions& o = t.exports[0].clients[0].options;
  EXPECT_TRUE(o.read_only);
  EXPECT_EQ(o.squash, SquashMode::kRoot);
  EXPECT_EQ(o.anonuid, 65534u);
  EXPECT_EQ(o.anongid, 65534u);
  EXPECT_TRUE(o.secure);
  EXPECT_TRUE(o.sync);
  EXPECT_FALSE(o.fsid.has_value());
  EXPECT_EQ(o, ExportOptions{});
  EXPECT_TRUE(t.warnings.empty());
}

TEST(ExportsTest, EveryOption) {
  ExportTable t = ParseOk(
      "/a h(rw,no_root_squash,anonuid=1000,anongid=100,insecure,async,"
      "fsid=7,no_subtree_check,subtree_check,wdelay,no_wdelay,sec=sys)\n"
      "/b h(ro,all_squash,secure,sync)\n"
      "/c h(all_squash,no_all_squash)\n"
      "/d h(no_root_squash,all_squash)\n"
      "/e h(rw,ro)\n"
      "/f h(fsid=root)\n"
      "/g h()\n");
  ASSERT_EQ(t.exports.size(), 7u);
  const ExportOptions& a = t.exports[0].clients[0].options;
  EXPECT_FALSE(a.read_only);
  EXPECT_EQ(a.squash, SquashMode::kNone);
  EXPECT_EQ(a.anonuid, 1000u);
  EXPECT_EQ(a.anongid, 100u);
  EXPECT_FALSE(a.secure);
  EXPECT_FALSE(a.sync);
  EXPECT_EQ(a.fsid, 7u);
  EXPECT_EQ(t.exports[0].export_id, 7u);
  const ExportOptions& b = t.exports[1].clients[0].options;
  EXPECT_TRUE(b.read_only);
  EXPECT_EQ(b.squash, SquashMode::kAll);
  EXPECT_TRUE(b.secure);
  EXPECT_TRUE(b.sync);
  EXPECT_EQ(t.exports[2].clients[0].options.squash, SquashMode::kRoot);
  EXPECT_EQ(t.exports[3].clients[0].options.squash, SquashMode::kAll);
  EXPECT_TRUE(t.exports[4].clients[0].options.read_only);  // last one wins
  EXPECT_EQ(t.exports[5].clients[0].options.fsid, 0u);
  EXPECT_EQ(t.exports[5].export_id, 0u);
  EXPECT_EQ(t.exports[6].clients[0].options, ExportOptions{});
}

TEST(ExportsTest, LineDefaultOptions) {
  ExportTable t = ParseOk(
      "/srv -rw,insecure a b(ro) -no_root_squash c d(root_squash)\n"
      "/other e\n");
  ASSERT_EQ(t.exports.size(), 2u);
  const auto& c = t.exports[0].clients;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].spec, "a");
  EXPECT_FALSE(c[0].options.read_only);
  EXPECT_FALSE(c[0].options.secure);
  EXPECT_EQ(c[0].options.squash, SquashMode::kRoot);
  EXPECT_TRUE(c[1].options.read_only);  // own options on top of defaults
  EXPECT_FALSE(c[1].options.secure);
  EXPECT_EQ(c[2].options.squash, SquashMode::kNone);
  EXPECT_FALSE(c[2].options.read_only);
  EXPECT_EQ(c[3].options.squash, SquashMode::kRoot);
  // Defaults do not leak to the next line.
  EXPECT_EQ(t.exports[1].clients[0].options, ExportOptions{});
}

TEST(ExportsTest, PathWithoutClientExportsToEveryoneWithWarning) {
  ExportTable t = ParseOk("\n/pub -rw\n/pub2\n");
  ASSERT_EQ(t.exports.size(), 2u);
  ASSERT_EQ(t.exports[0].clients.size(), 1u);
  EXPECT_EQ(t.exports[0].clients[0].kind, Kind::kAnyone);
  EXPECT_FALSE(t.exports[0].clients[0].options.read_only);
  EXPECT_TRUE(t.exports[1].clients[0].options.read_only);
  ASSERT_EQ(t.warnings.size(), 2u);
  EXPECT_EQ(t.warnings[0].rfind("/etc/nfs3d/exports:2: no client", 0), 0u) << t.warnings[0];
  EXPECT_NE(t.exports[0].Match(V4("192.0.2.1").sa(), ""), nullptr);
}

TEST(ExportsTest, QuotedPathsAndNormalisation) {
  ExportTable t = ParseOk(
      "\"/srv/my files\" *(rw)\n"
      "/srv//data/ host\n"
      "/ host\n"
      "/srv/\"quoted part\"/x host\n");
  ASSERT_EQ(t.exports.size(), 4u);
  EXPECT_EQ(t.exports[0].path, "/srv/my files");
  EXPECT_EQ(t.exports[1].path, "/srv/data");
  EXPECT_EQ(t.exports[2].path, "/");
  EXPECT_EQ(t.exports[3].path, "/srv/quoted part/x");
  EXPECT_EQ(t.FindByPath("/srv/my files"), &t.exports[0]);
  EXPECT_EQ(t.FindByPath("/srv/data/"), &t.exports[1]);
  EXPECT_EQ(t.FindByPath("//srv///data"), &t.exports[1]);
  EXPECT_EQ(t.FindByPath("/"), &t.exports[2]);
  EXPECT_EQ(t.FindByPath("/srv"), nullptr);
  EXPECT_EQ(t.FindByPath("srv/data"), nullptr);
  EXPECT_EQ(t.FindById(t.exports[1].export_id), &t.exports[1]);
}

TEST(ExportsTest, ContinuationLines) {
  ExportTable t = ParseOk(
      "/a host1(rw) \\\n"
      "   host2(ro) \\\n"
      "   host3\n"
      "/b \\\n"
      "  h\n"
      "/c h # trailing comment\n");
  ASSERT_EQ(t.exports.size(), 3u);
  ASSERT_EQ(t.exports[0].clients.size(), 3u);
  EXPECT_EQ(t.exports[0].clients[2].spec, "host3");
  EXPECT_EQ(t.exports[1].clients[0].spec, "h");
  EXPECT_EQ(t.exports[2].clients.size(), 1u);
  // Errors on a continued line name the physical line.
  ExpectError("# c\n/a host1(rw) \\\n  host2(bogus)\n", 3, "unknown export option 'bogus'");
}

TEST(ExportsTest, ExportIds) {
  ExportTable t = ParseOk("/a h\n/b h\n/c h(fsid=5) g\n");
  EXPECT_EQ(t.exports[0].export_id, HashExportPath("/a"));
  EXPECT_NE(t.exports[0].export_id, t.exports[1].export_id);
  EXPECT_EQ(t.exports[2].export_id, 5u);
  // Stable: the same path always hashes the same, and trailing '/' is ignored.
  EXPECT_EQ(ParseOk("/a/ x\n").exports[0].export_id, HashExportPath("/a"));
  // Pinned: ids end up in clients' file handles, so the hash must not change.
  EXPECT_EQ(HashExportPath("/a"), 0x70d2182du);
  ExpectError("/a h(fsid=1) g(fsid=2)\n", 1, "conflicting fsid values 1 and 2");
  ExpectError("/a h(fsid=1)\n/b h(fsid=1)\n", 2, "export id 1 of '/b' collides with '/a' (line 1)");
}

TEST(ExportsTest, Errors) {
  ExpectError("srv h\n", 1, "export path 'srv' must be absolute");
  ExpectError("/a/../b h\n", 1, "must be absolute, without '.' or '..'");
  ExpectError("\n/a h(rw,frobnicate)\n", 2, "unknown export option 'frobnicate'");
  ExpectError("/a -crossmount h\n", 1, "unknown export option 'crossmount'");
  ExpectError("/a h(anonuid=x)\n", 1, "needs a numeric id");
  ExpectError("/a h(anonuid=4294967296)\n", 1, "needs a numeric id");
  ExpectError("/a h(anonuid)\n", 1, "'anonuid' needs a value");
  ExpectError("/a h(rw=1)\n", 1, "'rw' takes no value");
  ExpectError("/a h(sec=lipkey)\n", 1, "unknown security flavor 'lipkey'");
  ExpectError("/a h(sec=)\n", 1, "needs a flavor list");
  ExpectError("/a h(fsid=abc)\n", 1, "bad 'fsid=abc'");
  ExpectError("/a h(fsid=4294967296)\n", 1, "bad 'fsid=4294967296'");
  ExpectError("/a h(mountpoint=relative)\n", 1, "needs an absolute path");
  ExpectError("/a h(xprtsec=tls:ssl)\n", 1, "unknown transport security 'ssl'");
  ExpectError("/a h(xprtsec=)\n", 1, "needs a mode list");
  ExpectError("/a h(reexport=sometimes)\n", 1, "bad 'reexport=sometimes'");
  ExpectError("/a h(rw\n", 1, "unbalanced parentheses in 'h(rw'");
  ExpectError("/a h(rw))\n", 1, "unbalanced parentheses in 'h(rw))'");
  ExpectError("/a h)rw(\n", 1, "unbalanced parentheses");
  ExpectError("/a h(rw)(ro)\n", 1, "malformed client options");
  ExpectError("/a h(rw)x\n", 1, "malformed client options");
  ExpectError("/a h (rw)\n", 1, "not attached to a client");
  ExpectError("\"/a h\n", 1, "unterminated quote");
  ExpectError("/a h\n/b h\n/a/ g\n", 3, "duplicate export '/a' (first on line 1)");
  ExpectError("/a @\n", 1, "empty netgroup name");
  ExpectError("/a gss/krb5i(rw)\n", 1, "old spelling of sec=krb5i");
  ExpectError("/a host[0-9\n", 1, "unclosed '['");
  ExpectError("/a h!st\n", 1, "bad client 'h!st'");
  ExpectError("/a 10.0.0.300\n", 1, "bad client '10.0.0.300'");
  // Bad networks.
  ExpectError("/a 10.0.0.0/33\n", 1, "bad network '10.0.0.0/33'");
  ExpectError("/a 10.0.0.0/\n", 1, "bad network");
  ExpectError("/a 10.0.0.0/x\n", 1, "bad network");
  ExpectError("/a 10.0.0.0/-1\n", 1, "bad network");
  ExpectError("/a 10.0.0/8\n", 1, "'10.0.0' is not an IP address");
  ExpectError("/a 10.0.0.0/255.0.255.0\n", 1, "bad prefix length or netmask");
  ExpectError("/a fd00::/129\n", 1, "bad network");
  ExpectError("/a fd00::/ffff::\n", 1, "bad network");
  ExpectError("/a ::ffff:10.0.0.0/64\n", 1, "prefix of at least 96");
  ExpectError("/a host.example.com/24\n", 1, "not an IP address");
}

TEST(ExportsTest, Anyone) {
  EXPECT_TRUE(Admits("*", "192.0.2.1"));
  EXPECT_TRUE(Admits("*", "2001:db8::1"));
  EXPECT_TRUE(Admits("*", "::ffff:192.0.2.1"));
}

TEST(ExportsTest, SingleAddresses) {
  EXPECT_TRUE(Admits("192.0.2.7", "192.0.2.7"));
  EXPECT_FALSE(Admits("192.0.2.7", "192.0.2.8"));
  // IPv4-mapped IPv6 peers match IPv4 entries.
  EXPECT_TRUE(Admits("192.0.2.7", "::ffff:192.0.2.7"));
  EXPECT_FALSE(Admits("192.0.2.7", "::ffff:192.0.2.8"));
  // ... and an entry written in mapped form matches a plain IPv4 peer.
  EXPECT_TRUE(Admits("::ffff:192.0.2.7", "192.0.2.7"));
  EXPECT_TRUE(Admits("2001:db8::7", "2001:db8::7"));
  EXPECT_TRUE(Admits("2001:DB8:0::7", "2001:db8::7"));
  EXPECT_FALSE(Admits("2001:db8::7", "2001:db8::8"));
  // An IPv4 entry never matches a non-mapped IPv6 peer, nor the reverse.
  EXPECT_FALSE(Admits("192.0.2.7", "::192.0.2.7"));
  EXPECT_FALSE(Admits("::1", "127.0.0.1"));
}

TEST(ExportsTest, Cidr) {
  EXPECT_TRUE(Admits("10.0.0.0/8", "10.255.255.255"));
  EXPECT_TRUE(Admits("10.0.0.0/8", "10.0.0.0"));
  EXPECT_FALSE(Admits("10.0.0.0/8", "11.0.0.0"));
  EXPECT_FALSE(Admits("10.0.0.0/8", "9.255.255.255"));
  EXPECT_TRUE(Admits("10.0.0.0/8", "::ffff:10.1.2.3"));
  // Host bits in the base are ignored, as exportfs does.
  EXPECT_TRUE(Admits("10.1.2.3/8", "10.200.0.1"));
  // /0 matches every IPv4 peer (and no IPv6 one); /32 exactly one.
  EXPECT_TRUE(Admits("0.0.0.0/0", "1.2.3.4"));
  EXPECT_TRUE(Admits("0.0.0.0/0", "255.255.255.255"));
  EXPECT_FALSE(Admits("0.0.0.0/0", "2001:db8::1"));
  EXPECT_TRUE(Admits("192.0.2.7/32", "192.0.2.7"));
  EXPECT_FALSE(Admits("192.0.2.7/32", "192.0.2.6"));
  // Non-octet prefixes.
  EXPECT_TRUE(Admits("192.0.2.128/25", "192.0.2.200"));
  EXPECT_FALSE(Admits("192.0.2.128/25", "192.0.2.127"));
  EXPECT_TRUE(Admits("172.16.0.0/12", "172.31.255.1"));
  EXPECT_FALSE(Admits("172.16.0.0/12", "172.32.0.1"));
  // IPv6.
  EXPECT_TRUE(Admits("fd00::/8", "fdff:1::1"));
  EXPECT_FALSE(Admits("fd00::/8", "fe80::1"));
  EXPECT_TRUE(Admits("2001:db8::/32", "2001:db8:ffff::1"));
  EXPECT_FALSE(Admits("2001:db8::/32", "2001:db9::1"));
  EXPECT_TRUE(Admits("::/0", "2001:db8::1"));
  EXPECT_TRUE(Admits("2001:db8::1/128", "2001:db8::1"));
  EXPECT_FALSE(Admits("2001:db8::1/128", "2001:db8::2"));
  EXPECT_TRUE(Admits("2001:db8::/63", "2001:db8:0:1::5"));
  EXPECT_FALSE(Admits("2001:db8::/63", "2001:db8:0:2::5"));
  // Mapped network form is an IPv4 network.
  EXPECT_TRUE(Admits("::ffff:10.0.0.0/104", "10.9.9.9"));
  EXPECT_FALSE(Admits("::ffff:10.0.0.0/104", "11.9.9.9"));
}

TEST(ExportsTest, NetmaskForm) {
  EXPECT_TRUE(Admits("10.0.0.0/255.0.0.0", "10.2.3.4"));
  EXPECT_FALSE(Admits("10.0.0.0/255.0.0.0", "11.2.3.4"));
  EXPECT_TRUE(Admits("192.168.4.0/255.255.252.0", "192.168.7.255"));
  EXPECT_FALSE(Admits("192.168.4.0/255.255.252.0", "192.168.8.0"));
  EXPECT_TRUE(Admits("0.0.0.0/0.0.0.0", "8.8.8.8"));
  EXPECT_TRUE(Admits("192.0.2.1/255.255.255.255", "192.0.2.1"));
  EXPECT_FALSE(Admits("192.0.2.1/255.255.255.255", "192.0.2.2"));
  ExportTable t = ParseOk("/x 192.168.4.0/255.255.252.0\n");
  EXPECT_EQ(t.exports[0].clients[0].kind, Kind::kNetwork);
  EXPECT_EQ(t.exports[0].clients[0].prefix_len, 22);
}

TEST(ExportsTest, HostNames) {
  EXPECT_TRUE(Admits("client.example.com", "192.0.2.1", "client.example.com"));
  EXPECT_TRUE(Admits("Client.Example.COM", "192.0.2.1", "client.example.com."));
  EXPECT_FALSE(Admits("client.example.com", "192.0.2.1", "other.example.com"));
  EXPECT_FALSE(Admits("client.example.com", "192.0.2.1", ""));
  // No partial matches.
  EXPECT_FALSE(Admits("client", "192.0.2.1", "client.example.com"));
  EXPECT_FALSE(Admits("client.example.com", "192.0.2.1", "client.example.com.evil"));
  ExportTable t = ParseOk("/x client.example.com *\n/y 10.0.0.0/8\n");
  EXPECT_TRUE(t.exports[0].NeedsHostname());
  EXPECT_FALSE(t.exports[1].NeedsHostname());
}

TEST(ExportsTest, WildcardNames) {
  EXPECT_TRUE(Admits("*.example.com", "192.0.2.1", "a.example.com"));
  EXPECT_TRUE(Admits("*.example.com", "192.0.2.1", "a.b.example.com"));
  EXPECT_TRUE(Admits("*.Example.com", "192.0.2.1", "A.EXAMPLE.COM"));
  EXPECT_FALSE(Admits("*.example.com", "192.0.2.1", "example.com"));
  EXPECT_FALSE(Admits("*.example.com", "192.0.2.1", "a.example.org"));
  EXPECT_FALSE(Admits("*.example.com", "192.0.2.1", "a.example.com.evil.org"));
  EXPECT_FALSE(Admits("*.example.com", "192.0.2.1", ""));
  EXPECT_TRUE(Admits("node?.lan", "192.0.2.1", "node7.lan"));
  EXPECT_FALSE(Admits("node?.lan", "192.0.2.1", "node17.lan"));
  EXPECT_TRUE(Admits("node*", "192.0.2.1", "node"));
  EXPECT_TRUE(Admits("*a*b*", "192.0.2.1", "xxaxxbxx"));
  EXPECT_FALSE(Admits("*a*b*", "192.0.2.1", "xxbxxaxx"));
  EXPECT_EQ(ParseOk("/x *.lan\n").exports[0].clients[0].kind, Kind::kWildcard);
}

TEST(ExportsTest, KindsParsed) {
  ExportTable t = ParseOk("/x * h 1.2.3.4 ::1 1.0.0.0/8 *.h\n");
  const auto& c = t.exports[0].clients;
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0].kind, Kind::kAnyone);
  EXPECT_EQ(c[1].kind, Kind::kHost);
  EXPECT_EQ(c[2].kind, Kind::kAddress);
  EXPECT_EQ(c[3].kind, Kind::kAddress);
  EXPECT_EQ(c[3].address.family, AF_INET6);
  EXPECT_EQ(c[4].kind, Kind::kNetwork);
  EXPECT_EQ(c[4].address.ToString(), "1.0.0.0");
  EXPECT_EQ(c[5].kind, Kind::kWildcard);
}

// exports(5): host > network > wildcard > anyone, whatever the order on the
// line; within one kind the first written wins.
TEST(ExportsTest, MatchPriority) {
  ExportTable t = ParseOk(
      "/x *(rw) *.lan(ro,fsid=9) 10.0.0.0/8(ro,insecure) 10.1.0.0/16(rw) "
      "10.1.2.3(ro,all_squash) pc.lan(ro,no_root_squash)\n");
  const Export& e = t.exports[0];
  auto spec = [&](const char* addr, std::string_view name) -> std::string {
    const ExportClient* c = e.Match(Any(addr).sa(), name);
    return c ? c->spec : "(none)";
  };
  EXPECT_EQ(spec("10.1.2.3", "pc.lan"), "10.1.2.3");   // first host-class entry
  EXPECT_EQ(spec("10.1.2.4", "pc.lan"), "pc.lan");     // host by name
  EXPECT_EQ(spec("10.1.2.4", "x.lan"), "10.0.0.0/8");  // network beats wildcard
  EXPECT_EQ(spec("10.2.0.1", ""), "10.0.0.0/8");       // first network wins
  EXPECT_EQ(spec("192.0.2.1", "x.lan"), "*.lan");      // wildcard beats *
  EXPECT_EQ(spec("192.0.2.1", ""), "*");
  EXPECT_EQ(spec("2001:db8::1", "elsewhere.org"), "*");
  // The options that apply come from the chosen entry.
  EXPECT_EQ(e.Match(V4("10.1.2.3").sa(), "")->options.squash, SquashMode::kAll);

  ExportTable none = ParseOk("/x 10.0.0.0/8 *.lan\n");
  EXPECT_EQ(none.exports[0].Match(V4("192.0.2.1").sa(), "pc.wan"), nullptr);
  // Non-IP peers never match.
  sockaddr_storage unix_peer{};
  unix_peer.ss_family = AF_UNIX;
  EXPECT_EQ(t.exports[0].Match(reinterpret_cast<sockaddr*>(&unix_peer), ""), nullptr);
  EXPECT_EQ(t.exports[0].Match(static_cast<const sockaddr*>(nullptr), ""), nullptr);
}

struct SquashCase {
  const char* name;
  ExportOptions::SquashMode mode;
  uint32_t uid, gid;
  std::vector<uint32_t> gids;
  SquashedIdentity want;
};

TEST(ExportsTest, SquashTable) {
  const std::vector<SquashCase> cases = {
      {"root_squash root", SquashMode::kRoot, 0, 0, {0, 10, 0}, {1001, 1002, {1002, 10, 1002}}},
      {"root_squash user", SquashMode::kRoot, 500, 500, {500, 20}, {500, 500, {500, 20}}},
      {"root_squash uid0 other gid", SquashMode::kRoot, 0, 100, {100}, {1001, 100, {100}}},
      {"root_squash gid0 only", SquashMode::kRoot, 500, 0, {}, {500, 1002, {}}},
      {"no_root_squash root", SquashMode::kNone, 0, 0, {0, 1}, {0, 0, {0, 1}}},
      {"no_root_squash user", SquashMode::kNone, 7, 8, {9}, {7, 8, {9}}},
      {"all_squash user", SquashMode::kAll, 500, 500, {500, 20}, {1001, 1002, {}}},
      {"all_squash root", SquashMode::kAll, 0, 0, {0}, {1001, 1002, {}}},
  };
  for (const SquashCase& c : cases) {
    ExportOptions o;
    o.squash = c.mode;
    o.anonuid = 1001;
    o.anongid = 1002;
    EXPECT_EQ(o.Squash(c.uid, c.gid, c.gids), c.want) << c.name;
  }
  // Defaults map to nobody (65534).
  EXPECT_EQ(ExportOptions{}.Squash(0, 0, {0}), (SquashedIdentity{65534, 65534, {65534}}));
}

TEST(ExportsTest, SecurePorts) {
  ExportOptions o;
  EXPECT_TRUE(o.AllowsSourcePort(1023));
  EXPECT_FALSE(o.AllowsSourcePort(1024));
  o.secure = false;
  EXPECT_TRUE(o.AllowsSourcePort(40000));
}

// knfsd's check_xprtsec_policy: each mode admits only its own kind of
// connection (an mTLS connection is not a "tls" one).
TEST(ExportsTest, XprtsecModes) {
  ExportOptions o;  // default: every transport, as knfsd's
  EXPECT_TRUE(o.AllowsTransport(false, false));
  EXPECT_TRUE(o.AllowsTransport(true, false));
  EXPECT_TRUE(o.AllowsTransport(true, true));
  ExportTable t = ParseOk(
      "/t *(xprtsec=tls)\n/m *(xprtsec=mtls)\n/b *(xprtsec=tls:mtls)\n/n *(xprtsec=none)\n");
  const ExportOptions& tls = t.exports[0].clients[0].options;
  EXPECT_FALSE(tls.AllowsTransport(false, false));
  EXPECT_TRUE(tls.AllowsTransport(true, false));
  EXPECT_FALSE(tls.AllowsTransport(true, true));
  const ExportOptions& mtls = t.exports[1].clients[0].options;
  EXPECT_FALSE(mtls.AllowsTransport(true, false));
  EXPECT_TRUE(mtls.AllowsTransport(true, true));
  const ExportOptions& both = t.exports[2].clients[0].options;
  EXPECT_TRUE(both.AllowsTransport(true, false));
  EXPECT_TRUE(both.AllowsTransport(true, true));
  EXPECT_FALSE(both.AllowsTransport(false, false));
  EXPECT_NE(DescribeOptions(both).find(",xprtsec=tls:mtls,"), std::string::npos);
  EXPECT_EQ(DescribeOptions(o).find("xprtsec"), std::string::npos);
  const ExportOptions& none = t.exports[3].clients[0].options;
  EXPECT_TRUE(none.AllowsTransport(false, false));
  EXPECT_FALSE(none.AllowsTransport(true, false));
  EXPECT_NE(DescribeOptions(none).find(",xprtsec=none,"), std::string::npos);
}

TEST(ExportsTest, DescribeExport) {
  ExportTable t = ParseOk("/srv 10.0.0.0/8(rw,no_root_squash,async) *\n");
  std::string d = DescribeExport(t.exports[0]);
  EXPECT_NE(d.find("/srv [id "), std::string::npos) << d;
  EXPECT_NE(d.find(" 10.0.0.0/8(async,wdelay,hide,no_subtree_check,sec=sys,rw,secure,"
                   "no_root_squash,no_all_squash)"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find(" *(sync,wdelay,hide,no_subtree_check,sec=sys,ro,secure,root_squash,"
                   "no_all_squash)"),
            std::string::npos)
      << d;
}

TEST(ExportsTest, IpAddressParsing) {
  EXPECT_EQ(IpAddress::Parse("::ffff:1.2.3.4")->family, AF_INET);
  EXPECT_EQ(IpAddress::Parse("::ffff:1.2.3.4")->ToString(), "1.2.3.4");
  EXPECT_EQ(IpAddress::Parse("fd00::1")->ToString(), "fd00::1");
  EXPECT_FALSE(IpAddress::Parse("").has_value());
  EXPECT_FALSE(IpAddress::Parse("1.2.3").has_value());
  EXPECT_FALSE(IpAddress::Parse("fe80::1%eth0").has_value());
}

TEST(ExportsTest, QuickExport) {
  ExportTable t = MakeQuickExport("/srv/share/");
  ASSERT_EQ(t.exports.size(), 1u);
  const Export& e = t.exports[0];
  EXPECT_EQ(e.path, "/srv/share");
  EXPECT_EQ(e.export_id, HashExportPath("/srv/share"));
  ASSERT_EQ(e.clients.size(), 1u);
  EXPECT_EQ(e.clients[0].kind, Kind::kAnyone);
  EXPECT_FALSE(e.clients[0].options.read_only);
  EXPECT_FALSE(e.clients[0].options.secure);
  EXPECT_EQ(e.clients[0].options.squash, SquashMode::kRoot);
  EXPECT_NE(e.Match(V6("2001:db8::1").sa(), ""), nullptr);
  // Relative directories are made absolute.
  ExportTable rel = MakeQuickExport("some/dir/../dir2");
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  std::string want = std::string(cwd) == "/" ? "/some/dir2" : std::string(cwd) + "/some/dir2";
  EXPECT_EQ(rel.exports[0].path, want);
}

const ExportOptions& OptionsOf(const ExportTable& t, std::string_view path, size_t client = 0) {
  const Export* e = t.FindByPath(path);
  EXPECT_NE(e, nullptr) << path;
  static const ExportOptions kNone;
  if (e == nullptr || client >= e->clients.size()) return kNone;
  return e->clients[client].options;
}

bool HasWarning(const ExportTable& t, std::string_view text) {
  for (const std::string& w : t.warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

// Real-world knfsd lines (tests/conf/data/knfsd_exports): all parse, and
// each option means what exports(5) says or is reported as having no effect.
TEST(ExportsTest, RealWorldKnfsdLines) {
  std::ifstream in(std::string(nfs3d::test_support::SourceDir()) +
                   "/tests/conf/data/knfsd_exports");
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_FALSE(ss.str().empty());
  ExportTable t = ParseOk(ss.str());
  EXPECT_EQ(t.exports.size(), 25u);

  // The man page's examples.
  EXPECT_EQ(OptionsOf(t, "/", 1).squash, SquashMode::kNone);
  const Export* usr = t.FindByPath("/usr");
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ(usr->clients[1].kind, Kind::kNetgroup);
  EXPECT_EQ(usr->clients[1].name, "trusted");
  EXPECT_EQ(OptionsOf(t, "/home/joe").anonuid, 150u);
  EXPECT_EQ(OptionsOf(t, "/home/joe").squash, SquashMode::kAll);
  EXPECT_FALSE(OptionsOf(t, "/srv/www", 1).read_only);  // -sync,rw default
  EXPECT_TRUE(OptionsOf(t, "/srv/www", 2).read_only);
  const Export* build = t.FindByPath("/build");
  ASSERT_NE(build, nullptr);
  EXPECT_NE(build->Match(V4("192.0.2.9").sa(), "buildhost7.local.domain"), nullptr);
  EXPECT_EQ(build->Match(V4("192.0.2.9").sa(), "buildhostx.local.domain"), nullptr);

  // Submounts and mount points.
  EXPECT_TRUE(OptionsOf(t, "/export").crossmnt);
  EXPECT_EQ(t.FindByPath("/export")->export_id, 0u);
  EXPECT_TRUE(OptionsOf(t, "/export/users").nohide);
  EXPECT_EQ(OptionsOf(t, "/mnt/disk1").mountpoint, "");
  EXPECT_EQ(OptionsOf(t, "/mnt/disk1").fsid_uuid, "3b6a4f1e8c2d4e7a9f100a1b2c3d4e5f");
  EXPECT_EQ(t.FindByPath("/mnt/disk1")->export_id,
            HashExportPath("uuid:3b6a4f1e8c2d4e7a9f100a1b2c3d4e5f"));
  EXPECT_EQ(OptionsOf(t, "/media/usb").mountpoint, "/media/usb");

  // Security flavors in the line's order; per-flavor options after a
  // second list only narrow the one set (ro wins).
  EXPECT_EQ(OptionsOf(t, "/data").sec, (std::vector<std::string>{"krb5p", "krb5i", "krb5", "sys"}));
  EXPECT_TRUE(OptionsOf(t, "/mixed").read_only);
  EXPECT_EQ(OptionsOf(t, "/mixed").squash, SquashMode::kRoot);
  EXPECT_FALSE(OptionsOf(t, "/home").acl);
  EXPECT_EQ(OptionsOf(t, "/home").squash, SquashMode::kNone);

  // Locking, write gathering, READDIRPLUS.
  const ExportOptions& locks = OptionsOf(t, "/vol/locks");
  EXPECT_FALSE(locks.auth_nlm);
  EXPECT_FALSE(locks.wdelay);
  EXPECT_FALSE(locks.readdirplus);
  const ExportOptions& legacy = OptionsOf(t, "/vol/legacy");
  EXPECT_FALSE(legacy.auth_nlm);
  EXPECT_TRUE(legacy.subtree_check);
  EXPECT_TRUE(legacy.acl);
  EXPECT_FALSE(legacy.nohide);
  EXPECT_FALSE(legacy.crossmnt);

  // NFSv4-only and legacy options: accepted, logged.
  EXPECT_TRUE(HasWarning(t, "/pnfs *: accepted, no effect on NFSv3: pnfs"));
  EXPECT_TRUE(HasWarning(t, "security_label"));
  EXPECT_TRUE(HasWarning(t, "/ref *: accepted, no effect on NFSv3: refer=/export@server2+server3"));
  EXPECT_TRUE(HasWarning(t, "replicas=/a@s1:/b@s2"));
  EXPECT_TRUE(HasWarning(t, "squash_uids="));
  EXPECT_EQ(OptionsOf(t, "/tls").xprtsec, ExportOptions::kXprtsecAll);
  EXPECT_EQ(OptionsOf(t, "/legacy").fsid, 0x1fu);
  EXPECT_EQ(OptionsOf(t, "/legacy").anonuid, 4294967294u);  // (uid_t)-2
  EXPECT_EQ(OptionsOf(t, "/k8s").anonuid, 0u);

  // Every export describes itself with every option spelled out.
  EXPECT_EQ(DescribeOptions(OptionsOf(t, "/export")),
            "async,wdelay,hide,crossmnt,no_subtree_check,fsid=0,sec=sys,rw,insecure,"
            "root_squash,no_all_squash");
  EXPECT_EQ(DescribeOptions(OptionsOf(t, "/vol/locks")),
            "sync,no_wdelay,hide,no_subtree_check,insecure_locks,nordirplus,sec=sys,rw,secure,"
            "root_squash,no_all_squash");
}

TEST(ExportsTest, FlavorSpecificOptionsFollowSec) {
  // After a second sec= list, per-flavor options only narrow: /a's krb5p
  // "ro" makes the client read-only, its no_root_squash is noted, not used.
  ExportTable t = ParseOk(
      "/a h(sec=sys,rw,sec=krb5p,ro,no_root_squash)\n"
      "/b -sec=krb5:sys,rw h\n"
      "/c h(rw,sec=none)\n");
  EXPECT_TRUE(OptionsOf(t, "/a").read_only);
  EXPECT_EQ(OptionsOf(t, "/a").squash, SquashMode::kRoot);
  EXPECT_TRUE(HasWarning(t, "no_root_squash after a second sec= list"));
  EXPECT_EQ(ParseOk("/e h(sec=krb5p)\n").exports[0].clients[0].options.sec,
            (std::vector<std::string>{"krb5p"}));
  EXPECT_FALSE(OptionsOf(t, "/b").read_only);
  EXPECT_EQ(OptionsOf(t, "/c").sec, (std::vector<std::string>{"none"}));
  EXPECT_FALSE(OptionsOf(t, "/c").read_only);
  EXPECT_EQ(ParseOk("/d h(sec=unix:null)\n").exports[0].clients[0].options.sec,
            (std::vector<std::string>{"sys", "none"}));
}

TEST(ExportsTest, Netgroups) {
  ExportTable t = ParseOk("/a @nosuchgroup(rw) *(ro)\n");
  const Export& e = t.exports[0];
  EXPECT_TRUE(e.NeedsHostname());
  // No such group: the '*' entry applies, after the netgroup in priority.
  const ExportClient* c = e.Match(V4("192.0.2.1").sa(), "host.example");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->kind, Kind::kAnyone);
}

TEST(ExportsTest, LoadFromFile) {
  char dir_template[] = "/tmp/nfs3d_exports_testXXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  std::string path = dir + "/exports";
  {
    std::ofstream out(path);
    out << "/srv 127.0.0.1(rw)\n/bad h(nope)\n";
  }
  absl::StatusOr<ExportTable> t = LoadExports(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), path + ":2: unknown export option 'nope'");
  {
    std::ofstream out(path);
    out << "/srv 127.0.0.1(rw)\n";
  }
  t = LoadExports(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NE(t->exports[0].Match(V4("127.0.0.1").sa(), ""), nullptr);
  EXPECT_EQ(LoadExports(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace nfs3d::conf
