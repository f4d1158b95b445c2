#include "conf/server_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

#include "conf/ini_parser.h"

namespace nfs3d::conf {
namespace {

// A setter either succeeds (empty string) or returns the problem, which the
// caller prefixes with "FILE:LINE: ".
using Setter = std::function<std::string(ServerConfig&, std::string_view)>;

std::string ParseBool(std::string_view text, bool* out) {
  std::string v = text::Lower(text);
  if (v == "on" || v == "yes" || v == "true" || v == "1") {
    *out = true;
    return "";
  }
  if (v == "off" || v == "no" || v == "false" || v == "0") {
    *out = false;
    return "";
  }
  return text::Cat("'", text,
                   "' is not a boolean (use on/off, yes/no, true/false, "
                   "1/0)");
}

std::string ParseUint(std::string_view text, uint64_t min, uint64_t max, uint64_t* out) {
  uint64_t v = 0;
  if (!text::ParseDecimal(text, &v)) {
    return text::Cat("'", text, "' is not a non-negative integer");
  }
  if (v < min || v > max) {
    return text::Cat(v, " is out of range [", min, ", ", max, "]");
  }
  *out = v;
  return "";
}

template <typename T>
Setter UintSetter(T ServerConfig::*field, uint64_t min, uint64_t max) {
  return [field, min, max](ServerConfig& c, std::string_view v) {
    uint64_t n = 0;
    std::string err = ParseUint(v, min, max, &n);
    if (err.empty()) c.*field = static_cast<T>(n);
    return err;
  };
}

Setter BoolSetter(bool ServerConfig::*field) {
  return [field](ServerConfig& c, std::string_view v) { return ParseBool(v, &(c.*field)); };
}

// Parses a byte count with an optional K or M suffix (binary units). A size
// must be a multiple of 1024 (so 63K is expressible) and at least 4 KiB.
std::string ParseSize(std::string_view text, uint32_t max, uint32_t* out) {
  std::string_view digits = text;
  uint64_t unit = 1;
  if (!digits.empty()) {
    char last = digits.back() | 0x20;  // ASCII lower case
    if (last == 'k') unit = 1024;
    if (last == 'm') unit = 1024 * 1024;
    if (unit != 1) digits.remove_suffix(1);
  }
  uint64_t n = 0;
  if (!text::ParseDecimal(digits, &n) || n > (uint64_t{1} << 40)) {
    return text::Cat("'", text, "' is not a size (bytes, or a number with K or M)");
  }
  n *= unit;
  if (n < 4096 || n > max) {
    return text::Cat("size ", n, " is out of range [4096, ", max, "]");
  }
  if (n % 1024 != 0) {
    return text::Cat("size ", n, " is not a multiple of 1024");
  }
  *out = static_cast<uint32_t>(n);
  return "";
}

Setter SizeSetter(TransferSizes ServerConfig::*sizes, uint32_t TransferSizes::*field,
                  uint32_t max) {
  return [sizes, field, max](ServerConfig& c, std::string_view v) {
    return ParseSize(v, max, &((c.*sizes).*field));
  };
}

std::string ParseSpliceWrites(ServerConfig& c, std::string_view text) {
  // on/off, or the smallest WRITE spliced; on = 64K.
  bool on = true;
  if (ParseBool(text, &on).empty()) {
    c.tcp_splice_writes = on ? 64 << 10 : 0;
    return "";
  }
  return ParseSize(text, kMaxTcpTransferSize, &c.tcp_splice_writes);
}

std::string ParseTcpSendfile(ServerConfig& c, std::string_view text) {
  // on/off, or auto: on except for loopback clients.
  if (text == "auto") {
    c.tcp_sendfile = rpc::TcpSendfile::kExceptLoopback;
    return "";
  }
  bool on = false;
  if (!ParseBool(text, &on).empty()) return "want auto, on or off";
  c.tcp_sendfile = on ? rpc::TcpSendfile::kOn : rpc::TcpSendfile::kOff;
  return "";
}

std::string ParseUnfinishedPerClient(ServerConfig& c, std::string_view text) {
  return ParseSize(text, 1u << 31, &c.tcp_unfinished_per_client);
}

std::string ParseCephCacheSize(ServerConfig& c, std::string_view text) {
  // 0: leave libcephfs's object cache as ceph.conf sets it.
  if (text == "0") {
    c.ceph_cache_size = 0;
    return "";
  }
  return ParseSize(text, 1u << 31, &c.ceph_cache_size);
}

std::string ParseListen(ServerConfig& c, std::string_view text) {
  std::vector<std::string> addrs;
  for (std::string_view part : text::Split(text, ',')) {
    part = text::Trim(part);
    if (part.empty()) continue;
    std::string s(part);
    in_addr a4;
    in6_addr a6;
    if (inet_pton(AF_INET, s.c_str(), &a4) != 1 && inet_pton(AF_INET6, s.c_str(), &a6) != 1) {
      return text::Cat("'", part, "' is not a numeric IPv4 or IPv6 address");
    }
    addrs.push_back(std::move(s));
  }
  if (addrs.empty()) return "listen needs at least one address";
  c.listen = std::move(addrs);
  return "";
}

std::string ParseMetricsListen(ServerConfig& c, std::string_view text) {
  // Same syntax as [nfsd] listen; parse into a scratch config.
  ServerConfig scratch;
  std::string err = ParseListen(scratch, text);
  if (err.empty()) c.metrics_listen = std::move(scratch.listen);
  return err;
}

std::string ParsePortmapper(ServerConfig& c, std::string_view text) {
  std::string v = text::Lower(text);
  if (v == "auto") {
    c.portmapper = PortmapperMode::kAuto;
    return "";
  }
  bool on = false;
  if (!ParseBool(v, &on).empty()) {
    return text::Cat("'", text, "' is not auto, on or off");
  }
  c.portmapper = on ? PortmapperMode::kOn : PortmapperMode::kOff;
  return "";
}

// [udp] pacing: off, auto, or a rate per client ("500mbit", "1gbit").
std::string ParseUdpPacing(ServerConfig& c, std::string_view text) {
  std::string v = text::Lower(text::Trim(text));
  bool on = false;
  if (v == "auto" || (ParseBool(v, &on).empty() && on)) {
    c.udp_pacing = true;
    c.udp_pacing_rate = 0;
    return "";
  }
  if (ParseBool(v, &on).empty()) {
    c.udp_pacing = false;
    return "";
  }
  uint64_t unit = 0;
  for (auto [suffix, mult] :
       {std::pair{"gbit", uint64_t{1000000000}}, std::pair{"mbit", uint64_t{1000000}},
        std::pair{"kbit", uint64_t{1000}}}) {
    const std::string_view sfx(suffix);
    if (v.size() > sfx.size() && v.compare(v.size() - sfx.size(), sfx.size(), sfx) == 0) {
      unit = mult;
      v.resize(v.size() - sfx.size());
      break;
    }
  }
  uint64_t n = 0;
  if (unit == 0 || !ParseUint(v, 1, 1000000, &n).empty() || n * unit < 1000000) {
    return text::Cat("'", text,
                     "' is not off, auto or a rate of at least 1mbit (e.g. 500mbit, 1gbit)");
  }
  c.udp_pacing = true;
  c.udp_pacing_rate = n * unit;
  return "";
}

// [udp] rsize_pref / wsize_pref: a size, or "auto" (sized from the MTU).
Setter UdpPrefSetter(uint32_t TransferSizes::*size, bool TransferSizes::*is_auto) {
  return [size, is_auto](ServerConfig& c, std::string_view v) -> std::string {
    c.udp_sizes.*is_auto = text::Lower(v) == "auto";
    if (c.udp_sizes.*is_auto) return "";
    return ParseSize(v, kMaxUdpTransferSize, &(c.udp_sizes.*size));
  };
}

Setter PathSetter(std::string ServerConfig::*field) {
  return [field](ServerConfig& c, std::string_view v) -> std::string {
    if (v.empty() || v[0] != '/') {
      return text::Cat("'", v, "' is not an absolute path");
    }
    c.*field = std::string(v);
    return "";
  };
}

// A name without spaces (cephx client id, file system name).
Setter NameSetter(std::string ServerConfig::*field) {
  return [field](ServerConfig& c, std::string_view v) -> std::string {
    if (v.empty() || v.find_first_of(" \t") != std::string_view::npos) {
      return text::Cat("'", v, "' is not a name");
    }
    c.*field = std::string(v);
    return "";
  };
}

// An id that can be part of a file name: letters, digits, '.', '_', '-'.
Setter IdSetter(std::string ServerConfig::*field) {
  return [field](ServerConfig& c, std::string_view v) -> std::string {
    const bool ok = !v.empty() && v[0] != '.' && std::all_of(v.begin(), v.end(), [](char ch) {
      return absl::ascii_isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' ||
             ch == '-';
    });
    if (!ok) return text::Cat("'", v, "' is not an id (letters, digits, '.', '_', '-')");
    c.*field = std::string(v);
    return "";
  };
}

std::string ParseLogLevel(ServerConfig& c, std::string_view text) {
  std::string v = text::Lower(text);
  if (v == "warn") v = "warning";
  if (!log::ParseLevel(v, &c.log_level)) {
    return text::Cat("'", text, "' is not a log level (debug, info, warning, error)");
  }
  return "";
}

// Every setting, one row each: a table, however long.
// NOLINTNEXTLINE(readability-function-size)
const std::map<std::string, std::map<std::string, Setter>>& Schema() {
  static const auto* schema = new std::map<std::string, std::map<std::string, Setter>>{
      {"nfsd",
       {
           {"listen", ParseListen},
           {"port", UintSetter(&ServerConfig::port, 0, 65535)},
           {"mountd_port", UintSetter(&ServerConfig::mountd_port, 0, 65535)},
           {"threads", UintSetter(&ServerConfig::threads, 1, 4096)},
           {"metadata_threads", UintSetter(&ServerConfig::metadata_threads, 0, 4096)},
           {"io_threads", UintSetter(&ServerConfig::io_threads, 0, 1024)},
           {"udp", BoolSetter(&ServerConfig::udp)},
           {"tcp", BoolSetter(&ServerConfig::tcp)},
           {"max_record_size", UintSetter(&ServerConfig::max_record_size, 8192, 64u << 20)},
           {"portmapper", ParsePortmapper},
           {"max_connections", UintSetter(&ServerConfig::max_connections, 1, 1u << 20)},
           {"max_requests_per_connection",
            UintSetter(&ServerConfig::max_requests_per_connection, 1, 65536)},
           {"max_requests", UintSetter(&ServerConfig::max_requests, 1, 1u << 20)},
           {"max_requests_per_client",
            UintSetter(&ServerConfig::max_requests_per_client, 0, 1u << 20)},
           {"manage_gids", BoolSetter(&ServerConfig::manage_gids)},
           {"manage_gids_ttl", UintSetter(&ServerConfig::manage_gids_ttl, 0, 86400 * 7)},
           {"manage_gids_cache", UintSetter(&ServerConfig::manage_gids_cache, 0, 1u << 24)},
       }},
      {"tcp",
       {
           {"sendfile", ParseTcpSendfile},
           {"splice_writes", ParseSpliceWrites},
           {"record_timeout", UintSetter(&ServerConfig::tcp_record_timeout, 0, 3600)},
           {"unfinished_per_client", ParseUnfinishedPerClient},
           {"rsize_max",
            SizeSetter(&ServerConfig::tcp_sizes, &TransferSizes::rsize_max, kMaxTcpTransferSize)},
           {"rsize_pref",
            SizeSetter(&ServerConfig::tcp_sizes, &TransferSizes::rsize_pref, kMaxTcpTransferSize)},
           {"wsize_max",
            SizeSetter(&ServerConfig::tcp_sizes, &TransferSizes::wsize_max, kMaxTcpTransferSize)},
           {"wsize_pref",
            SizeSetter(&ServerConfig::tcp_sizes, &TransferSizes::wsize_pref, kMaxTcpTransferSize)},
       }},
      {"udp",
       {
           {"rsize_max",
            SizeSetter(&ServerConfig::udp_sizes, &TransferSizes::rsize_max, kMaxUdpTransferSize)},
           {"rsize_pref",
            UdpPrefSetter(&TransferSizes::rsize_pref, &TransferSizes::rsize_pref_auto)},
           {"wsize_max",
            SizeSetter(&ServerConfig::udp_sizes, &TransferSizes::wsize_max, kMaxUdpTransferSize)},
           {"wsize_pref",
            UdpPrefSetter(&TransferSizes::wsize_pref, &TransferSizes::wsize_pref_auto)},
           {"udp_fragments", UintSetter(&ServerConfig::udp_fragments, 1, 64)},
           {"pacing", ParseUdpPacing},
           {"sendfile", BoolSetter(&ServerConfig::udp_sendfile)},
       }},
      {"paths",
       {
           {"state_dir", PathSetter(&ServerConfig::state_dir)},
           {"exports", PathSetter(&ServerConfig::exports_path)},
           {"exports_poll", UintSetter(&ServerConfig::exports_poll, 0, 3600)},
           {"plugin_dir", PathSetter(&ServerConfig::plugin_dir)},
       }},
      {"log",
       {
           {"level", ParseLogLevel},
           {"syslog", BoolSetter(&ServerConfig::syslog)},
           {"slow_call_ms", UintSetter(&ServerConfig::slow_call_ms, 0, 3600000)},
       }},
      {"metrics",
       {
           {"enable", BoolSetter(&ServerConfig::metrics)},
           {"listen", ParseMetricsListen},
           {"port", UintSetter(&ServerConfig::metrics_port, 0, 65535)},
           {"control_socket", BoolSetter(&ServerConfig::control_socket)},
           {"tcp_per_client", BoolSetter(&ServerConfig::metrics_tcp_per_client)},
           {"top_clients", UintSetter(&ServerConfig::top_clients, 0, 4096)},
           {"top_exports", UintSetter(&ServerConfig::top_exports, 1, 4096)},
           {"top_users", UintSetter(&ServerConfig::top_users, 1, 4096)},
       }},
      {"nlm",
       {
           {"enable", BoolSetter(&ServerConfig::nlm)},
           {"grace_period", UintSetter(&ServerConfig::nlm_grace_period, 0, 3600)},
           {"max_locks", UintSetter(&ServerConfig::nlm_max_locks, 1, 1u << 24)},
           {"max_locks_per_client",
            UintSetter(&ServerConfig::nlm_max_locks_per_client, 1, 1u << 24)},
       }},
      {"ceph",
       {
           {"conf", PathSetter(&ServerConfig::ceph_conf)},
           {"client_id", NameSetter(&ServerConfig::ceph_client_id)},
           {"keyring", PathSetter(&ServerConfig::ceph_keyring)},
           {"fs_name", NameSetter(&ServerConfig::ceph_fs_name)},
           {"timeout", UintSetter(&ServerConfig::ceph_timeout, 1, 3600)},
           {"session_check", UintSetter(&ServerConfig::ceph_session_check, 0, 3600)},
           {"cache_size", ParseCephCacheSize},
       }},
      {"cluster",
       {
           {"node_id", IdSetter(&ServerConfig::cluster_node_id)},
           {"name", IdSetter(&ServerConfig::cluster_name)},
           {"shared_dir", PathSetter(&ServerConfig::cluster_shared_dir)},
           {"shared_exports", BoolSetter(&ServerConfig::cluster_shared_exports)},
           {"exports_poll", UintSetter(&ServerConfig::cluster_exports_poll, 1, 3600)},
       }},
      {"kerberos",
       {
           {"keytab", PathSetter(&ServerConfig::krb5_keytab)},
           {"principal", NameSetter(&ServerConfig::krb5_principal)},
       }},
      {"tls",
       {
           {"certificate", PathSetter(&ServerConfig::tls_certificate)},
           {"key", PathSetter(&ServerConfig::tls_key)},
           {"ca", PathSetter(&ServerConfig::tls_ca)},
           {"handshake_timeout", UintSetter(&ServerConfig::tls_handshake_timeout, 1, 600)},
       }},
  };
  return *schema;
}

// Line numbers of the keys that were set, for errors that involve several.
class KeyLines {
 public:
  void Set(const std::string& section, const std::string& key, int line) {
    lines_[section + "." + key] = line;
  }
  // The latest line among the given "section.key" names that appear in the
  // file; 0 if none (then the defaults are at fault, which tests rule out).
  int Latest(std::initializer_list<std::string_view> names) const {
    int best = 0;
    for (std::string_view n : names) {
      auto it = lines_.find(std::string(n));
      if (it != lines_.end() && it->second > best) best = it->second;
    }
    return best;
  }

 private:
  std::map<std::string, int> lines_;
};

absl::Status CheckSizes(const TransferSizes& s, std::string_view section, const KeyLines& lines,
                        std::string_view filename) {
  std::string sec(section);
  if (!s.rsize_pref_auto && s.rsize_pref > s.rsize_max) {
    return LineError(filename, lines.Latest({sec + ".rsize_pref", sec + ".rsize_max"}),
                     absl::StrFormat("[%s] rsize_pref %u exceeds rsize_max %u", section,
                                     s.rsize_pref, s.rsize_max));
  }
  if (!s.wsize_pref_auto && s.wsize_pref > s.wsize_max) {
    return LineError(filename, lines.Latest({sec + ".wsize_pref", sec + ".wsize_max"}),
                     absl::StrFormat("[%s] wsize_pref %u exceeds wsize_max %u", section,
                                     s.wsize_pref, s.wsize_max));
  }
  return absl::OkStatus();
}

// Checks that involve more than one key.
absl::Status Validate(ServerConfig& c, const KeyLines& lines, std::string_view filename) {
  if (!c.udp && !c.tcp) {
    return LineError(filename, lines.Latest({"nfsd.udp", "nfsd.tcp"}),
                     "udp and tcp are both off: nothing to serve on");
  }
  if (c.port != 0 && c.port == c.mountd_port) {
    return LineError(filename, lines.Latest({"nfsd.port", "nfsd.mountd_port"}),
                     absl::StrFormat("port and mountd_port are both %u", c.port));
  }
  if (absl::Status s = CheckSizes(c.tcp_sizes, "tcp", lines, filename); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckSizes(c.udp_sizes, "udp", lines, filename); !s.ok()) {
    return s;
  }
  // A WRITE of wsize_max bytes must fit in one record with its RPC header,
  // AUTH_SYS credential (up to 400 bytes), verifier and file handle.
  constexpr uint32_t kHeaderRoom = 4096;
  if (c.max_record_size < c.tcp_sizes.wsize_max + kHeaderRoom) {
    return LineError(filename, lines.Latest({"nfsd.max_record_size", "tcp.wsize_max"}),
                     absl::StrFormat("max_record_size %u is too small for [tcp] wsize_max "
                                     "%u plus RPC headers (need at least %u)",
                                     c.max_record_size, c.tcp_sizes.wsize_max,
                                     c.tcp_sizes.wsize_max + kHeaderRoom));
  }
  if (c.tcp_unfinished_per_client < c.max_record_size) {
    return LineError(filename, lines.Latest({"nfsd.max_record_size", "tcp.unfinished_per_client"}),
                     absl::StrFormat("[tcp] unfinished_per_client %u is smaller than "
                                     "max_record_size %u: a record could never finish",
                                     c.tcp_unfinished_per_client, c.max_record_size));
  }
  if (c.tls_certificate.empty() != c.tls_key.empty() ||
      (!c.tls_ca.empty() && c.tls_certificate.empty())) {
    return LineError(filename, lines.Latest({"tls.certificate", "tls.key", "tls.ca"}),
                     "[tls] needs both certificate and key (and ca only with them)");
  }
  // The fallback for "auto" never exceeds the configured maximum.
  TransferSizes& u = c.udp_sizes;
  if (u.rsize_pref_auto) u.rsize_pref = std::min(u.rsize_pref, u.rsize_max);
  if (u.wsize_pref_auto) u.wsize_pref = std::min(u.wsize_pref, u.wsize_max);
  return absl::OkStatus();
}

std::string PrefName(uint32_t size, bool is_auto) {
  return is_auto ? std::string("auto") : text::Cat(size);
}

std::string SizesSummary(const TransferSizes& s) {
  return text::Cat("r", s.rsize_max, "/", PrefName(s.rsize_pref, s.rsize_pref_auto), " w",
                   s.wsize_max, "/", PrefName(s.wsize_pref, s.wsize_pref_auto));
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

std::string_view LevelName(log::Level level) {
  switch (level) {
    case log::Level::kDebug:
      return "debug";
    case log::Level::kInfo:
      return "info";
    case log::Level::kWarning:
      return "warning";
    case log::Level::kError:
      return "error";
  }
  return "?";
}

}  // namespace

ServerConfig DefaultServerConfig() { return ServerConfig{}; }

std::string_view PortmapperModeName(PortmapperMode mode) {
  switch (mode) {
    case PortmapperMode::kAuto:
      return "auto";
    case PortmapperMode::kOn:
      return "on";
    case PortmapperMode::kOff:
      return "off";
  }
  return "?";
}

absl::StatusOr<ServerConfig> ParseServerConfig(std::string_view text, std::string_view filename) {
  absl::StatusOr<std::vector<IniEntry>> entries = ParseIni(text, filename);
  if (!entries.ok()) return entries.status();

  ServerConfig config = DefaultServerConfig();
  KeyLines lines;
  const auto& schema = Schema();
  for (const IniEntry& e : *entries) {
    auto sec = schema.find(e.section);
    if (sec == schema.end()) {
      return LineError(filename, e.line, text::Cat("unknown section [", e.section, "]"));
    }
    auto key = sec->second.find(e.key);
    if (key == sec->second.end()) {
      return LineError(filename, e.line,
                       text::Cat("unknown key '", e.key, "' in [", e.section, "]"));
    }
    if (int prev = lines.Latest({e.section + "." + e.key}); prev != 0) {
      return LineError(filename, e.line,
                       text::Cat("duplicate key '", e.key, "' in [", e.section,
                                 "] (first set on line ", prev, ")"));
    }
    if (std::string problem = key->second(config, e.value); !problem.empty()) {
      return LineError(filename, e.line, text::Cat("[", e.section, "] ", e.key, ": ", problem));
    }
    lines.Set(e.section, e.key, e.line);
  }
  if (absl::Status s = Validate(config, lines, filename); !s.ok()) return s;
  return config;
}

absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadConfigFile(path);
  if (!text.ok()) return text.status();
  return ParseServerConfig(*text, path);
}

std::string Describe(const ServerConfig& c) {
  std::string transports;
  if (c.tcp) {
    transports += text::Cat(" tcp(", SizesSummary(c.tcp_sizes), ")");
  }
  if (c.udp) {
    transports += text::Cat(" udp(", SizesSummary(c.udp_sizes), ")");
  }
  return text::Cat(
      "listen=", Join(c.listen), " port=", c.port, " mountd_port=", c.mountd_port, transports,
      " threads=", c.threads, "+",
      c.metadata_threads == 0 ? std::string("auto") : text::Cat(c.metadata_threads),
      " io_threads=", c.io_threads == 0 ? std::string("auto") : text::Cat(c.io_threads),
      " max_connections=", c.max_connections, " max_requests=", c.max_requests, "(",
      c.max_requests_per_connection, "/conn)", " max_record=", c.max_record_size,
      c.tcp_sendfile == rpc::TcpSendfile::kOff  ? ""
      : c.tcp_sendfile == rpc::TcpSendfile::kOn ? " tcp_sendfile"
                                                : " tcp_sendfile(not loopback)",
      c.udp_sendfile ? " udp_sendfile" : "",
      c.manage_gids
          ? text::Cat(" manage_gids(ttl ", c.manage_gids_ttl, "s, ", c.manage_gids_cache, " uids)")
          : std::string(),
      c.tcp_splice_writes != 0 ? text::Cat(" tcp_splice_writes=", c.tcp_splice_writes)
                               : std::string(),
      " portmapper=", PortmapperModeName(c.portmapper), " exports=", c.exports_path,
      " state_dir=", c.state_dir, " log=", LevelName(c.log_level), c.syslog ? "(syslog)" : "",
      " metrics=",
      c.metrics ? text::Cat(Join(c.metrics_listen), " port ", c.metrics_port) : std::string("off"),
      " nlm=", c.nlm ? text::Cat("grace ", c.nlm_grace_period, "s") : std::string("off"));
}

}  // namespace nfs3d::conf
