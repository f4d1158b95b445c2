// The open TCP connections of nfs3d and their RPC-with-TLS state, from the
// control socket's GET /connections (stats/connections_text.h), as
// nfs3stat --clients and nfs3top show them: a per-client summary column
// and a table with one connection a line.
#ifndef NFS3D_TOOLS_NFS3STAT_CONNECTIONS_H_
#define NFS3D_TOOLS_NFS3STAT_CONNECTIONS_H_

#include <map>
#include <string>
#include <vector>

#include "stats/connections_text.h"

namespace nfs3d::nfs3stat {

// Client address -> the security of its open TCP connections: "none",
// "tls", "mtls", or a mix in that order ("none+mtls").
std::map<std::string, std::string> SecurityByClient(
    const std::vector<stats::ConnectionRow>& connections);

// Sorted by client and port; at most `limit` rows, then "... N more".
// Every field is printable ASCII (stats::PrintableField) and the subject
// is cut to what fits in `columns`.
std::string FormatConnectionTable(std::vector<stats::ConnectionRow> connections, size_t limit,
                                  int columns = 200);

}  // namespace nfs3d::nfs3stat

#endif  // NFS3D_TOOLS_NFS3STAT_CONNECTIONS_H_
