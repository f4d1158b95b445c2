#include "conf/exports.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "absl/types/span.h"

#include "common/auth_flavor.h"
#include "conf/export_options.h"
#include "conf/ini_parser.h"

namespace nfs3d::conf {
namespace {

using internal::ApplyOptions;
using internal::FinishOptions;
using internal::NoteOptions;
using internal::OptionState;
using text::Cat;

// ---------------------------------------------------------------------------
// Lines and tokens.

// One logical line (physical lines joined by backslash continuation), with
// the physical line each byte came from so errors point at the right line.
struct LogicalLine {
  std::string text;
  std::vector<std::pair<size_t, int>> starts;  // (offset in text, line no)

  int LineAt(size_t offset) const {
    int line = starts.front().second;
    for (const auto& [off, no] : starts) {
      if (off > offset) break;
      line = no;
    }
    return line;
  }
};

std::vector<LogicalLine> SplitLogicalLines(std::string_view text) {
  std::vector<LogicalLine> out;
  LogicalLine current;
  bool continuing = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    // A comment line never continues, even if it ends in a backslash.
    std::string_view trimmed = text::Trim(raw);
    if (!continuing && !trimmed.empty() && trimmed[0] == '#') continue;

    bool continues = !raw.empty() && raw.back() == '\\';
    if (continues) raw.remove_suffix(1);
    current.starts.emplace_back(current.text.size(), line_no);
    current.text.append(raw);
    if (continues) {
      current.text.push_back(' ');
      continuing = true;
      continue;
    }
    continuing = false;
    out.push_back(std::move(current));
    current = LogicalLine();
  }
  if (!current.starts.empty()) out.push_back(std::move(current));
  return out;
}

struct Token {
  std::string text;  // quotes removed
  int line = 0;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

// Splits a logical line into whitespace-separated tokens. Double quotes group
// (and are removed); whitespace inside "(...)" stays in the token; '#' at the
// start of a token starts a comment.
absl::StatusOr<std::vector<Token>> Tokenize(const LogicalLine& line, std::string_view filename) {
  std::vector<Token> tokens;
  const std::string& s = line.text;
  size_t i = 0;
  while (i < s.size()) {
    if (IsSpace(s[i])) {
      ++i;
      continue;
    }
    if (s[i] == '#') break;
    size_t start = i;
    Token token;
    token.line = line.LineAt(start);
    bool quoted = false;
    int depth = 0;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (c == '"') {
        quoted = !quoted;
        continue;
      }
      if (!quoted) {
        if (depth == 0 && IsSpace(c)) break;
        if (c == '(') ++depth;
        if (c == ')' && --depth < 0) break;
      }
      token.text.push_back(c);
    }
    std::string_view raw(s.data() + start, i - start);
    if (quoted) {
      return LineError(filename, token.line, Cat("unterminated quote in '", raw, "'"));
    }
    if (depth != 0) {
      if (depth < 0) raw = std::string_view(s.data() + start, i - start + 1);
      return LineError(filename, token.line,
                       Cat("unbalanced parentheses in '", text::Trim(raw), "'"));
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

// ---------------------------------------------------------------------------
// Client specifications.

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

bool AllDigitsAndDots(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  }
  return true;
}

void MaskAddress(IpAddress* a, int prefix_len) {
  int bytes = a->BitLength() / 8;
  for (int i = 0; i < bytes; ++i) {
    int keep = prefix_len - i * 8;
    if (keep >= 8) continue;
    a->bytes[i] &= keep <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - keep));
  }
}

// Converts a dotted IPv4 netmask to a prefix length; -1 if not contiguous.
int NetmaskToPrefix(const IpAddress& mask) {
  uint32_t m = (uint32_t{mask.bytes[0]} << 24) | (uint32_t{mask.bytes[1]} << 16) |
               (uint32_t{mask.bytes[2]} << 8) | mask.bytes[3];
  int len = 0;
  while (len < 32 && (m & (0x80000000u >> len))) ++len;
  uint32_t expect = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  return m == expect ? len : -1;
}

std::string ParseNetwork(std::string_view spec, ExportClient* c) {
  size_t slash = spec.find('/');
  std::string_view addr_text = spec.substr(0, slash);
  std::string_view mask_text = spec.substr(slash + 1);
  std::optional<IpAddress> addr = IpAddress::Parse(addr_text);
  if (!addr) {
    return Cat("bad network '", spec, "': '", addr_text, "' is not an IP address");
  }
  bool written_as_v6 = addr_text.find(':') != std::string_view::npos;
  int max_len = written_as_v6 ? 128 : 32;
  int prefix = -1;
  uint32_t n = 0;
  if (text::ParseDecimal(mask_text, &n)) {
    if (n <= static_cast<uint32_t>(max_len)) prefix = static_cast<int>(n);
  } else if (!written_as_v6) {
    std::optional<IpAddress> mask = IpAddress::Parse(mask_text);
    if (mask && mask->family == AF_INET && mask_text.find(':') == std::string_view::npos) {
      prefix = NetmaskToPrefix(*mask);
    }
  }
  if (prefix < 0) {
    return Cat("bad network '", spec, "': bad prefix length or netmask '", mask_text, "'");
  }
  if (written_as_v6 && addr->family == AF_INET) {
    // "::ffff:10.0.0.0/104" is the IPv4 network 10.0.0.0/8.
    if (prefix < 96) {
      return Cat("bad network '", spec, "': an IPv4-mapped network needs a prefix of at least 96");
    }
    prefix -= 96;
  }
  MaskAddress(&*addr, prefix);
  c->kind = ExportClient::Kind::kNetwork;
  c->address = *addr;
  c->prefix_len = prefix;
  return "";
}

std::string ParseClientSpec(std::string_view spec, ExportClient* c) {
  c->spec = std::string(spec);
  if (spec == "*") {
    c->kind = ExportClient::Kind::kAnyone;
    return "";
  }
  if (spec[0] == '@') {
    if (spec.size() == 1) return "empty netgroup name '@'";
    c->kind = ExportClient::Kind::kNetgroup;
    c->name = std::string(spec.substr(1));
    return "";
  }
  if (text::Lower(spec).rfind("gss/", 0) == 0) {
    return Cat("client '", spec, "' is the old spelling of sec=", spec.substr(4),
               "; write sec=", spec.substr(4), " in the options instead");
  }
  if (spec.find('/') != std::string_view::npos) return ParseNetwork(spec, c);
  if (std::optional<IpAddress> a = IpAddress::Parse(spec)) {
    c->kind = ExportClient::Kind::kAddress;
    c->address = *a;
    c->prefix_len = a->BitLength();
    return "";
  }
  bool wildcard = false;
  bool in_class = false;
  for (char ch : spec) {
    if (ch == '*' || ch == '?' || ch == '[') {
      wildcard = true;
      in_class = in_class || ch == '[';
    } else if (in_class && (ch == ']' || ch == '!' || ch == '^')) {
      in_class = ch != ']';
    } else if (!IsHostChar(ch)) {
      return Cat("bad client '", spec, "': not an address, network or name");
    }
  }
  if (!wildcard && AllDigitsAndDots(spec)) {
    return Cat("bad client '", spec, "': not a valid IP address");
  }
  c->kind = wildcard ? ExportClient::Kind::kWildcard : ExportClient::Kind::kHost;
  c->name = text::Lower(spec);
  while (!c->name.empty() && c->name.back() == '.') c->name.pop_back();
  if (in_class) return Cat("bad client '", spec, "': unclosed '['");
  return "";
}

// Matches one "[...]" class (ranges "a-z", negation "!" or "^") at pattern[p]
// against ch; *next is the position after ']'.
bool ClassMatch(std::string_view pattern, size_t p, char ch, size_t* next) {
  size_t i = p + 1;
  bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negate) ++i;
  bool hit = false;
  for (bool first = true; i < pattern.size() && (first || pattern[i] != ']'); first = false) {
    char lo = pattern[i];
    char hi = lo;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hi = pattern[i + 2];
      i += 3;
    } else {
      ++i;
    }
    hit = hit || (ch >= lo && ch <= hi);
  }
  *next = i < pattern.size() ? i + 1 : i;
  return hit != negate;
}

// Shell-style match of '*', '?' and "[...]" (all may match dots), on
// lower-case text.
bool GlobMatch(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0;
  size_t star = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    size_t after_class = 0;
    if (p < pattern.size() && pattern[p] == '[' && ClassMatch(pattern, p, name[n], &after_class)) {
      p = after_class;
      ++n;
    } else if (p < pattern.size() && pattern[p] != '[' &&
               (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_n = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool PrefixMatches(const IpAddress& net, int prefix_len, const IpAddress& peer) {
  if (net.family != peer.family) return false;
  int full = prefix_len / 8;
  if (std::memcmp(net.bytes.data(), peer.bytes.data(), full) != 0) return false;
  int rest = prefix_len % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (net.bytes[full] & mask) == (peer.bytes[full] & mask);
}

std::string NormalizeHostname(std::string_view name) {
  std::string n = text::Lower(name);
  while (!n.empty() && n.back() == '.') n.pop_back();
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.empty() || text.size() > INET6_ADDRSTRLEN) return std::nullopt;
  std::string s(text);
  IpAddress a;
  in_addr v4;
  in6_addr v6;
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    a.family = AF_INET;
    std::memcpy(a.bytes.data(), &v4, 4);
    return a;
  }
  if (inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      a.family = AF_INET;
      std::memcpy(a.bytes.data(), v6.s6_addr + 12, 4);
    } else {
      a.family = AF_INET6;
      std::memcpy(a.bytes.data(), v6.s6_addr, 16);
    }
    return a;
  }
  return std::nullopt;
}

std::optional<IpAddress> IpAddress::FromSockaddr(const sockaddr* sa) {
  if (sa == nullptr) return std::nullopt;
  IpAddress a;
  if (sa->sa_family == AF_INET) {
    sockaddr_in sin;
    std::memcpy(&sin, sa, sizeof(sin));
    a.family = AF_INET;
    std::memcpy(a.bytes.data(), &sin.sin_addr, 4);
    return a;
  }
  if (sa->sa_family == AF_INET6) {
    sockaddr_in6 sin6;
    std::memcpy(&sin6, sa, sizeof(sin6));
    if (IN6_IS_ADDR_V4MAPPED(&sin6.sin6_addr)) {
      a.family = AF_INET;
      std::memcpy(a.bytes.data(), sin6.sin6_addr.s6_addr + 12, 4);
    } else {
      a.family = AF_INET6;
      std::memcpy(a.bytes.data(), sin6.sin6_addr.s6_addr, 16);
    }
    return a;
  }
  return std::nullopt;
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family != AF_INET && family != AF_INET6) return "?";
  inet_ntop(family, bytes.data(), buf, sizeof(buf));
  return buf;
}

SquashedIdentity ExportOptions::Squash(uint32_t uid, uint32_t gid,
                                       const std::vector<uint32_t>& gids) const {
  switch (squash) {
    case SquashMode::kAll:
      return SquashedIdentity{anonuid, anongid, {}};
    case SquashMode::kRoot: {
      SquashedIdentity id{uid == 0 ? anonuid : uid, gid == 0 ? anongid : gid, gids};
      for (uint32_t& g : id.gids) {
        if (g == 0) g = anongid;
      }
      return id;
    }
    case SquashMode::kNone:
      break;
  }
  return SquashedIdentity{uid, gid, gids};
}

bool ExportOptions::AllowsFlavor(uint32_t flavor) const {
  const std::string_view name = FlavorName(flavor);
  if (sec.empty()) return name == "sys" || name == "none";
  return std::find(sec.begin(), sec.end(), name) != sec.end();
}

int ExportClient::Priority() const {
  switch (kind) {
    case Kind::kHost:
    case Kind::kAddress:
      return 0;
    case Kind::kNetwork:
      return 1;
    case Kind::kWildcard:
      return 2;
    case Kind::kNetgroup:
      return 3;
    case Kind::kAnyone:
      return 4;
  }
  return 5;
}

bool ExportClient::Matches(const IpAddress& peer, std::string_view resolved_hostname) const {
  switch (kind) {
    case Kind::kAnyone:
      return true;
    case Kind::kAddress:
      return peer.family == address.family && peer.bytes == address.bytes;
    case Kind::kNetwork:
      return PrefixMatches(address, prefix_len, peer);
    case Kind::kHost:
      return !resolved_hostname.empty() && NormalizeHostname(resolved_hostname) == name;
    case Kind::kWildcard:
      return !resolved_hostname.empty() && GlobMatch(name, NormalizeHostname(resolved_hostname));
    case Kind::kNetgroup:
      // The host part of the members, through NSS (files, NIS, LDAP).
      return !resolved_hostname.empty() &&
             innetgr(name.c_str(), NormalizeHostname(resolved_hostname).c_str(), nullptr,
                     nullptr) == 1;
  }
  return false;
}

const ExportClient* Export::Match(const IpAddress& peer, std::string_view resolved_hostname) const {
  const ExportClient* best = nullptr;
  for (const ExportClient& c : clients) {
    if (best != nullptr && c.Priority() >= best->Priority()) continue;
    if (c.Matches(peer, resolved_hostname)) best = &c;
  }
  return best;
}

const ExportClient* Export::Match(const sockaddr* peer, std::string_view resolved_hostname) const {
  std::optional<IpAddress> addr = IpAddress::FromSockaddr(peer);
  if (!addr) return nullptr;
  return Match(*addr, resolved_hostname);
}

bool Export::NeedsHostname() const {
  for (const ExportClient& c : clients) {
    if (c.kind == ExportClient::Kind::kHost || c.kind == ExportClient::Kind::kWildcard ||
        c.kind == ExportClient::Kind::kNetgroup) {
      return true;
    }
  }
  return false;
}

const Export* ExportTable::FindByPath(std::string_view path) const {
  std::optional<std::string> norm = NormalizeExportPath(path);
  if (!norm) return nullptr;
  for (const Export& e : exports) {
    if (e.path == *norm) return &e;
  }
  return nullptr;
}

const Export* ExportTable::FindById(uint32_t export_id) const {
  for (const Export& e : exports) {
    if (e.export_id == export_id) return &e;
  }
  return nullptr;
}

std::optional<std::string> NormalizeExportPath(std::string_view path) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  std::string out;
  for (std::string_view part : text::Split(path, '/')) {
    if (part.empty()) continue;
    if (part == "." || part == "..") return std::nullopt;
    if (part.find('\0') != std::string_view::npos) return std::nullopt;
    out.push_back('/');
    out.append(part);
  }
  if (out.empty()) out = "/";
  return out;
}

uint32_t HashExportPath(std::string_view normalized_path) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : normalized_path) {
    h ^= c;
    h *= 16777619u;
  }
  return h == 0 ? 1 : h;
}

namespace {

// The clients of an export line (tokens after the path): each with its
// options over the line's -defaults; `*` with the defaults when none is given.
absl::Status ParseClients(absl::Span<const Token> tokens, std::string_view filename,
                          const Token& path_token, Export* exp, ExportTable* table) {
  OptionState defaults;
  for (const Token& tok : tokens) {
    std::string_view t = tok.text;
    if (t[0] == '-') {
      if (std::string err = ApplyOptions(t.substr(1), &defaults); !err.empty()) {
        return LineError(filename, tok.line, err);
      }
      continue;
    }
    size_t open = t.find('(');
    std::string_view spec = t.substr(0, open);
    if (spec.empty()) {
      return LineError(filename, tok.line,
                       Cat("options '", t,
                           "' are not attached to a client (no space is "
                           "allowed between a client and its options)"));
    }
    OptionState opts = defaults;
    if (open != std::string_view::npos) {
      size_t close = t.find(')', open);
      if (close != t.size() - 1 || t.find('(', open + 1) != std::string_view::npos) {
        return LineError(filename, tok.line, Cat("malformed client options in '", t, "'"));
      }
      if (std::string err = ApplyOptions(t.substr(open + 1, close - open - 1), &opts);
          !err.empty()) {
        return LineError(filename, tok.line, err);
      }
    }
    ExportClient client;
    if (std::string err = ParseClientSpec(spec, &client); !err.empty()) {
      return LineError(filename, tok.line, err);
    }
    if (std::string err = FinishOptions(opts, &client.options); !err.empty()) {
      return LineError(filename, tok.line, err);
    }
    exp->clients.push_back(std::move(client));
  }
  if (exp->clients.empty()) {
    ExportClient anyone;
    anyone.spec = "*";
    anyone.kind = ExportClient::Kind::kAnyone;
    if (std::string err = FinishOptions(defaults, &anyone.options); !err.empty()) {
      return LineError(filename, path_token.line, err);
    }
    exp->clients.push_back(std::move(anyone));
    table->warnings.push_back(Cat(filename, ":", path_token.line, ": no client given for '",
                                  exp->path, "': exporting it to everyone (write '*' to say so)"));
  }
  return absl::OkStatus();
}

// One fsid= per export (the file system has one id), numeric or UUID; without
// one, the id is a hash of the path.
absl::Status SetExportId(std::string_view filename, int line, Export* exp) {
  std::optional<std::string> fsid;
  for (const ExportClient& c : exp->clients) {
    std::optional<std::string> mine =
        c.options.fsid ? std::optional<std::string>(Cat(*c.options.fsid)) : c.options.fsid_uuid;
    if (!mine) continue;
    if (fsid && *fsid != *mine) {
      return LineError(
          filename, line,
          Cat("conflicting fsid values ", *fsid, " and ", *mine, " for '", exp->path, "'"));
    }
    fsid = mine;
    exp->export_id = c.options.fsid ? *c.options.fsid : HashExportPath(Cat("uuid:", *mine));
  }
  if (!fsid) exp->export_id = HashExportPath(exp->path);
  return absl::OkStatus();
}

// cephfs=: the export's backend, so every client entry says the same.
absl::Status SetBackend(std::string_view filename, int line, Export* exp) {
  for (size_t i = 0; i < exp->clients.size(); ++i) {
    const ExportOptions& o = exp->clients[i].options;
    if (i == 0) {
      exp->cephfs_path = o.cephfs;
      exp->cephfs_user = o.cephfs_user;
      exp->cephfs_keyring = o.cephfs_keyring;
    }
    if (o.cephfs != exp->cephfs_path) {
      return LineError(filename, line,
                       Cat("cephfs= differs between the clients of '", exp->path,
                           "' (one export has one backend: use -cephfs=PATH)"));
    }
    if (o.cephfs_user != exp->cephfs_user || o.cephfs_keyring != exp->cephfs_keyring) {
      return LineError(filename, line,
                       Cat("cephfs_user=/cephfs_keyring= differ between the clients of '",
                           exp->path, "' (one export mounts as one user)"));
    }
    if (!o.cephfs && (!o.cephfs_user.empty() || !o.cephfs_keyring.empty())) {
      return LineError(filename, line,
                       Cat("'", exp->path, "': cephfs_user=/cephfs_keyring= need cephfs="));
    }
    if (o.cephfs && o.mountpoint) {
      return LineError(
          filename, line,
          Cat("'", exp->path, "': mountpoint applies to local directories, not cephfs="));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExportTable> ParseExports(std::string_view text, std::string_view filename) {
  ExportTable table;
  std::map<std::string, int> path_lines;
  std::map<uint32_t, std::pair<std::string, int>> id_owners;

  for (const LogicalLine& line : SplitLogicalLines(text)) {
    absl::StatusOr<std::vector<Token>> tokens = Tokenize(line, filename);
    if (!tokens.ok()) return tokens.status();
    if (tokens->empty()) continue;

    const Token& path_token = tokens->front();
    std::optional<std::string> path = NormalizeExportPath(path_token.text);
    if (!path) {
      return LineError(
          filename, path_token.line,
          Cat("export path '", path_token.text, "' must be absolute, without '.' or '..'"));
    }
    if (auto it = path_lines.find(*path); it != path_lines.end()) {
      return LineError(filename, path_token.line,
                       Cat("duplicate export '", *path, "' (first on line ", it->second, ")"));
    }
    path_lines[*path] = path_token.line;

    Export exp;
    exp.path = *path;
    if (absl::Status s = ParseClients(absl::MakeConstSpan(*tokens).subspan(1), filename, path_token,
                                      &exp, &table);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = SetExportId(filename, path_token.line, &exp); !s.ok()) return s;
    if (absl::Status s = SetBackend(filename, path_token.line, &exp); !s.ok()) return s;
    for (const ExportClient& c : exp.clients) {
      NoteOptions(c.options, Cat(filename, ":", path_token.line, ": ", exp.path, " ", c.spec),
                  &table.warnings);
    }
    if (auto it = id_owners.find(exp.export_id); it != id_owners.end()) {
      return LineError(
          filename, path_token.line,
          Cat("export id ", exp.export_id, " of '", exp.path, "' collides with '", it->second.first,
              "' (line ", it->second.second, "); give one of them a distinct fsid="));
    }
    id_owners[exp.export_id] = {exp.path, path_token.line};
    table.exports.push_back(std::move(exp));
  }
  return table;
}

std::string DescribeOptions(const ExportOptions& o) {
  std::string out = Cat(o.sync ? "sync" : "async", o.wdelay ? ",wdelay" : ",no_wdelay",
                        o.nohide ? ",nohide" : ",hide", o.crossmnt ? ",crossmnt" : "",
                        o.subtree_check ? ",subtree_check" : ",no_subtree_check",
                        o.auth_nlm ? "" : ",insecure_locks", o.readdirplus ? "" : ",nordirplus",
                        o.acl ? "" : ",no_acl");
  if (o.fsid) out += Cat(",fsid=", *o.fsid);
  if (o.fsid_uuid) out += Cat(",fsid=", *o.fsid_uuid);
  if (o.mountpoint)
    out += o.mountpoint->empty() ? ",mountpoint" : Cat(",mountpoint=", *o.mountpoint);
  if (o.cephfs) out += Cat(",cephfs=", *o.cephfs);
  if (!o.cephfs_user.empty()) out += Cat(",cephfs_user=", o.cephfs_user);
  if (!o.cephfs_keyring.empty()) out += Cat(",cephfs_keyring=", o.cephfs_keyring);
  if (o.anonuid != kNobodyId) out += Cat(",anonuid=", o.anonuid);
  if (o.anongid != kNobodyId) out += Cat(",anongid=", o.anongid);
  if (o.xprtsec != ExportOptions::kXprtsecAll) {
    std::string modes;
    for (auto [bit, name] : {std::pair{ExportOptions::kXprtsecNone, "none"},
                             std::pair{ExportOptions::kXprtsecTls, "tls"},
                             std::pair{ExportOptions::kXprtsecMtls, "mtls"}}) {
      if (o.xprtsec & bit) modes += Cat(modes.empty() ? "" : ":", name);
    }
    out += Cat(",xprtsec=", modes);
  }
  std::string sec;
  for (const std::string& f : o.sec) sec += Cat(sec.empty() ? "" : ":", f);
  out += Cat(",sec=", sec.empty() ? "sys" : sec, o.read_only ? ",ro" : ",rw",
             o.secure ? ",secure" : ",insecure",
             o.squash == ExportOptions::SquashMode::kNone ? ",no_root_squash" : ",root_squash",
             o.squash == ExportOptions::SquashMode::kAll ? ",all_squash" : ",no_all_squash");
  return out;
}

std::string DescribeExport(const Export& exp) {
  std::string out = Cat(exp.path, " [id ", exp.export_id, "]");
  for (const ExportClient& c : exp.clients) {
    out += Cat(" ", c.spec, "(", DescribeOptions(c.options), ")");
  }
  return out;
}

absl::StatusOr<ExportTable> LoadExports(const std::string& path) {
  absl::StatusOr<std::string> text = ReadConfigFile(path);
  if (!text.ok()) return text.status();
  return ParseExports(*text, path);
}

ExportTable MakeQuickExport(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  std::string abs = ec ? dir : p.lexically_normal().string();
  Export exp;
  exp.path = NormalizeExportPath(abs).value_or(abs);
  ExportClient anyone;
  anyone.spec = "*";
  anyone.kind = ExportClient::Kind::kAnyone;
  anyone.options.read_only = false;
  anyone.options.secure = false;
  exp.clients.push_back(std::move(anyone));
  exp.export_id = HashExportPath(exp.path);
  ExportTable table;
  table.exports.push_back(std::move(exp));
  return table;
}

}  // namespace nfs3d::conf
