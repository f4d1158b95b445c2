#include "vfs/vfs_error.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace nfs3d::vfs {
namespace {
constexpr std::string_view kErrnoPayload = "nfs3d/errno";
}  // namespace

absl::Status ErrnoError(int err, std::string_view context) {
  absl::Status status(
      err == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kUnknown,
      absl::StrCat(absl::string_view(context.data(), context.size()), ": errno ", err));
  status.SetPayload(absl::string_view(kErrnoPayload.data(), kErrnoPayload.size()),
                    absl::Cord(std::to_string(err)));
  return status;
}

int ErrnoOf(const absl::Status& status) {
  if (status.ok()) return 0;
  absl::optional<absl::Cord> payload =
      status.GetPayload(absl::string_view(kErrnoPayload.data(), kErrnoPayload.size()));
  int err = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &err) || err == 0) return EIO;
  return err;
}

}  // namespace nfs3d::vfs
