// The open TCP connections of a running nfs3d and their RPC-with-TLS state,
// as the control socket serves them (GET /connections, root only: they name
// client addresses and certificate subjects) and nfs3stat --clients and
// nfs3top read them back. One connection a line, seven tab-separated
// fields, "-" for an empty one:
//   client  port  security  version  cipher  records  subject
//   10.0.0.7  812  mtls  TLS1.3  AES-256-GCM  kernel  CN=host7.example.org
// security is none, tls or mtls (exports(5)'s xprtsec=); records is kernel
// (kTLS) or user (the user-space relay). A field never holds a tab, a
// newline or another control character: both ends replace them.
#ifndef NFS3D_STATS_CONNECTIONS_TEXT_H_
#define NFS3D_STATS_CONNECTIONS_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nfs3d::stats {

struct ConnectionRow {
  std::string client;  // as the nfs3d_client_* label: "192.0.2.7", "2001:db8::1"
  uint16_t port = 0;
  std::string security = "none";
  std::string version;
  std::string cipher;
  std::string records;
  std::string subject;  // mTLS only
};

// At most this many bytes of a field are kept. nfs3d escapes at most 256
// bytes of a subject (at most 4 x 256 + 3 then), so only a hostile page
// reaches the limit.
inline constexpr size_t kConnectionFieldLimit = 1536;

std::string FormatConnections(const std::vector<ConnectionRow>& rows);
// Lines that do not have seven fields are skipped.
std::vector<ConnectionRow> ParseConnections(std::string_view text);

// `text` with every byte outside printable ASCII as '?', cut to `limit`:
// what reaches a terminal or a line-based format.
std::string PrintableField(std::string_view text, size_t limit = kConnectionFieldLimit);

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_CONNECTIONS_TEXT_H_
