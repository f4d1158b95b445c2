// libFuzzer target for the record-layer boundary of RPC-with-TLS: a TCP
// stream whose first record is looked at as an AUTH_TLS probe
// (rpc/tls/tls_probe.h) and whose remaining bytes go, as the bytes read after
// the probe, into a server TlsSession's handshake (rpc/tls/tls_session.h).
// The client's end of the socket is closed, so the session sees the input
// and then EOF. Invariants: the probe check never reads past the record, a
// probe's xid is the record's first word, the handshake ends (fails) within
// a bounded number of steps and never completes without a client.
#include <gnutls/gnutls.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gnutls/x509.h>

#include "rpc/record_marker.h"
#include "rpc/tls/tls_credentials.h"
#include "rpc/tls/tls_probe.h"
#include "rpc/tls/tls_session.h"

namespace {

using nfs3d::rpc::tls::TlsCredentials;

std::shared_ptr<const TlsCredentials> credentials;

// A throwaway EC key and self-signed certificate, written where Load reads
// them (no key is kept in the repository).
bool MakeCredentials() {
  gnutls_x509_privkey_t key = nullptr;
  gnutls_x509_crt_t crt = nullptr;
  if (gnutls_x509_privkey_init(&key) < 0 || gnutls_x509_crt_init(&crt) < 0) return false;
  if (gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                   GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0) {
    return false;
  }
  const unsigned char serial[] = {1};
  gnutls_x509_crt_set_version(crt, 3);
  gnutls_x509_crt_set_serial(crt, serial, sizeof(serial));
  gnutls_x509_crt_set_activation_time(crt, time(nullptr) - 60);
  gnutls_x509_crt_set_expiration_time(crt, time(nullptr) + 86400);
  gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "fuzz", 4);
  gnutls_x509_crt_set_key(crt, key);
  if (gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0) return false;
  char dir[] = "/tmp/nfs3d-tls-fuzz.XXXXXX";
  if (mkdtemp(dir) == nullptr) return false;
  const std::string cert_path = std::string(dir) + "/cert.pem";
  const std::string key_path = std::string(dir) + "/key.pem";
  gnutls_datum_t out{};
  gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out);
  std::ofstream(cert_path).write(reinterpret_cast<char*>(out.data), out.size);
  gnutls_free(out.data);
  gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &out);
  std::ofstream(key_path).write(reinterpret_cast<char*>(out.data), out.size);
  gnutls_free(out.data);
  gnutls_x509_crt_deinit(crt);
  gnutls_x509_privkey_deinit(key);
  auto loaded = TlsCredentials::Load({cert_path, key_path, /*ca=*/cert_path});
  unlink(cert_path.c_str());
  unlink(key_path.c_str());
  rmdir(dir);
  if (!loaded.ok()) return false;
  credentials = *loaded;
  return true;
}

uint32_t FirstWord(const std::vector<uint8_t>& record) {
  return (uint32_t{record[0]} << 24) | (uint32_t{record[1]} << 16) | (uint32_t{record[2]} << 8) |
         record[3];
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!MakeCredentials()) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::rpc::RecordReassembler reassembler(4096);
  size_t used = 0;
  if (reassembler.Feed(absl::MakeConstSpan(data, size), &used) !=
      nfs3d::rpc::RecordReassembler::Result::kRecord) {
    return 0;
  }
  const std::vector<uint8_t> record = reassembler.TakeRecord();
  const std::optional<uint32_t> xid = nfs3d::rpc::tls::ProbeXid(record);
  if (xid && (record.size() < 4 || *xid != FirstWord(record))) std::abort();
  if (!xid) return 0;  // the connection goes on in plain RPC

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair) != 0) return 0;
  close(pair[1]);  // the client has sent all it will: what follows the probe
  const std::string_view early(reinterpret_cast<const char*>(data) + used, size - used);
  auto session = nfs3d::rpc::tls::TlsSession::Server(credentials, pair[0], early);
  if (!session.ok()) std::abort();
  std::string error;
  int steps = 0;
  for (;;) {
    const auto step = (*session)->Handshake(&error);
    if (step == nfs3d::rpc::tls::TlsSession::Step::kDone) std::abort();  // with no client?
    if (step == nfs3d::rpc::tls::TlsSession::Step::kFailed) break;
    if (++steps > 1000) std::abort();  // a handshake that never ends
  }
  session->reset();
  close(pair[0]);
  return 0;
}
