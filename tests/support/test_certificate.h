// Self-signed certificates with chosen dates and subject, made in-process
// with GnuTLS: expired and not-yet-valid ones need no tool and no fake
// clock. Test keys only (P-256, fresh each time). Header-only.
#ifndef NFS3D_TESTS_SUPPORT_TEST_CERTIFICATE_H_
#define NFS3D_TESTS_SUPPORT_TEST_CERTIFICATE_H_

#include <gnutls/gnutls.h>

#include <ctime>
#include <string>

#include <gnutls/x509.h>

namespace nfs3d::test_support {

struct TestCertificate {
  std::string certificate_pem;
  std::string key_pem;
};

// `common_name` goes in as bytes (it may hold control characters).
inline TestCertificate MakeTestCertificate(time_t not_before, time_t not_after,
                                           const std::string& common_name) {
  TestCertificate out;
  gnutls_x509_privkey_t key = nullptr;
  gnutls_x509_crt_t crt = nullptr;
  gnutls_x509_privkey_init(&key);
  gnutls_x509_crt_init(&crt);
  const unsigned char serial[] = {0x01, 0x23};
  gnutls_datum_t pem{};
  if (gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                   GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) >= 0 &&
      gnutls_x509_crt_set_version(crt, 3) >= 0 &&
      gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)) >= 0 &&
      gnutls_x509_crt_set_activation_time(crt, not_before) >= 0 &&
      gnutls_x509_crt_set_expiration_time(crt, not_after) >= 0 &&
      gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, common_name.data(),
                                    common_name.size()) >= 0 &&
      gnutls_x509_crt_set_key(crt, key) >= 0 &&
      gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) >= 0 &&
      gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &pem) >= 0) {
    out.certificate_pem.assign(reinterpret_cast<char*>(pem.data), pem.size);
    gnutls_free(pem.data);
    if (gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &pem) >= 0) {
      out.key_pem.assign(reinterpret_cast<char*>(pem.data), pem.size);
      gnutls_free(pem.data);
    }
  }
  gnutls_x509_crt_deinit(crt);
  gnutls_x509_privkey_deinit(key);
  return out;
}

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_TEST_CERTIFICATE_H_
