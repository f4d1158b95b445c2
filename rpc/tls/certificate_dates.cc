#include "rpc/tls/certificate_dates.h"

#include <gnutls/gnutls.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include <gnutls/x509.h>

namespace nfs3d::rpc::tls {

namespace {

std::string SubjectOf(gnutls_x509_crt_t crt) {
  gnutls_datum_t dn{};
  if (gnutls_x509_crt_get_dn3(crt, &dn, 0) < 0) return "(no subject)";
  std::string subject =
      PrintableSubject(std::string_view(reinterpret_cast<const char*>(dn.data), dn.size));
  gnutls_free(dn.data);
  return subject;
}

std::string Date(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

// What a lapsed certificate breaks.
std::string Consequence(const std::string& role) {
  return role == "ca" ? "client certificates it issued do not verify (mtls)"
                      : "TLS clients refuse it";
}

std::string Left(absl::Duration d) {
  const int64_t days = absl::ToInt64Hours(d) / 24;
  if (days >= 2) return absl::StrCat(days, " days");
  return days == 1 ? "1 day" : "less than a day";
}

}  // namespace

std::string PrintableSubject(std::string_view text, size_t limit) {
  const absl::string_view kept = absl::string_view(text.data(), text.size()).substr(0, limit);
  return absl::StrCat(absl::CHexEscape(kept), text.size() > limit ? "..." : "");
}

absl::Time CertificateFile::EarliestNotAfter() const {
  absl::Time t = absl::InfiniteFuture();
  for (const CertificateDates& c : certificates) t = std::min(t, c.not_after);
  return t;
}

absl::Time CertificateFile::LatestNotBefore() const {
  absl::Time t = absl::InfinitePast();
  for (const CertificateDates& c : certificates) t = std::max(t, c.not_before);
  return t;
}

absl::StatusOr<std::vector<CertificateDates>> ReadCertificateDates(const std::string& path) {
  gnutls_datum_t pem{};
  if (int rc = gnutls_load_file(path.c_str(), &pem); rc < 0) {
    return absl::InvalidArgumentError(absl::StrCat("tls: ", path, ": ", gnutls_strerror(rc)));
  }
  gnutls_x509_crt_t* list = nullptr;
  unsigned int count = 0;
  const int rc = gnutls_x509_crt_list_import2(&list, &count, &pem, GNUTLS_X509_FMT_PEM, 0);
  gnutls_free(pem.data);
  if (rc < 0) {
    return absl::InvalidArgumentError(absl::StrCat("tls: ", path, ": ", gnutls_strerror(rc)));
  }
  std::vector<CertificateDates> out;
  for (unsigned int i = 0; i < count; ++i) {
    out.push_back({SubjectOf(list[i]),
                   absl::FromTimeT(gnutls_x509_crt_get_activation_time(list[i])),
                   absl::FromTimeT(gnutls_x509_crt_get_expiration_time(list[i]))});
    gnutls_x509_crt_deinit(list[i]);
  }
  gnutls_free(list);
  if (out.empty())
    return absl::InvalidArgumentError(absl::StrCat("tls: ", path, ": no certificate"));
  return out;
}

Validity CheckValidity(const CertificateDates& dates, absl::Time now) {
  if (now < dates.not_before) return Validity::kNotYetValid;
  if (now >= dates.not_after) return Validity::kExpired;
  if (dates.not_after - now <= kExpiryWarning) return Validity::kExpiresSoon;
  return Validity::kValid;
}

std::vector<ValidityNote> CheckFile(const CertificateFile& file, absl::Time now) {
  std::vector<ValidityNote> notes;
  for (const CertificateDates& c : file.certificates) {
    const std::string which =
        absl::StrCat("tls: ", file.role, " certificate ", c.subject, " (", file.path, ")");
    switch (CheckValidity(c, now)) {
      case Validity::kValid:
        break;
      case Validity::kExpiresSoon:
        notes.push_back({false, absl::StrCat(which, " expires on ", Date(c.not_after), ", in ",
                                             Left(c.not_after - now))});
        break;
      case Validity::kExpired:
        notes.push_back({true, absl::StrCat(which, " expired on ", Date(c.not_after), ": ",
                                            Consequence(file.role))});
        break;
      case Validity::kNotYetValid:
        notes.push_back({true, absl::StrCat(which, " is not valid before ", Date(c.not_before),
                                            ": ", Consequence(file.role))});
        break;
    }
  }
  return notes;
}

}  // namespace nfs3d::rpc::tls
