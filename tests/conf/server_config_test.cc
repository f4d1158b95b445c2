#include "conf/server_config.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/build_paths.h"

namespace nfs3d::conf {
namespace {

constexpr std::string_view kFile = "/etc/nfs3d/nfs3d.conf";

ServerConfig ParseOk(std::string_view text) {
  absl::StatusOr<ServerConfig> c = ParseServerConfig(text, kFile);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : ServerConfig{};
}

// Expects an InvalidArgument error whose message is exactly "FILE:LINE: ..."
// and contains `problem`.
void ExpectError(std::string_view text, int line, std::string_view problem) {
  absl::StatusOr<ServerConfig> c = ParseServerConfig(text, kFile);
  ASSERT_FALSE(c.ok()) << "accepted:\n" << text;
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  std::string msg(c.status().message());
  std::string prefix = std::string(kFile) + ":" + std::to_string(line) + ": ";
  EXPECT_EQ(msg.substr(0, prefix.size()), prefix) << msg;
  EXPECT_NE(msg.find(problem), std::string::npos)
      << "message '" << msg << "' lacks '" << problem << "'";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ServerConfigTest, Defaults) {
  ServerConfig c = DefaultServerConfig();
  EXPECT_EQ(c.listen, (std::vector<std::string>{"0.0.0.0", "::"}));
  EXPECT_EQ(c.port, 2049);
  EXPECT_EQ(c.mountd_port, 20048);
  EXPECT_EQ(c.threads, 16u);
  EXPECT_EQ(c.io_threads, 0u);
  EXPECT_TRUE(c.udp);
  EXPECT_TRUE(c.tcp);
  EXPECT_EQ(c.max_record_size, 1114112u);
  EXPECT_EQ(c.tcp_sendfile, rpc::TcpSendfile::kOn);
  EXPECT_TRUE(c.udp_sendfile);
  EXPECT_EQ(c.tcp_splice_writes, 65536u);
  EXPECT_EQ(c.portmapper, PortmapperMode::kAuto);
  EXPECT_EQ(c.max_connections, 16384u);
  EXPECT_EQ(c.max_requests_per_connection, 64u);
  EXPECT_EQ(c.max_requests, 1024u);
  EXPECT_FALSE(c.manage_gids);
  EXPECT_EQ(c.manage_gids_ttl, 1800u);
  EXPECT_EQ(c.manage_gids_cache, 65536u);
  EXPECT_EQ(c.tcp_sizes, (TransferSizes{1048576, 1048576, 1048576, 1048576, false}));
  // UDP preferred sizes follow the MTU unless set (32K while it is unknown).
  EXPECT_EQ(c.udp_sizes, (TransferSizes{32768, 32768, 32768, 32768, true, true}));
  EXPECT_EQ(c.udp_fragments, 6u);
  EXPECT_EQ(c.state_dir, "/var/lib/nfs3d");
  EXPECT_EQ(c.exports_path, "/etc/nfs3d/exports");
  EXPECT_EQ(c.log_level, log::Level::kInfo);
  EXPECT_FALSE(c.syslog);
}

TEST(ServerConfigTest, EmptyAndCommentOnlyTextGiveDefaults) {
  EXPECT_EQ(ParseOk(""), DefaultServerConfig());
  EXPECT_EQ(ParseOk("# nothing\n; nothing either\n\n[nfsd]\n[tcp]\n"), DefaultServerConfig());
}

TEST(ServerConfigTest, ShippedFileParsesToDefaults) {
  std::string text = ReadFile(std::string(nfs3d::test_support::SourceDir()) + "/conf/nfs3d.conf");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(ParseOk(text), DefaultServerConfig());
}

// The commented-out values in the shipped file are the documented defaults:
// uncommenting all of them must not change anything.
TEST(ServerConfigTest, ShippedFileDocumentsTheDefaults) {
  std::string text = ReadFile(std::string(nfs3d::test_support::SourceDir()) + "/conf/nfs3d.conf");
  // Turn every "# key = value" line into "key = value".
  std::string uncommented;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t eq = line.find(" = ");
    bool is_key = line.rfind("# ", 0) == 0 && eq != std::string::npos &&
                  line.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", 2) == eq;
    uncommented += (is_key ? line.substr(2) : line) + "\n";
  }
  ASSERT_NE(uncommented, text);
  EXPECT_NE(uncommented.find("\nrsize_max = 1048576"), std::string::npos);
  EXPECT_EQ(ParseOk(uncommented), DefaultServerConfig());
}

TEST(ServerConfigTest, SpliceWrites) {
  EXPECT_EQ(ParseOk("[tcp]\nsplice_writes = 128K\n").tcp_splice_writes, 131072u);
  EXPECT_EQ(ParseOk("[tcp]\nsplice_writes = off\n").tcp_splice_writes, 0u);
  EXPECT_EQ(ParseOk("[tcp]\nsplice_writes = on\n").tcp_splice_writes, 65536u);
  ExpectError("[tcp]\nsplice_writes = 2M\n", 2, "out of range");
  ExpectError("[tcp]\nsplice_writes = lots\n", 2, "'lots' is not a size");
}

TEST(ServerConfigTest, TcpSendfile) {
  ServerConfig c = ParseOk("");
  EXPECT_EQ(c.tcp_sendfile, rpc::TcpSendfile::kOn);  // spliced for every client
  EXPECT_EQ(ParseOk("[tcp]\nsendfile = on\n").tcp_sendfile, rpc::TcpSendfile::kOn);
  EXPECT_EQ(ParseOk("[tcp]\nsendfile = off\n").tcp_sendfile, rpc::TcpSendfile::kOff);
  EXPECT_EQ(ParseOk("[tcp]\nsendfile = auto\n").tcp_sendfile, rpc::TcpSendfile::kExceptLoopback);
  EXPECT_FALSE(rpc::SplicesTo(rpc::TcpSendfile::kExceptLoopback, /*loopback=*/true));
  EXPECT_TRUE(rpc::SplicesTo(rpc::TcpSendfile::kExceptLoopback, /*loopback=*/false));
  EXPECT_TRUE(rpc::SplicesTo(rpc::TcpSendfile::kOn, /*loopback=*/true));
  EXPECT_FALSE(rpc::SplicesTo(rpc::TcpSendfile::kOff, /*loopback=*/false));
  ExpectError("[tcp]\nsendfile = sometimes\n", 2, "want auto, on or off");
}

TEST(ServerConfigTest, FairAdmission) {
  const ServerConfig d = DefaultServerConfig();
  EXPECT_EQ(d.tcp_record_timeout, 30u);
  EXPECT_EQ(d.tcp_unfinished_per_client, 64u << 20);
  EXPECT_EQ(d.max_requests_per_client, 0u);
  const ServerConfig c = ParseOk(
      "[nfsd]\nmax_requests_per_client = 100\n"
      "[tcp]\nrecord_timeout = 5\nunfinished_per_client = 16M\n");
  EXPECT_EQ(c.max_requests_per_client, 100u);
  EXPECT_EQ(c.tcp_record_timeout, 5u);
  EXPECT_EQ(c.tcp_unfinished_per_client, 16u << 20);
  ExpectError("[tcp]\nrecord_timeout = 3601\n", 2, "out of range");
  ExpectError("[tcp]\nunfinished_per_client = 512K\n", 2, "a record could never finish");
}

TEST(ServerConfigTest, CephSection) {
  ServerConfig c = ParseOk(R"(
[ceph]
conf = /etc/ceph/other.conf
client_id = nfs3d
keyring = /etc/ceph/ceph.client.nfs3d.keyring
fs_name = projects
timeout = 5
session_check = 0
)");
  EXPECT_EQ(c.ceph_conf, "/etc/ceph/other.conf");
  EXPECT_EQ(c.ceph_client_id, "nfs3d");
  EXPECT_EQ(c.ceph_keyring, "/etc/ceph/ceph.client.nfs3d.keyring");
  EXPECT_EQ(c.ceph_fs_name, "projects");
  EXPECT_EQ(c.ceph_timeout, 5u);
  EXPECT_EQ(c.ceph_session_check, 0u);
  const ServerConfig d = DefaultServerConfig();
  EXPECT_EQ(d.ceph_conf, "");
  EXPECT_EQ(d.ceph_client_id, "admin");
  EXPECT_EQ(d.ceph_timeout, 30u);
  EXPECT_EQ(d.ceph_session_check, 5u);
}

TEST(ServerConfigTest, CephCacheSize) {
  EXPECT_EQ(DefaultServerConfig().ceph_cache_size, 96u << 20);
  EXPECT_EQ(ParseOk("[ceph]\ncache_size = 16M\n").ceph_cache_size, 16u << 20);
  EXPECT_EQ(ParseOk("[ceph]\ncache_size = 512K\n").ceph_cache_size, 512u << 10);
  EXPECT_EQ(ParseOk("[ceph]\ncache_size = 0\n").ceph_cache_size, 0u);  // ceph.conf's
  ExpectError("[ceph]\ncache_size = 4096M\n", 2, "out of range");
  ExpectError("[ceph]\ncache_size = big\n", 2, "'big' is not a size");
}

TEST(ServerConfigTest, ClusterSection) {
  ServerConfig c = ParseOk("[cluster]\nnode_id = head-1.a\nname = prod\nshared_dir = /nfs/state\n");
  EXPECT_EQ(c.cluster_node_id, "head-1.a");
  EXPECT_EQ(c.cluster_name, "prod");
  EXPECT_EQ(c.cluster_shared_dir, "/nfs/state");
  const ServerConfig d = DefaultServerConfig();
  EXPECT_EQ(d.cluster_node_id, "");  // a head of its own
  EXPECT_EQ(d.cluster_shared_dir, "/.nfs3d");
  // Node ids name files and CephFS sessions.
  ExpectError("[cluster]\nnode_id = a/b\n", 2, "is not an id");
  ExpectError("[cluster]\nnode_id = ..\n", 2, "is not an id");
  ExpectError("[cluster]\nshared_dir = rel\n", 2, "not an absolute path");
}

TEST(ServerConfigTest, EveryKeyParsed) {
  ServerConfig c = ParseOk(R"(
[nfsd]
listen = 127.0.0.1, ::1
port = 12049
mountd_port = 0
threads = 16
metadata_threads = 6
io_threads = 2
udp = off
tcp = yes
max_record_size = 2097152
portmapper = off
max_connections = 10
max_requests_per_connection = 8
max_requests = 100
manage_gids = on
manage_gids_ttl = 60
manage_gids_cache = 500

[tcp]
rsize_max = 512K
rsize_pref = 256k
wsize_max = 1M
wsize_pref = 65536
sendfile = off

[udp]
rsize_max = 63K
rsize_pref = auto
wsize_max = 16384
wsize_pref = 8192
udp_fragments = 3
sendfile = no

[paths]
state_dir = /tmp/state
exports = "/tmp/my exports"
plugin_dir = /opt/nfs3d/plugins

[log]
level = debug
syslog = true
)");
  EXPECT_EQ(c.listen, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(c.port, 12049);
  EXPECT_EQ(c.mountd_port, 0);
  EXPECT_EQ(c.threads, 16u);
  EXPECT_EQ(c.metadata_threads, 6u);
  EXPECT_EQ(c.io_threads, 2u);
  EXPECT_FALSE(c.udp);
  EXPECT_TRUE(c.tcp);
  EXPECT_EQ(c.max_record_size, 2097152u);
  EXPECT_EQ(c.portmapper, PortmapperMode::kOff);
  EXPECT_EQ(c.max_connections, 10u);
  EXPECT_EQ(c.max_requests_per_connection, 8u);
  EXPECT_EQ(c.max_requests, 100u);
  EXPECT_TRUE(c.manage_gids);
  EXPECT_EQ(c.manage_gids_ttl, 60u);
  EXPECT_EQ(c.manage_gids_cache, 500u);
  EXPECT_EQ(c.tcp_sizes, (TransferSizes{524288, 262144, 1048576, 65536, false}));
  EXPECT_EQ(c.tcp_sendfile, rpc::TcpSendfile::kOff);
  EXPECT_FALSE(c.udp_sendfile);
  EXPECT_EQ(c.udp_sizes.rsize_max, 64512u);
  EXPECT_TRUE(c.udp_sizes.rsize_pref_auto);
  EXPECT_EQ(c.udp_sizes.rsize_pref, 32768u);  // the fallback
  EXPECT_EQ(c.udp_sizes.wsize_max, 16384u);
  EXPECT_FALSE(c.udp_sizes.wsize_pref_auto);  // a size turns auto off
  EXPECT_EQ(c.udp_sizes.wsize_pref, 8192u);
  EXPECT_EQ(c.udp_fragments, 3u);
  EXPECT_EQ(c.state_dir, "/tmp/state");
  EXPECT_EQ(c.exports_path, "/tmp/my exports");
  EXPECT_EQ(c.plugin_dir, "/opt/nfs3d/plugins");
  EXPECT_EQ(c.log_level, log::Level::kDebug);
  EXPECT_TRUE(c.syslog);
}

TEST(ServerConfigTest, AutoFallbackIsCappedByMax) {
  ServerConfig c = ParseOk("[udp]\nrsize_max = 8K\nrsize_pref = auto\nwsize_max = 16K\n");
  EXPECT_TRUE(c.udp_sizes.rsize_pref_auto);
  EXPECT_EQ(c.udp_sizes.rsize_pref, 8192u);
  EXPECT_TRUE(c.udp_sizes.wsize_pref_auto);  // the default
  EXPECT_EQ(c.udp_sizes.wsize_pref, 16384u);
}

TEST(ServerConfigTest, WritePreferenceTakesAutoAndSizes) {
  ServerConfig c = ParseOk("[udp]\nwsize_pref = AUTO\nrsize_pref = 16K\n");
  EXPECT_TRUE(c.udp_sizes.wsize_pref_auto);
  EXPECT_FALSE(c.udp_sizes.rsize_pref_auto);
  EXPECT_EQ(c.udp_sizes.rsize_pref, 16384u);
  c = ParseOk("[udp]\nwsize_pref = 8K\n");
  EXPECT_FALSE(c.udp_sizes.wsize_pref_auto);
  EXPECT_EQ(c.udp_sizes.wsize_pref, 8192u);
  ExpectError("[tcp]\nwsize_pref = auto\n", 2, "'auto' is not a size");  // UDP only
}

TEST(ServerConfigTest, PortmapperModes) {
  EXPECT_EQ(ParseOk("[nfsd]\nportmapper = auto").portmapper, PortmapperMode::kAuto);
  EXPECT_EQ(ParseOk("[nfsd]\nportmapper = on").portmapper, PortmapperMode::kOn);
  EXPECT_EQ(ParseOk("[nfsd]\nportmapper = YES").portmapper, PortmapperMode::kOn);
  EXPECT_EQ(ParseOk("[nfsd]\nportmapper = off").portmapper, PortmapperMode::kOff);
  ExpectError("[nfsd]\nportmapper = maybe", 2, "not auto, on or off");
}

TEST(ServerConfigTest, Booleans) {
  for (const char* v : {"on", "yes", "true", "1", "ON", "Yes", "TRUE"}) {
    EXPECT_TRUE(ParseOk(std::string("[log]\nsyslog = ") + v).syslog) << v;
  }
  for (const char* v : {"off", "no", "false", "0", "OFF", "No", "False"}) {
    EXPECT_FALSE(ParseOk(std::string("[log]\nsyslog = ") + v).syslog) << v;
  }
  ExpectError("[log]\nsyslog = maybe", 2, "'maybe' is not a boolean");
  ExpectError("[log]\nsyslog =", 2, "is not a boolean");
}

TEST(ServerConfigTest, LogLevels) {
  EXPECT_EQ(ParseOk("[log]\nlevel = warning").log_level, log::Level::kWarning);
  EXPECT_EQ(ParseOk("[log]\nlevel = WARN").log_level, log::Level::kWarning);
  EXPECT_EQ(ParseOk("[log]\nlevel = error").log_level, log::Level::kError);
  ExpectError("[log]\nlevel = loud", 2, "'loud' is not a log level");
}

TEST(ServerConfigTest, SyntaxDetails) {
  // Case-insensitive names, trailing comments, CRLF, indentation.
  ServerConfig c = ParseOk(
      "  [NFSD]  ; the server\r\n"
      "  Port=3049   # our port\r\n");
  EXPECT_EQ(c.port, 3049);
  // ';' only starts a comment after whitespace.
  ExpectError("[nfsd]\nthreads = 4;x", 2, "'4;x' is not a non-negative");
  // A quoted value keeps '#'.
  EXPECT_EQ(ParseOk("[paths]\nstate_dir = \"/a #b\"").state_dir, "/a #b");
}

TEST(ServerConfigTest, SyntaxErrors) {
  ExpectError("port = 1\n", 1, "before any [section]");
  ExpectError("\n[nfsd\n", 2, "missing ']'");
  ExpectError("[nfsd]\n[bad name]\n", 2, "invalid section name");
  ExpectError("[nfsd]\n\njust words\n", 3, "expected 'key = value'");
  ExpectError("[nfsd]\n= 5\n", 2, "invalid key name");
  ExpectError("[paths]\nstate_dir = \"/x\n", 2, "unterminated quoted value");
}

TEST(ServerConfigTest, UnknownSectionAndKey) {
  ExpectError("[nfsd]\nport = 1\n[nfsdd]\nport = 2\n", 4, "unknown section [nfsdd]");
  ExpectError("[nfsd]\nport = 2049\n\n\n\n\n\n\n\n\n\n[tcp]\nrsize_maxx = 4096\n", 13,
              "unknown key 'rsize_maxx' in [tcp]");
  // The exact message from the brief.
  absl::StatusOr<ServerConfig> c =
      ParseServerConfig("[tcp]\n\n\n\n\n\n\n\n\n\n\nrsize_maxx = 1\n", "/etc/nfs3d/nfs3d.conf");
  EXPECT_EQ(c.status().message(), "/etc/nfs3d/nfs3d.conf:12: unknown key 'rsize_maxx' in [tcp]");
  // udp_fragments lives in [udp] only.
  ExpectError("[tcp]\nudp_fragments = 2\n", 2, "unknown key 'udp_fragments' in [tcp]");
}

TEST(ServerConfigTest, UdpPacing) {
  ServerConfig d = DefaultServerConfig();
  EXPECT_TRUE(d.udp_pacing);  // auto
  EXPECT_EQ(d.udp_pacing_rate, 0u);
  EXPECT_FALSE(ParseOk("[udp]\npacing = off\n").udp_pacing);
  ServerConfig fixed = ParseOk("[udp]\npacing = 500mbit\n");
  EXPECT_TRUE(fixed.udp_pacing);
  EXPECT_EQ(fixed.udp_pacing_rate, 500'000'000u);
  EXPECT_EQ(ParseOk("[udp]\npacing = 1gbit\n").udp_pacing_rate, 1'000'000'000u);
  ServerConfig back = ParseOk("[udp]\npacing = auto\n");
  EXPECT_TRUE(back.udp_pacing);
  EXPECT_EQ(back.udp_pacing_rate, 0u);
  ExpectError("[udp]\npacing = fast\n", 2, "not off, auto or a rate");
  ExpectError("[udp]\npacing = 10kbit\n", 2, "at least 1mbit");
  ExpectError("[udp]\npacing = 1000\n", 2, "not off, auto or a rate");
}

TEST(ServerConfigTest, MetricsSection) {
  ServerConfig d = DefaultServerConfig();
  EXPECT_FALSE(d.metrics);  // off by default, loopback when turned on
  EXPECT_EQ(d.metrics_listen, std::vector<std::string>{"127.0.0.1"});
  EXPECT_TRUE(d.control_socket);
  ServerConfig c =
      ParseOk("[metrics]\nenable = on\nlisten = 127.0.0.1, ::1\nport = 0\ncontrol_socket = off\n");
  EXPECT_TRUE(c.metrics);
  EXPECT_EQ(c.metrics_listen, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(c.metrics_port, 0);
  EXPECT_FALSE(c.control_socket);
  EXPECT_EQ(c.listen, d.listen);  // [nfsd] listen untouched
  ExpectError("[metrics]\nlisten = localhost\n", 2, "not a numeric");
  ExpectError("[metrics]\nport = 70000\n", 2, "out of range");
}

TEST(ServerConfigTest, NlmSection) {
  ServerConfig d = DefaultServerConfig();
  EXPECT_TRUE(d.nlm);
  EXPECT_EQ(d.nlm_grace_period, 90u);
  ServerConfig c = ParseOk(
      "[nlm]\nenable = off\ngrace_period = 5\nmax_locks = 100\nmax_locks_per_client = 10\n");
  EXPECT_FALSE(c.nlm);
  EXPECT_EQ(c.nlm_grace_period, 5u);
  EXPECT_EQ(c.nlm_max_locks, 100u);
  EXPECT_EQ(c.nlm_max_locks_per_client, 10u);
  ExpectError("[nlm]\ngrace_period = 4000\n", 2, "out of range");
  ExpectError("[nlm]\nmax_locks = 0\n", 2, "out of range");
}

TEST(ServerConfigTest, DuplicateKey) {
  ExpectError("[nfsd]\nport = 1\n[tcp]\n[nfsd]\nport = 2\n", 5,
              "duplicate key 'port' in [nfsd] (first set on line 2)");
}

TEST(ServerConfigTest, NumberErrors) {
  ExpectError("[nfsd]\nport = 65536", 2, "out of range [0, 65535]");
  ExpectError("[nfsd]\nport = -1", 2, "'-1' is not a non-negative integer");
  ExpectError("[nfsd]\nport = 20x", 2, "'20x' is not a non-negative integer");
  ExpectError("[nfsd]\nmountd_port = 99999999999999999999999", 2, "is not a non-negative integer");
  ExpectError("[nfsd]\nthreads = 0", 2, "[nfsd] threads: 0 is out of range");
  ExpectError("[nfsd]\nio_threads = 5000", 2, "out of range");
  ExpectError("[nfsd]\nmax_connections = 0", 2, "out of range");
  ExpectError("[nfsd]\nmax_requests = 0", 2, "out of range");
  ExpectError("[udp]\nudp_fragments = 0", 2, "out of range");
  ExpectError("[nfsd]\nmax_record_size = 100", 2, "out of range");
}

TEST(ServerConfigTest, SizeErrors) {
  ExpectError("[tcp]\nrsize_max = 2M", 2, "out of range [4096, 1048576]");
  ExpectError("[tcp]\nrsize_max = 1000", 2, "out of range");
  ExpectError("[tcp]\nrsize_max = 5000", 2, "not a multiple of 1024");
  ExpectError("[tcp]\nrsize_max = big", 2, "'big' is not a size");
  ExpectError("[tcp]\nrsize_max = K", 2, "is not a size");
  ExpectError("[tcp]\nrsize_pref = auto", 2, "'auto' is not a size");
  ExpectError("[udp]\nrsize_max = 64K", 2, "out of range [4096, 64512]");
  ExpectError("[udp]\nwsize_max = 65536", 2, "out of range");
  ExpectError("[udp]\nrsize_pref = 128K", 2, "out of range");
}

TEST(ServerConfigTest, TlsSection) {
  const ServerConfig c = ParseOk(
      "[tls]\ncertificate = /etc/nfs3d/server.pem\nkey = /etc/nfs3d/server.key\n"
      "ca = /etc/nfs3d/clients-ca.pem\nhandshake_timeout = 3\n");
  EXPECT_EQ(c.tls_certificate, "/etc/nfs3d/server.pem");
  EXPECT_EQ(c.tls_key, "/etc/nfs3d/server.key");
  EXPECT_EQ(c.tls_ca, "/etc/nfs3d/clients-ca.pem");
  EXPECT_EQ(c.tls_handshake_timeout, 3u);
  const ServerConfig d = DefaultServerConfig();
  EXPECT_EQ(d.tls_certificate, "");
  EXPECT_EQ(d.tls_handshake_timeout, 10u);
  ExpectError("[tls]\ncertificate = /a.pem\n", 2, "needs both certificate and key");
  ExpectError("[tls]\nca = /ca.pem\n", 2, "needs both certificate and key");
  ExpectError("[tls]\nkey = relative.key\n", 2, "not an absolute path");
  ExpectError("[tls]\nhandshake_timeout = 0\n", 2, "out of range");
}

TEST(ServerConfigTest, CrossKeyErrors) {
  ExpectError("[tcp]\nrsize_max = 64K\nrsize_pref = 128K\n", 3,
              "[tcp] rsize_pref 131072 exceeds rsize_max 65536");
  // Line of the later of the two keys, whichever order they come in.
  ExpectError("[tcp]\nrsize_pref = 128K\nrsize_max = 64K\n", 3, "exceeds rsize_max");
  ExpectError("[udp]\nwsize_max = 8K\nwsize_pref = 16K\n", 3,
              "[udp] wsize_pref 16384 exceeds wsize_max 8192");
  ExpectError("[nfsd]\nudp = off\n\ntcp = no\n", 4, "both off");
  ExpectError("[nfsd]\nport = 2000\nmountd_port = 2000\n", 3, "port and mountd_port are both 2000");
  ExpectError("[nfsd]\nmax_record_size = 1048576\n", 2, "too small for [tcp] wsize_max 1048576");
  EXPECT_EQ(ParseOk("[nfsd]\nmax_record_size = 65536\n[tcp]\nwsize_max = 60K\n"
                    "wsize_pref = 32K\n")
                .max_record_size,
            65536u);
  // Both ports 0 (ephemeral) is fine.
  ParseOk("[nfsd]\nport = 0\nmountd_port = 0\n");
}

TEST(ServerConfigTest, ListenErrors) {
  ExpectError("[nfsd]\nlisten = 10.0.0.1,localhost\n", 2,
              "'localhost' is not a numeric IPv4 or IPv6 address");
  ExpectError("[nfsd]\nlisten = 10.0.0.256\n", 2, "not a numeric");
  ExpectError("[nfsd]\nlisten = ,\n", 2, "at least one address");
  EXPECT_EQ(ParseOk("[nfsd]\nlisten = ::1,\n").listen, std::vector<std::string>{"::1"});
}

TEST(ServerConfigTest, PathErrors) {
  ExpectError("[paths]\nstate_dir = var/lib\n", 2, "not an absolute path");
  ExpectError("[paths]\nexports =\n", 2, "not an absolute path");
}

TEST(ServerConfigTest, LoadFromFile) {
  char dir_template[] = "/tmp/nfs3d_conf_testXXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  std::string path = dir + "/nfs3d.conf";
  {
    std::ofstream out(path);
    out << "[nfsd]\nport = 4049\n[tcp]\nwsize_maxx = 1\n";
  }
  absl::StatusOr<ServerConfig> c = LoadServerConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), path + ":4: unknown key 'wsize_maxx' in [tcp]");
  {
    std::ofstream out(path);
    out << "[nfsd]\nport = 4049\n";
  }
  c = LoadServerConfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->port, 4049);

  absl::StatusOr<ServerConfig> missing = LoadServerConfig(dir + "/nope.conf");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.conf"), absl::string_view::npos);
  // A directory is not a config file.
  EXPECT_FALSE(LoadServerConfig(dir).ok());

  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST(ServerConfigTest, DescribeMentionsTheEssentials) {
  std::string d = Describe(DefaultServerConfig());
  for (const char* part :
       {"listen=0.0.0.0,::", "port=2049", "mountd_port=20048",
        "tcp(r1048576/1048576 w1048576/1048576)", "udp(r32768/auto w32768/auto)", "threads=16",
        "io_threads=auto", "portmapper=auto", "exports=/etc/nfs3d/exports", "log=info"}) {
    EXPECT_NE(d.find(part), std::string::npos) << d << " lacks " << part;
  }
  EXPECT_EQ(d.find('\n'), std::string::npos);
  ServerConfig c = ParseOk("[nfsd]\nudp = off\n[udp]\nrsize_pref = auto\n");
  d = Describe(c);
  EXPECT_EQ(d.find("udp("), std::string::npos) << d;
  c = ParseOk("[udp]\nrsize_pref = auto\n");
  EXPECT_NE(Describe(c).find("udp(r32768/auto"), std::string::npos) << Describe(c);
}

}  // namespace
}  // namespace nfs3d::conf
