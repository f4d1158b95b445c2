// A small INI tokenizer in the style of nfs-utils' nfs.conf: "[section]"
// headers, "key = value" lines, whole-line comments starting with '#' or ';'
// and trailing comments after whitespace. It only splits text into entries;
// the loaders decide which sections and keys exist. Shared helpers for
// "FILE:LINE: problem" errors and for reading a config file live here too.
#ifndef NFS3D_CONF_INI_PARSER_H_
#define NFS3D_CONF_INI_PARSER_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nfs3d::conf {

struct IniEntry {
  std::string section;  // lower-cased; entries before any header are an error
  std::string key;      // lower-cased
  std::string value;    // surrounding whitespace and quotes removed
  int line = 0;         // 1-based line number of the key
};

// Splits `text` into entries, in file order. Section and key names are
// case-insensitive (as in nfs.conf) and returned in lower case. A value may be
// wrapped in double quotes to keep leading/trailing spaces or a '#'. Errors
// name `filename` and the line.
absl::StatusOr<std::vector<IniEntry>> ParseIni(std::string_view text, std::string_view filename);

// absl::InvalidArgumentError("FILE:LINE: problem").
absl::Status LineError(std::string_view filename, int line, std::string_view problem);

// Reads a whole (small) config file. NotFound if it does not exist, other
// errors carry strerror text and the path.
absl::StatusOr<std::string> ReadConfigFile(const std::string& path);

// std::string_view helpers for the loaders. Debian's abseil is built with its
// own absl::string_view, so absl's StrCat/StripAsciiWhitespace/SimpleAtoi do
// not take std::string_view; these small ones do.
namespace text {

std::string_view Trim(std::string_view s);
std::string Lower(std::string_view s);
// Splits on `sep`, keeping empty pieces.
std::vector<std::string_view> Split(std::string_view s, char sep);

// Parses a whole string of decimal digits (no sign, no spaces) into `out`.
template <typename T>
bool ParseDecimal(std::string_view s, T* out) {
  static_assert(std::is_unsigned_v<T>);
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

inline void AppendPiece(std::string* out, std::string_view s) { out->append(s); }
inline void AppendPiece(std::string* out, const char* s) { out->append(s); }
inline void AppendPiece(std::string* out, const std::string& s) { out->append(s); }
inline void AppendPiece(std::string* out, char c) { out->push_back(c); }
template <typename T,
          typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char>>>
void AppendPiece(std::string* out, T n) {
  out->append(std::to_string(n));
}

template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (AppendPiece(&out, args), ...);
  return out;
}

}  // namespace text
}  // namespace nfs3d::conf

#endif  // NFS3D_CONF_INI_PARSER_H_
