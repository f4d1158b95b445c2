// nfs3bench's command line: a subcommand, an optional HOST:/export target and
// --flags. Lists are comma separated ("8k,16k,64k,1m").
#ifndef NFS3D_TOOLS_NFS3BENCH_OPTIONS_H_
#define NFS3D_TOOLS_NFS3BENCH_OPTIONS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nfs3d::bench {

struct CommandLine {
  std::string command;  // run, sweep, lab, pattern
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // name -> value ("" for switches)

  bool Has(const std::string& name) const { return flags.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& def = "") const {
    auto it = flags.find(name);
    return it == flags.end() ? def : it->second;
  }
};

// Flags that take no value.
bool IsSwitch(const std::string& name);
// Parses argv against the flags known for the command; unknown flags, missing
// values and stray arguments are errors (the caller prints usage, exit 2).
absl::StatusOr<CommandLine> ParseCommandLine(int argc, char** argv);
std::vector<std::string> SplitList(const std::string& text);
const char* UsageText();

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_OPTIONS_H_
