#include "rpc/tls/tls_credentials.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace nfs3d::rpc::tls {

namespace {
// NORMAL is GnuTLS's (and the system policy's) default set, narrowed to TLS
// 1.3 and to ciphers with a kTLS mode; CCM has none in tls12_crypto_info
// that Linux's NFS peers use, so it is left out rather than falling back to
// user-space records.
constexpr char kPriorities[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-AES-128-CCM:-AES-256-CCM";
}  // namespace

absl::StatusOr<std::shared_ptr<const TlsCredentials>> TlsCredentials::Load(const TlsFiles& files) {
  std::shared_ptr<TlsCredentials> creds(new TlsCredentials());
  if (int rc = gnutls_certificate_allocate_credentials(&creds->certificates_); rc < 0) {
    return absl::InternalError(absl::StrCat("tls: ", gnutls_strerror(rc)));
  }
  int rc =
      gnutls_certificate_set_x509_key_file2(creds->certificates_, files.certificate.c_str(),
                                            files.key.c_str(), GNUTLS_X509_FMT_PEM, nullptr, 0);
  if (rc < 0) {
    return absl::InvalidArgumentError(absl::StrCat("tls: certificate ", files.certificate,
                                                   " with key ", files.key, ": ",
                                                   gnutls_strerror(rc)));
  }
  if (!files.ca.empty()) {
    rc = gnutls_certificate_set_x509_trust_file(creds->certificates_, files.ca.c_str(),
                                                GNUTLS_X509_FMT_PEM);
    if (rc <= 0) {  // the number of certificates read; none is an error too
      return absl::InvalidArgumentError(absl::StrCat(
          "tls: CA file ", files.ca, ": ", rc < 0 ? gnutls_strerror(rc) : "no certificate"));
    }
    creds->verifies_clients_ = true;
  }
  for (const auto& [role, path] :
       {std::pair<const char*, const std::string&>{"server", files.certificate},
        {"ca", files.ca}}) {
    if (path.empty()) continue;
    absl::StatusOr<std::vector<CertificateDates>> dates = ReadCertificateDates(path);
    if (!dates.ok()) return dates.status();
    creds->files_.push_back({role, path, std::move(*dates)});
  }
  const char* where = nullptr;
  rc = gnutls_priority_init(&creds->priorities_, kPriorities, &where);
  if (rc < 0) return absl::InternalError(absl::StrCat("tls: priorities: ", gnutls_strerror(rc)));
  return std::shared_ptr<const TlsCredentials>(std::move(creds));
}

TlsCredentials::~TlsCredentials() {
  if (priorities_ != nullptr) gnutls_priority_deinit(priorities_);
  if (certificates_ != nullptr) gnutls_certificate_free_credentials(certificates_);
}

}  // namespace nfs3d::rpc::tls
