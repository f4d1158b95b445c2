// The options of one client of an export line ("rw,sec=krb5p,anonuid=65534")
// as exports(5) and nfs-utils read them: the state a line builds up while
// its option lists are applied, and what the parser (exports.cc) needs to
// apply and finish them. Internal to conf/.
#ifndef NFS3D_CONF_EXPORT_OPTIONS_H_
#define NFS3D_CONF_EXPORT_OPTIONS_H_

#include <string>
#include <string_view>
#include <vector>

#include "conf/exports.h"

namespace nfs3d::conf::internal {

// root_squash and all_squash are independent switches in exports(5)
// ("no_root_squash,all_squash" squashes everyone), so track both while
// parsing and fold them into ExportOptions::squash at the end.
struct OptionState {
  ExportOptions options;
  bool root_squash = true;
  bool all_squash = false;
  // In nfs-utils the per-flavor options (ro/rw, the squash family,
  // secure/insecure) that follow a sec= list apply to the flavors in that
  // list. nfs3d keeps one set per client: after a second list they can only
  // narrow it (ro, squash, secure win), so no flavor gets more than its
  // line gave it; a note says when that narrowed a flavor.
  int sec_lists = 0;
  // squash_uids=/squash_gids= (legacy, ignored by the kernel too) take
  // comma-separated lists: bare numbers after them belong to them.
  bool in_squash_list = false;

  ExportOptions Finish() const {
    ExportOptions o = options;
    o.squash = all_squash    ? ExportOptions::SquashMode::kAll
               : root_squash ? ExportOptions::SquashMode::kRoot
                             : ExportOptions::SquashMode::kNone;
    return o;
  }
};

// Applies a comma-separated option list; returns the problem or "".
std::string ApplyOptions(std::string_view list, OptionState* st);

// A client's options as the line left them.
std::string FinishOptions(const OptionState& st, ExportOptions* out);

// Non-fatal remarks about one client's options, for the log.
void NoteOptions(const ExportOptions& o, std::string_view where, std::vector<std::string>* notes);

}  // namespace nfs3d::conf::internal

#endif  // NFS3D_CONF_EXPORT_OPTIONS_H_
