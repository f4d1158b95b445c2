// Edits of an exports file's text, as `nfs3d exports add|remove` make them
// (exportfs(8) edits the kernel's table; nfs3d's table is the file, so the
// edits are made to the file and every server following it applies them).
// Whole logical lines (backslash continuations joined) are replaced, added
// or removed; comments, blank lines and the order of the rest are kept.
#ifndef NFS3D_CONF_EXPORTS_EDIT_H_
#define NFS3D_CONF_EXPORTS_EDIT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace nfs3d::conf {

// `text` with the export of `line`'s path replaced by `line`, or with `line`
// appended when that path is not exported yet. InvalidArgument when `line`
// is not one valid export line, or when the result would not parse (e.g. an
// export id that collides with another export's).
absl::StatusOr<std::string> AddExportLine(std::string_view text, std::string_view line);

// `text` without the line exporting `path`. NotFound when none does.
absl::StatusOr<std::string> RemoveExportLine(std::string_view text, std::string_view path);

// The marker of the line that says who made the last change.
inline constexpr std::string_view kChangeMarker = "# last change: ";

// `text` with its first line saying who made the last change and what it
// was ("root@head1 at 2026-12-03T14:00:00Z: add /srv/x ..."): a server that
// applies the file logs it. An older such line is replaced.
std::string StampChange(std::string_view text, std::string_view change);

// What the file's change line says; "" when it has none.
std::string ChangeOf(std::string_view text);

}  // namespace nfs3d::conf

#endif  // NFS3D_CONF_EXPORTS_EDIT_H_
