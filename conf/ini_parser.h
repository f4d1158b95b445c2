// A small INI tokenizer in the style of nfs-utils' nfs.conf: "[section]"
// headers, "key = value" lines, whole-line comments starting with '#' or ';'
// and trailing comments after whitespace. It only splits text into entries;
// the loaders decide which sections and keys exist. Shared helpers for
// "FILE:LINE: problem" errors and for reading a config file live here too.
#ifndef NFS3D_CONF_INI_PARSER_H_
#define NFS3D_CONF_INI_PARSER_H_

#include <string>
#include <string_view>
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
absl::StatusOr<std::vector<IniEntry>> ParseIni(std::string_view text,
                                               std::string_view filename);

// absl::InvalidArgumentError("FILE:LINE: problem").
absl::Status LineError(std::string_view filename, int line,
                       std::string_view problem);

// Reads a whole (small) config file. NotFound if it does not exist, other
// errors carry strerror text and the path.
absl::StatusOr<std::string> ReadConfigFile(const std::string& path);

}  // namespace nfs3d::conf

#endif  // NFS3D_CONF_INI_PARSER_H_
