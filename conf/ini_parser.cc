#include "conf/ini_parser.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d::conf {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
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
    if (!quoted && (c == '#' || c == ';') &&
        (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

}  // namespace

absl::Status LineError(std::string_view filename, int line,
                       std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s:%d: %s", filename, line, problem));
}

absl::StatusOr<std::vector<IniEntry>> ParseIni(std::string_view text,
                                               std::string_view filename) {
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
    std::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;

    if (line[0] == '[') {
      line = absl::StripAsciiWhitespace(StripTrailingComment(line));
      if (line.back() != ']') {
        return LineError(filename, line_no,
                         absl::StrCat("malformed section header '", line,
                                      "' (missing ']')"));
      }
      std::string_view name =
          absl::StripAsciiWhitespace(line.substr(1, line.size() - 2));
      if (!IsValidName(name)) {
        return LineError(filename, line_no,
                         absl::StrCat("invalid section name '", name, "'"));
      }
      section = absl::AsciiStrToLower(name);
      continue;
    }

    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return LineError(filename, line_no,
                       absl::StrCat("expected 'key = value', got '", line, "'"));
    }
    std::string_view key = absl::StripAsciiWhitespace(line.substr(0, eq));
    std::string_view value = absl::StripAsciiWhitespace(
        StripTrailingComment(line.substr(eq + 1)));
    if (!IsValidName(key)) {
      return LineError(filename, line_no,
                       absl::StrCat("invalid key name '", key, "'"));
    }
    if (section.empty()) {
      return LineError(filename, line_no,
                       absl::StrCat("key '", key,
                                    "' appears before any [section] header"));
    }
    if (!value.empty() && value.front() == '"') {
      if (value.size() < 2 || value.back() != '"') {
        return LineError(filename, line_no,
                         absl::StrCat("unterminated quoted value for key '",
                                      key, "'"));
      }
      value = value.substr(1, value.size() - 2);
    }
    entries.push_back(IniEntry{section, absl::AsciiStrToLower(key),
                               std::string(value), line_no});
  }
  return entries;
}

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = absl::StrCat(path, ": ", std::strerror(err));
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
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    // Config files are small; refuse something absurd rather than eat memory.
    if (data.size() > (16u << 20)) {
      close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": file too large for a config file"));
    }
  }
  close(fd);
  return data;
}

}  // namespace nfs3d::conf
