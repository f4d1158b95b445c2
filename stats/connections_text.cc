#include "stats/connections_text.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace nfs3d::stats {

namespace {

std::string Field(const std::string& value) { return value.empty() ? "-" : PrintableField(value); }

std::string Unfield(absl::string_view value) {
  return value == "-" ? "" : PrintableField(std::string_view(value.data(), value.size()));
}

}  // namespace

std::string PrintableField(std::string_view text, size_t limit) {
  std::string out(text.substr(0, limit));
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return out;
}

std::string FormatConnections(const std::vector<ConnectionRow>& rows) {
  std::string out;
  for (const ConnectionRow& r : rows) {
    absl::StrAppend(&out, Field(r.client), "\t", r.port, "\t", Field(r.security), "\t",
                    Field(r.version), "\t", Field(r.cipher), "\t", Field(r.records), "\t",
                    Field(r.subject), "\n");
  }
  return out;
}

std::vector<ConnectionRow> ParseConnections(std::string_view text) {
  std::vector<ConnectionRow> rows;
  const absl::string_view all(text.data(), text.size());
  for (absl::string_view line : absl::StrSplit(all, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
    uint32_t port = 0;
    if (f.size() != 7 || !absl::SimpleAtoi(f[1], &port) || port > 65535) continue;
    rows.push_back({Unfield(f[0]), static_cast<uint16_t>(port), Unfield(f[2]), Unfield(f[3]),
                    Unfield(f[4]), Unfield(f[5]), Unfield(f[6])});
  }
  return rows;
}

}  // namespace nfs3d::stats
