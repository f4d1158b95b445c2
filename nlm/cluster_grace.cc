#include "nlm/cluster_grace.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace nfs3d::nlm {
namespace {

constexpr absl::string_view kPrefix = "grace.";

}  // namespace

absl::Status RecordGraceEnd(DurableFiles& shared, const std::string& node_id, absl::Duration left,
                            absl::Time now) {
  const int64_t seconds =
      left <= absl::ZeroDuration()
          ? 0
          : absl::ToUnixSeconds(now + left + absl::Seconds(1) - absl::Nanoseconds(1));
  return shared.Write(absl::StrCat(kPrefix, node_id), absl::StrCat(seconds, "\n"));
}

absl::StatusOr<absl::Time> LatestGraceEnd(DurableFiles& shared) {
  absl::StatusOr<std::map<std::string, std::string>> files = shared.ReadAll(std::string(kPrefix));
  if (!files.ok()) return files.status();
  absl::Time latest = absl::InfinitePast();
  for (const auto& [name, text] : *files) {
    int64_t seconds = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &seconds)) {
      return absl::DataLossError(absl::StrCat(shared.where(), "/", name, " does not hold a time"));
    }
    latest = std::max(latest, absl::FromUnixSeconds(seconds));
  }
  return latest;
}

}  // namespace nfs3d::nlm
