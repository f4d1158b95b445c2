// nfs3stat's two outputs: totals in the layout of `nfsstat -s`, and one
// line of rates per interval (-i) for watching a run.
#ifndef NFS3D_TOOLS_NFS3STAT_PRINT_H_
#define NFS3D_TOOLS_NFS3STAT_PRINT_H_

#include <string>

#include "tools/nfs3stat/view.h"

namespace nfs3d::nfs3stat {

std::string FormatTotals(const StatView& view);
std::string FormatIntervalHeader();
// delta = activity during `seconds`; now = the latest totals (gauges).
std::string FormatIntervalLine(const StatView& delta, double seconds);

}  // namespace nfs3d::nfs3stat

#endif  // NFS3D_TOOLS_NFS3STAT_PRINT_H_
