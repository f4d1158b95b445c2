// An RPC-with-TLS client for tests against the nfs3d binary: the AUTH_TLS
// probe on a RawClient's TCP connection, then a GnuTLS session (ALPN
// "sunrpc", optional client certificate) carrying RPC records. Header-only.
#ifndef NFS3D_TESTS_INTEGRATION_TLS_CLIENT_H_
#define NFS3D_TESTS_INTEGRATION_TLS_CLIENT_H_

#include <gnutls/gnutls.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>

#include "client/rpc_wire.h"
#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {

inline constexpr uint32_t kAuthTlsFlavor = 7;

inline std::string Mark(const std::string& message) {
  const uint32_t mark = htonl(0x80000000u | static_cast<uint32_t>(message.size()));
  return std::string(reinterpret_cast<const char*>(&mark), 4) + message;
}

// The probe: a NULL call with an AUTH_TLS credential and no body.
inline std::string ProbeMessage(uint32_t xid) {
  return Args()
      .U32(xid)
      .U32(0)
      .U32(2)
      .U32(nfs3::kProgram)
      .U32(3)
      .U32(nfs3::kNull)
      .U32(kAuthTlsFlavor)
      .U32(0)
      .U32(kAuthNone)
      .U32(0)
      .str();
}

// What a server that takes the probe answers: accepted, verifier AUTH_NONE
// "STARTTLS", SUCCESS.
inline std::string StartTlsReply(uint32_t xid) {
  return Args().U32(xid).U32(1).U32(0).U32(kAuthNone).Opaque("STARTTLS").U32(0).str();
}

// An AUTH_SYS (root) call message.
inline std::string CallMessage(uint32_t xid, uint32_t prog, uint32_t proc,
                               const std::string& args) {
  Args body;
  body.U32(0).String("tls-e2e").U32(0).U32(0).U32(0);
  return Args()
             .U32(xid)
             .U32(0)
             .U32(2)
             .U32(prog)
             .U32(3)
             .U32(proc)
             .U32(kAuthSys)
             .Opaque(body.str())
             .U32(kAuthNone)
             .U32(0)
             .str() +
         args;
}

// Whether this kernel has kTLS: TCP_ULP "tls" on a socket that is not
// connected fails with ENOTCONN when the module is there, ENOENT when not.
inline bool KernelHasTls() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const bool has = setsockopt(fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) == 0 || errno != ENOENT;
  close(fd);
  return has;
}

struct Identity {
  std::string cert, key;  // "" = no client certificate
};

// A TCP connection that probes and then speaks RPC inside a GnuTLS session.
class TlsClient {
 public:
  explicit TlsClient(uint16_t port) {
    raw_ = RawClient::Open(port);
    if (raw_ == nullptr) return;
    timeval tv{20, 0};
    setsockopt(raw_->fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~TlsClient() {
    if (session_ != nullptr) gnutls_deinit(session_);
    if (creds_ != nullptr) gnutls_certificate_free_credentials(creds_);
  }
  RawClient* raw() { return raw_.get(); }

  // The probe's reply, or "" when none came.
  std::string Probe(uint32_t xid = 0x7150) {
    if (raw_ == nullptr || !raw_->SendMessage(ProbeMessage(xid))) return "";
    return raw_->Receive(absl::Seconds(10)).value_or("");
  }

  // The handshake; "" when it succeeded, else GnuTLS's reason.
  std::string Handshake(const std::string& ca, const Identity& id = {}) {
    gnutls_certificate_allocate_credentials(&creds_);
    gnutls_certificate_set_x509_trust_file(creds_, ca.c_str(), GNUTLS_X509_FMT_PEM);
    if (!id.cert.empty()) {
      gnutls_certificate_set_x509_key_file(creds_, id.cert.c_str(), id.key.c_str(),
                                           GNUTLS_X509_FMT_PEM);
    }
    gnutls_init(&session_, GNUTLS_CLIENT);
    gnutls_set_default_priority(session_);
    gnutls_credentials_set(session_, GNUTLS_CRD_CERTIFICATE, creds_);
    gnutls_server_name_set(session_, GNUTLS_NAME_DNS, "localhost", 9);
    gnutls_session_set_verify_cert(session_, "localhost", 0);
    gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>("sunrpc")), 6};
    gnutls_alpn_set_protocols(session_, &alpn, 1, 0);
    gnutls_transport_set_int(session_, raw_->fd());
    int rc;
    do {
      rc = gnutls_handshake(session_);
    } while (rc < 0 && gnutls_error_is_fatal(rc) == 0);
    if (rc < 0) return gnutls_strerror(rc);
    // The server's verdict on a client certificate comes after the client's
    // Finished (TLS 1.3): a NULL call shows whether the session stands.
    return "";
  }

  // The server's certificate (DER) in this session.
  std::string PeerCertificate() const {
    unsigned int n = 0;
    const gnutls_datum_t* chain = gnutls_certificate_get_peers(session_, &n);
    if (chain == nullptr || n == 0) return "";
    return std::string(reinterpret_cast<char*>(chain[0].data), chain[0].size);
  }
  std::string Protocol() const {
    return gnutls_protocol_get_name(gnutls_protocol_get_version(session_));
  }
  std::string Alpn() const {
    gnutls_datum_t p{};
    if (gnutls_alpn_get_selected_protocol(session_, &p) < 0) return "";
    return std::string(reinterpret_cast<char*>(p.data), p.size);
  }

  // One message inside TLS and the reply to it; nullopt when the session
  // ended.
  std::optional<std::string> Exchange(const std::string& message) {
    const std::string record = Mark(message);
    if (gnutls_record_send(session_, record.data(), record.size()) !=
        static_cast<ssize_t>(record.size())) {
      return std::nullopt;
    }
    std::string head, body;
    if (!Read(4, &head)) return std::nullopt;
    uint32_t mark;
    std::memcpy(&mark, head.data(), 4);
    if (!Read(ntohl(mark) & 0x7fffffffu, &body)) return std::nullopt;
    return body;
  }
  // One AUTH_SYS call inside TLS.
  std::optional<client::RpcReply> Call(uint32_t prog, uint32_t proc, const std::string& args) {
    const uint32_t xid = next_xid_++;
    std::optional<std::string> body = Exchange(CallMessage(xid, prog, proc, args));
    client::RpcReply r;
    if (!body || !client::ParseReply(Span(*body), &r) || r.xid != xid) return std::nullopt;
    r.raw = *body;
    return r;
  }

  // Pipelining: a call sent without waiting for its reply; its xid (0 when
  // the session ended).
  uint32_t Send(uint32_t prog, uint32_t proc, const std::string& args) {
    const uint32_t xid = next_xid_++;
    const std::string record = Mark(CallMessage(xid, prog, proc, args));
    if (gnutls_record_send(session_, record.data(), record.size()) !=
        static_cast<ssize_t>(record.size())) {
      return 0;
    }
    return xid;
  }
  // The next reply, of whichever call; nullopt when the session ended
  // (closed_cleanly() then tells how).
  std::optional<client::RpcReply> Receive() {
    std::string head, body;
    if (!Read(4, &head)) return std::nullopt;
    uint32_t mark;
    std::memcpy(&mark, head.data(), 4);
    client::RpcReply r;
    if (!Read(ntohl(mark) & 0x7fffffffu, &body) || !client::ParseReply(Span(body), &r)) {
      last_recv_ = -1;  // a record cut short
      return std::nullopt;
    }
    r.raw = body;
    return r;
  }
  // The session ended with the server's close_notify, between two records:
  // not a bare close, a reset or a record cut short.
  bool closed_cleanly() const { return last_recv_ == 0; }

 private:
  bool Read(size_t n, std::string* out) {
    out->resize(n);
    size_t have = 0;
    while (have < n) {
      const ssize_t got = gnutls_record_recv(session_, out->data() + have, n - have);
      // GNUTLS_E_AGAIN: SO_RCVTIMEO passed; a test fails rather than hangs.
      if (got == GNUTLS_E_INTERRUPTED) continue;
      if (got <= 0) {
        last_recv_ = have == 0 ? got : -1;
        return false;
      }
      have += static_cast<size_t>(got);
    }
    return true;
  }

  std::unique_ptr<RawClient> raw_;
  gnutls_certificate_credentials_t creds_ = nullptr;
  gnutls_session_t session_ = nullptr;
  uint32_t next_xid_ = 0x10000;
  ssize_t last_recv_ = 1;  // gnutls_record_recv's last result when not data
};

}  // namespace nfs3d::e2e

#endif  // NFS3D_TESTS_INTEGRATION_TLS_CLIENT_H_
