#include "conf/ini_parser.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace nfs3d::conf {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

bool IsValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

// Cuts a trailing comment: '#' or ';' that follows whitespace, outside quotes.
std::string_view StripTrailingComment(std::string_view s) {
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '#' || c == ';') && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

}  // namespace

namespace text {

std::string_view Trim(std::string_view s) {
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n' ||
                          s[b] == '\f' || s[b] == '\v')) {
    ++b;
  }
  size_t e = s.size();
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n' ||
                   s[e - 1] == '\f' || s[e - 1] == '\v')) {
    --e;
  }
  return s.substr(b, e - b);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, p - start));
    start = p + 1;
  }
}

}  // namespace text

absl::Status LineError(std::string_view filename, int line, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", filename, line, problem));
}

absl::StatusOr<std::vector<IniEntry>> ParseIni(std::string_view text, std::string_view filename) {
  std::vector<IniEntry> entries;
  std::string section;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string_view line = text::Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;

    if (line[0] == '[') {
      line = text::Trim(StripTrailingComment(line));
      if (line.back() != ']') {
        return LineError(filename, line_no,
                         text::Cat("malformed section header '", line, "' (missing ']')"));
      }
      std::string_view name = text::Trim(line.substr(1, line.size() - 2));
      if (!IsValidName(name)) {
        return LineError(filename, line_no, text::Cat("invalid section name '", name, "'"));
      }
      section = text::Lower(name);
      continue;
    }

    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return LineError(filename, line_no, text::Cat("expected 'key = value', got '", line, "'"));
    }
    std::string_view key = text::Trim(line.substr(0, eq));
    std::string_view value = text::Trim(StripTrailingComment(line.substr(eq + 1)));
    if (!IsValidName(key)) {
      return LineError(filename, line_no, text::Cat("invalid key name '", key, "'"));
    }
    if (section.empty()) {
      return LineError(filename, line_no,
                       text::Cat("key '", key, "' appears before any [section] header"));
    }
    if (!value.empty() && value.front() == '"') {
      if (value.size() < 2 || value.back() != '"') {
        return LineError(filename, line_no,
                         text::Cat("unterminated quoted value for key '", key, "'"));
      }
      value = value.substr(1, value.size() - 2);
    }
    entries.push_back(IniEntry{section, text::Lower(key), std::string(value), line_no});
  }
  return entries;
}

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = text::Cat(path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    return absl::FailedPreconditionError(msg);
  }
  std::string data;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return absl::FailedPreconditionError(text::Cat(path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    // Config files are small; refuse something absurd rather than eat memory.
    if (data.size() > (16u << 20)) {
      close(fd);
      return absl::FailedPreconditionError(text::Cat(path, ": file too large for a config file"));
    }
  }
  close(fd);
  return data;
}

}  // namespace nfs3d::conf
