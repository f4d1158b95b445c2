// When the [tls] certificates stop (or start) being valid: their dates, read
// from the PEM files, and what an operator must be told about them -- a
// warning when one expires within kExpiryWarning, an error when one has
// expired or is not valid yet. A certificate that lapses unnoticed ends
// every new TLS handshake; the daemon checks at load, on every reload and
// periodically (daemon/certificate_watch.h).
#ifndef NFS3D_RPC_TLS_CERTIFICATE_DATES_H_
#define NFS3D_RPC_TLS_CERTIFICATE_DATES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nfs3d::rpc::tls {

inline constexpr absl::Duration kExpiryWarning = absl::Hours(30 * 24);

struct CertificateDates {
  std::string subject;  // escaped and bounded: it goes into log lines
  absl::Time not_before;
  absl::Time not_after;
};

// The certificates of one [tls] file, in file order.
struct CertificateFile {
  std::string role;  // "server" or "ca": the metrics' label value
  std::string path;
  std::vector<CertificateDates> certificates;

  // Over the file: a chain is valid only while all of its certificates are.
  absl::Time EarliestNotAfter() const;
  absl::Time LatestNotBefore() const;
};

// Every certificate in a PEM file; an error names the file and the reason.
absl::StatusOr<std::vector<CertificateDates>> ReadCertificateDates(const std::string& path);

enum class Validity : uint8_t { kValid, kExpiresSoon, kExpired, kNotYetValid };
Validity CheckValidity(const CertificateDates& dates, absl::Time now);

struct ValidityNote {
  bool error = false;  // else a warning
  std::string text;
};
// One note per certificate of `file` that is not kValid at `now`, e.g.
// "tls: server certificate CN=nfs (/etc/nfs3d/tls/server.pem) expires on
// 2026-12-20 10:00:00 UTC, in 15 days".
std::vector<ValidityNote> CheckFile(const CertificateFile& file, absl::Time now);

// A subject (or any peer-supplied text) for a log line or a terminal:
// control characters, quotes and backslashes escaped, at most `limit` bytes
// of it, "..." when cut.
std::string PrintableSubject(std::string_view text, size_t limit = 256);

}  // namespace nfs3d::rpc::tls

#endif  // NFS3D_RPC_TLS_CERTIFICATE_DATES_H_
