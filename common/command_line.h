// Command lines in the style of Unix tools: long options (--state-dir, also
// spelled --state_dir), an optional one-letter alias (-i), values given as
// "--opt VALUE" or "--opt=VALUE", and a usage text made from the same table
// that parses them. A mistake is one line of text for the caller to print
// before exiting with status 2.
#ifndef NFS3D_COMMON_COMMAND_LINE_H_
#define NFS3D_COMMON_COMMAND_LINE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace nfs3d::cli {

struct Option {
  absl::string_view name;   // long name without "--", words joined by '-'
  char letter;              // one-letter alias, or 0
  absl::string_view value;  // what the value is called in the usage ("FILE"); "" = a switch
  absl::string_view help;   // one line
  // Stores the value (a switch gets ""); an error says what is wrong with it.
  std::function<absl::Status(absl::string_view value)> set;
};

// Setters for the usual kinds of value.
std::function<absl::Status(absl::string_view)> Store(std::string* out);
std::function<absl::Status(absl::string_view)> StoreInt(int* out, int min, int max);
std::function<absl::Status(absl::string_view)> StoreDouble(double* out, double min);
std::function<absl::Status(absl::string_view)> SetTrue(bool* out);

// Applies argv[1..] to the options; returns the arguments that are not
// options (everything after "--" included), or the first mistake as
// "unknown option --foo", "--port: 'x' is not a number", ...
absl::StatusOr<std::vector<std::string>> Parse(int argc, char** argv,
                                               absl::Span<const Option> options);

// "usage: SYNOPSIS\n" then one aligned line per option.
std::string Usage(absl::string_view synopsis, absl::Span<const Option> options);

// The front end of a tool that takes options only: parses argv, and answers
// --help (`help` set by the table) and --version (`version`, printed as
// `version_text`). Returns the exit status when the tool should stop
// there (2 after a mistake, said on stderr; 0 after help or version), or
// nullopt when it should run.
std::optional<int> ParseToolOptions(absl::string_view tool, int argc, char** argv,
                                    absl::string_view synopsis, absl::Span<const Option> options,
                                    const bool& help, const bool& version,
                                    absl::string_view version_text);

}  // namespace nfs3d::cli

#endif  // NFS3D_COMMON_COMMAND_LINE_H_
