// One frame of nfs3top: the activity of the last interval (rates, p50/p99)
// of the busiest clients, exports, users and procedures, laid out for a
// terminal of the given size. Pure: the terminal handling is in main.cc.
#ifndef NFS3D_TOOLS_NFS3TOP_SCREEN_H_
#define NFS3D_TOOLS_NFS3TOP_SCREEN_H_

#include <string>
#include <vector>

#include "stats/connections_text.h"
#include "tools/nfs3stat/connections.h"
#include "tools/nfs3stat/origins.h"
#include "tools/nfs3stat/view.h"

namespace nfs3d::nfs3top {

struct Sample {
  nfs3stat::StatView view;
  std::vector<nfs3stat::OriginView> clients, exports, users;
  // The open TCP connections (control socket only): a TLS column for the
  // clients and the 't' view.
  bool connections_known = false;
  std::vector<stats::ConnectionRow> connections;
};

struct Frame {
  std::string source;  // where the page came from
  double seconds = 0;  // measured interval; 0: first frame (totals since start)
  double delay = 2;    // the refresh interval asked for (shown)
  nfs3stat::SortKey sort = nfs3stat::SortKey::kCalls;
  bool show_users = false;  // 'u' toggles users in place of exports
  // 't' toggles the TCP connections and their TLS state in place of both.
  bool show_connections = false;
  int rows = 24;
  int columns = 80;
  std::string clock;  // "14:03:59"
};

// `delta` is after - before (or the totals for the first frame). Lines end
// in "\n" and are cut to frame.columns.
std::string Render(const Sample& delta, const Frame& frame);
const char* SortName(nfs3stat::SortKey key);

// Sample subtraction for rates (connections are after's).
Sample Subtract(const Sample& after, const Sample& before);

}  // namespace nfs3d::nfs3top

#endif  // NFS3D_TOOLS_NFS3TOP_SCREEN_H_
