#include "client/tls_transport.h"

#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "client/rpc_wire.h"
#include "common/auth_flavor.h"
#include "xdr/buffer_chain.h"
#include "xdr/encoder.h"

namespace nfs3d::client {

namespace {

constexpr uint32_t kProbeXid = 0x544c5331;  // "TLS1"

bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

bool RecvAll(int fd, char* out, size_t len) {
  while (len > 0) {
    const ssize_t n = recv(fd, out, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// The probe (NULL with AUTH_TLS) and whether the reply says STARTTLS.
absl::Status Probe(int fd) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  for (uint32_t w : {0x80000028u, kProbeXid, 0u, 2u, 100003u, 3u, 0u, uint32_t{kAuthTls}, 0u,
                     uint32_t{kAuthNone}, 0u}) {
    e.U32(w);
  }
  if (!SendAll(fd, chain.Flatten())) return absl::UnavailableError("tls: sending the probe");
  char mark[4];
  if (!RecvAll(fd, mark, 4)) return absl::UnavailableError("tls: no reply to the probe");
  const uint32_t len = ((uint32_t{static_cast<uint8_t>(mark[0])} & 0x7f) << 24) |
                       (uint32_t{static_cast<uint8_t>(mark[1])} << 16) |
                       (uint32_t{static_cast<uint8_t>(mark[2])} << 8) |
                       static_cast<uint8_t>(mark[3]);
  if (len > 1024) return absl::DataLossError("tls: probe reply too long");
  std::string reply(len, '\0');
  if (!RecvAll(fd, reply.data(), len)) return absl::UnavailableError("tls: probe reply cut");
  if (reply.find("STARTTLS") == std::string::npos) {
    return absl::FailedPreconditionError("tls: the server does not offer RPC-with-TLS");
  }
  return absl::OkStatus();
}

// Copies between the session (on `tcp`) and `plain` until either ends.
void Relay(gnutls_session_t session, gnutls_certificate_credentials_t creds, int tcp, int plain) {
  std::vector<char> buf(256 << 10);
  pollfd fds[2] = {{tcp, POLLIN, 0}, {plain, POLLIN, 0}};
  for (bool open = true; open;) {
    fds[0].revents = fds[1].revents = 0;
    if (gnutls_record_check_pending(session) == 0 && poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (gnutls_record_check_pending(session) > 0 || (fds[0].revents & (POLLIN | POLLHUP))) {
      const ssize_t n = gnutls_record_recv(session, buf.data(), buf.size());
      if (n == 0 || (n < 0 && gnutls_error_is_fatal(static_cast<int>(n)))) break;
      for (ssize_t off = 0; n > 0 && off < n;) {
        const ssize_t w = send(plain, buf.data() + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
        if (w <= 0) {
          open = false;
          break;
        }
        off += w;
      }
    }
    if (open && (fds[1].revents & (POLLIN | POLLHUP))) {
      const ssize_t n = recv(plain, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const ssize_t w =
            gnutls_record_send(session, buf.data() + off, static_cast<size_t>(n - off));
        if (w < 0 && gnutls_error_is_fatal(static_cast<int>(w))) {
          open = false;
          break;
        }
        if (w > 0) off += w;
      }
    }
  }
  gnutls_bye(session, GNUTLS_SHUT_WR);
  gnutls_deinit(session);
  gnutls_certificate_free_credentials(creds);
  close(tcp);
  close(plain);
}

}  // namespace

absl::StatusOr<int> StartTls(int fd, const TlsClientOptions& options) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // the handshake and the relay block
  timeval tv{static_cast<time_t>(absl::ToInt64Seconds(options.timeout)), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (absl::Status s = Probe(fd); !s.ok()) return s;
  gnutls_certificate_credentials_t creds = nullptr;
  gnutls_session_t session = nullptr;
  gnutls_certificate_allocate_credentials(&creds);
  int rc = gnutls_certificate_set_x509_trust_file(creds, options.ca.c_str(), GNUTLS_X509_FMT_PEM);
  if (rc >= 0 && !options.cert.empty()) {
    rc = gnutls_certificate_set_x509_key_file(creds, options.cert.c_str(), options.key.c_str(),
                                              GNUTLS_X509_FMT_PEM);
  }
  if (rc >= 0) rc = gnutls_init(&session, GNUTLS_CLIENT);
  if (rc >= 0) rc = gnutls_set_default_priority(session);
  if (rc >= 0) rc = gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, creds);
  if (rc >= 0 && !options.server_name.empty()) {
    gnutls_session_set_verify_cert(session, options.server_name.c_str(), 0);
  }
  gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>("sunrpc")), 6};
  if (rc >= 0) rc = gnutls_alpn_set_protocols(session, &alpn, 1, 0);
  if (rc >= 0) {
    gnutls_transport_set_int(session, fd);
    do {
      rc = gnutls_handshake(session);
    } while (rc < 0 && gnutls_error_is_fatal(rc) == 0);
  }
  if (rc < 0) {
    if (session != nullptr) gnutls_deinit(session);
    gnutls_certificate_free_credentials(creds);
    return absl::UnavailableError(absl::StrCat("tls: ", gnutls_strerror(rc)));
  }
  tv = {0, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    gnutls_deinit(session);
    gnutls_certificate_free_credentials(creds);
    return absl::UnavailableError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  const int buffer = 4 << 20;
  for (int end : pair) {
    setsockopt(end, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
    setsockopt(end, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  }
  std::thread(Relay, session, creds, fd, pair[1]).detach();
  if (flags & O_NONBLOCK) fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK);
  return pair[0];
}

}  // namespace nfs3d::client
