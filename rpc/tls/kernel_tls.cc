#include "rpc/tls/kernel_tls.h"

#include <linux/tls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace nfs3d::rpc::tls {

namespace {

// TLS record content types (RFC 8446 §5.1) and handshake message types.
constexpr uint8_t kContentAlert = 21;
constexpr uint8_t kContentHandshake = 22;
constexpr uint8_t kHandshakeKeyUpdate = 24;

// One direction's crypto_info. TLS 1.3 (the only version negotiated) keeps
// a 12-byte IV per direction: for AES-GCM its first 4 bytes are the kernel's
// salt and the rest its iv; ChaCha20-Poly1305 takes all 12 as iv.
union CryptoInfo {
  tls_crypto_info info;
  tls12_crypto_info_aes_gcm_128 gcm128;
  tls12_crypto_info_aes_gcm_256 gcm256;
  tls12_crypto_info_chacha20_poly1305 chacha;
};

template <typename Info>
bool Fill(Info* out, const gnutls_datum_t& iv, const gnutls_datum_t& key, const uint8_t* seq,
          size_t salt_size) {
  if (key.size != sizeof(out->key) || iv.size != salt_size + sizeof(out->iv)) return false;
  std::memcpy(out->key, key.data, sizeof(out->key));
  std::memcpy(out->salt, iv.data, salt_size);
  std::memcpy(out->iv, iv.data + salt_size, sizeof(out->iv));
  std::memcpy(out->rec_seq, seq, sizeof(out->rec_seq));
  return true;
}

// The kernel's description of one direction; its size, 0 when the cipher has
// no kTLS mode (or the key material does not fit it).
size_t Describe(gnutls_session_t session, bool read, CryptoInfo* out) {
  gnutls_datum_t mac{}, iv{}, key{};
  unsigned char seq[8];
  if (gnutls_record_get_state(session, read ? 1 : 0, &mac, &iv, &key, seq) < 0) return 0;
  std::memset(out, 0, sizeof(*out));
  out->info.version = TLS_1_3_VERSION;
  switch (gnutls_cipher_get(session)) {
    case GNUTLS_CIPHER_AES_128_GCM:
      out->info.cipher_type = TLS_CIPHER_AES_GCM_128;
      return Fill(&out->gcm128, iv, key, seq, TLS_CIPHER_AES_GCM_128_SALT_SIZE)
                 ? sizeof(out->gcm128)
                 : 0;
    case GNUTLS_CIPHER_AES_256_GCM:
      out->info.cipher_type = TLS_CIPHER_AES_GCM_256;
      return Fill(&out->gcm256, iv, key, seq, TLS_CIPHER_AES_GCM_256_SALT_SIZE)
                 ? sizeof(out->gcm256)
                 : 0;
    case GNUTLS_CIPHER_CHACHA20_POLY1305:
      out->info.cipher_type = TLS_CIPHER_CHACHA20_POLY1305;
      return Fill(&out->chacha, iv, key, seq, 0) ? sizeof(out->chacha) : 0;
    default:
      return 0;
  }
}

}  // namespace

absl::Status EnableKernelTls(int fd, gnutls_session_t session) {
  if (gnutls_protocol_get_version(session) != GNUTLS_TLS1_3) {
    return absl::UnavailableError("not TLS 1.3");
  }
  // Records GnuTLS read past the handshake are not on the socket any more.
  if (gnutls_record_check_pending(session) > 0) {
    return absl::UnavailableError("records already read by GnuTLS");
  }
  CryptoInfo tx, rx;
  const size_t tx_size = Describe(session, /*read=*/false, &tx);
  const size_t rx_size = Describe(session, /*read=*/true, &rx);
  const bool described = tx_size != 0 && rx_size != 0;
  absl::Status status = absl::OkStatus();
  if (!described) {
    status = absl::UnavailableError(absl::StrCat(
        "cipher ", gnutls_cipher_get_name(gnutls_cipher_get(session)), " has no kernel TLS mode"));
  } else if (setsockopt(fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) != 0) {
    status = absl::UnavailableError(absl::StrCat("TCP_ULP tls: ", std::strerror(errno),
                                                 errno == ENOENT ? " (no tls module)" : ""));
  } else if (setsockopt(fd, SOL_TLS, TLS_TX, &tx, tx_size) != 0) {
    // The ULP alone changes nothing: records may go on in user space.
    status = absl::UnavailableError(absl::StrCat("TLS_TX: ", std::strerror(errno)));
  } else if (setsockopt(fd, SOL_TLS, TLS_RX, &rx, rx_size) != 0) {
    status = absl::InternalError(absl::StrCat("TLS_RX: ", std::strerror(errno)));
  }
  // The keys do not stay on the stack.
  gnutls_memset(&tx, 0, sizeof(tx));
  gnutls_memset(&rx, 0, sizeof(rx));
  return status;
}

bool HasKernelTls(int fd) {
  char ulp[16] = {};
  socklen_t len = sizeof(ulp);
  if (getsockopt(fd, SOL_TCP, TCP_ULP, ulp, &len) != 0) return false;
  return std::string_view(ulp, strnlen(ulp, std::min<size_t>(len, sizeof(ulp)))) == "tls";
}

std::string DescribeControlRecord(int fd) {
  uint8_t data[64];
  char control[CMSG_SPACE(sizeof(uint8_t))] = {};
  iovec iov{data, sizeof(data)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
  if (n < 0) return absl::StrCat("read: ", std::strerror(errno));
  uint8_t type = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_TLS && c->cmsg_type == TLS_GET_RECORD_TYPE) {
      type = *CMSG_DATA(c);
    }
  }
  if (type == kContentAlert && n >= 2) {
    if (data[1] == 0) return "the client closed the TLS session (close_notify)";
    return absl::StrCat("TLS alert level ", data[0], " description ", data[1]);
  }
  if (type == kContentHandshake && n >= 1) {
    if (data[0] == kHandshakeKeyUpdate) {
      return "the client sent a TLS KeyUpdate, which this kernel's TLS cannot take";
    }
    return absl::StrCat("post-handshake message type ", data[0]);
  }
  return absl::StrCat("TLS record type ", type, " (", n, " bytes)");
}

}  // namespace nfs3d::rpc::tls
