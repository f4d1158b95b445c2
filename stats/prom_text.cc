#include "stats/prom_text.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace nfs3d::stats {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

bool ParseValue(std::string_view text, double* out) {
  if (text == "+Inf") {
    *out = HUGE_VAL;
    return true;
  }
  if (text == "-Inf") {
    *out = -HUGE_VAL;
    return true;
  }
  std::string s(text);
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

// Parses `{k="v",...}` starting at line[*pos] == '{'.
bool ParseLabels(std::string_view line, size_t* pos, std::map<std::string, std::string>* labels) {
  size_t i = *pos + 1;
  for (;;) {
    while (i < line.size() && (line[i] == ' ' || line[i] == ',')) ++i;
    if (i >= line.size()) return false;
    if (line[i] == '}') {
      *pos = i + 1;
      return true;
    }
    size_t start = i;
    while (i < line.size() && IsNameChar(line[i])) ++i;
    std::string key(line.substr(start, i - start));
    if (key.empty() || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return false;
    i += 2;
    std::string value;
    while (i < line.size() && line[i] != '"') {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;
        value += line[i] == 'n' ? '\n' : line[i];
      } else {
        value += line[i];
      }
      ++i;
    }
    if (i >= line.size()) return false;
    ++i;  // closing quote
    (*labels)[key] = std::move(value);
  }
}

}  // namespace

absl::StatusOr<std::vector<Sample>> ParsePrometheusText(std::string_view text) {
  std::vector<Sample> out;
  int line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    size_t i = 0;
    while (i < line.size() && IsNameChar(line[i])) ++i;
    s.name = std::string(line.substr(0, i));
    if (s.name.empty() ||
        (i < line.size() && line[i] == '{' && !ParseLabels(line, &i, &s.labels))) {
      return absl::InvalidArgumentError(absl::StrCat("metrics line ", line_no, ": bad sample"));
    }
    while (i < line.size() && line[i] == ' ') ++i;
    size_t end = line.find(' ', i);
    if (!ParseValue(line.substr(i, end == std::string_view::npos ? end : end - i), &s.value)) {
      return absl::InvalidArgumentError(absl::StrCat("metrics line ", line_no, ": bad value"));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace nfs3d::stats
