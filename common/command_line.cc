#include "common/command_line.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace nfs3d::cli {
namespace {

const Option* FindLong(absl::Span<const Option> options, absl::string_view name) {
  const std::string dashed = absl::StrReplaceAll(name, {{"_", "-"}});
  for (const Option& o : options) {
    if (o.name == dashed) return &o;
  }
  return nullptr;
}

const Option* FindLetter(absl::Span<const Option> options, char letter) {
  for (const Option& o : options) {
    if (o.letter != 0 && o.letter == letter) return &o;
  }
  return nullptr;
}

std::string Spelling(const Option& o) {
  std::string s = o.letter != 0 ? absl::StrCat("-", std::string(1, o.letter), ", ") : "    ";
  absl::StrAppend(&s, "--", o.name);
  if (!o.value.empty()) absl::StrAppend(&s, " ", o.value);
  return s;
}

}  // namespace

std::function<absl::Status(absl::string_view)> Store(std::string* out) {
  return [out](absl::string_view v) {
    *out = std::string(v);
    return absl::OkStatus();
  };
}

std::function<absl::Status(absl::string_view)> StoreInt(int* out, int min, int max) {
  return [out, min, max](absl::string_view v) {
    int n = 0;
    if (!absl::SimpleAtoi(v, &n) || n < min || n > max) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", v, "' is not a whole number from ", min, " to ", max));
    }
    *out = n;
    return absl::OkStatus();
  };
}

std::function<absl::Status(absl::string_view)> StoreDouble(double* out, double min) {
  return [out, min](absl::string_view v) {
    double d = 0;
    if (!absl::SimpleAtod(v, &d) || !(d >= min)) {
      return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a number >= ", min));
    }
    *out = d;
    return absl::OkStatus();
  };
}

std::function<absl::Status(absl::string_view)> SetTrue(bool* out) {
  return [out](absl::string_view) {
    *out = true;
    return absl::OkStatus();
  };
}

absl::StatusOr<std::vector<std::string>> Parse(int argc, char** argv,
                                               absl::Span<const Option> options) {
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") {
      rest.insert(rest.end(), argv + i + 1, argv + argc);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      rest.emplace_back(arg);
      continue;
    }
    const Option* option = nullptr;
    absl::string_view value;
    bool inline_value = false;
    if (arg[1] == '-') {
      absl::string_view name = arg.substr(2);
      if (size_t eq = name.find('='); eq != absl::string_view::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      option = FindLong(options, name);
    } else if (arg.size() == 2) {
      option = FindLetter(options, arg[1]);
    }
    if (option == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown option ", arg));
    const std::string shown = absl::StrCat("--", option->name);
    if (option->value.empty()) {
      if (inline_value) return absl::InvalidArgumentError(absl::StrCat(shown, " takes no value"));
    } else if (!inline_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat(shown, " needs a value (", option->value, ")"));
      }
      value = argv[++i];
    }
    if (absl::Status s = option->set(value); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(shown, ": ", s.message()));
    }
  }
  return rest;
}

std::string Usage(absl::string_view synopsis, absl::Span<const Option> options) {
  size_t width = 0;
  for (const Option& o : options) width = std::max(width, Spelling(o).size());
  std::string out = absl::StrCat("usage: ", synopsis, "\n");
  for (const Option& o : options) {
    std::string left = Spelling(o);
    absl::StrAppend(&out, "  ", left, std::string(width - left.size() + 2, ' '), o.help, "\n");
  }
  return out;
}

std::optional<int> ParseToolOptions(absl::string_view tool, int argc, char** argv,
                                    absl::string_view synopsis, absl::Span<const Option> options,
                                    const bool& help, const bool& version,
                                    absl::string_view version_text) {
  absl::StatusOr<std::vector<std::string>> rest = Parse(argc, argv, options);
  if (rest.ok() && !rest->empty()) {
    rest = absl::InvalidArgumentError("unexpected argument '" + rest->front() + "'");
  }
  const std::string name(tool);
  if (!rest.ok()) {
    std::fprintf(stderr, "%s: %s (%s --help lists the options)\n", name.c_str(),
                 std::string(rest.status().message()).c_str(), name.c_str());
    return 2;
  }
  if (help) {
    std::fputs(Usage(synopsis, options).c_str(), stdout);
    return 0;
  }
  if (version) {
    std::fputs(std::string(version_text).c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

}  // namespace nfs3d::cli
