#include "rpc/gss/krb5_tokens.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace nfs3d::rpc::gss::krb5 {
namespace {

constexpr uint8_t kMicId = 0x04;   // TOK_ID 04 04
constexpr uint8_t kWrapId = 0x05;  // TOK_ID 05 04
constexpr uint8_t kSentByAcceptor = 0x01;
constexpr uint8_t kSealed = 0x02;
constexpr uint8_t kAcceptorSubkey = 0x04;

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

}  // namespace

absl::StatusOr<Krb5Tokens::KeySet> Krb5Tokens::MakeKeySet(int32_t enctype,
                                                          absl::Span<const uint8_t> key,
                                                          bool initiator) {
  if (KeyLength(enctype) == 0 || KeyLength(enctype) != key.size()) {
    return absl::UnimplementedError("enctype not done here");
  }
  const uint32_t my_sign = initiator ? kInitiatorSign : kAcceptorSign;
  const uint32_t my_seal = initiator ? kInitiatorSeal : kAcceptorSeal;
  const uint32_t peer_sign = initiator ? kAcceptorSign : kInitiatorSign;
  const uint32_t peer_seal = initiator ? kAcceptorSeal : kInitiatorSeal;
  absl::StatusOr<UsageKeys> k[4] = {
      UsageKeys::Derive(key, my_sign), UsageKeys::Derive(key, my_seal),
      UsageKeys::Derive(key, peer_sign), UsageKeys::Derive(key, peer_seal)};
  for (const auto& one : k) {
    if (!one.ok()) return one.status();
  }
  return KeySet{std::move(*k[0]), std::move(*k[1]), std::move(*k[2]), std::move(*k[3])};
}

absl::StatusOr<std::unique_ptr<Krb5Tokens>> Krb5Tokens::Create(const ContextKeys& keys) {
  absl::StatusOr<KeySet> context =
      MakeKeySet(keys.context_key_type, keys.context_key, keys.initiator);
  if (!context.ok()) return context.status();
  std::optional<KeySet> acceptor;
  if (!keys.acceptor_subkey.empty()) {
    absl::StatusOr<KeySet> a =
        MakeKeySet(keys.acceptor_subkey_type, keys.acceptor_subkey, keys.initiator);
    if (!a.ok()) return a.status();
    acceptor.emplace(std::move(*a));
  }
  auto tokens = std::unique_ptr<Krb5Tokens>(
      new Krb5Tokens(keys.initiator, keys.send_seq, std::move(*context), std::move(acceptor)));
  tokens->keys_ = keys;
  return tokens;
}

Krb5Tokens::~Krb5Tokens() {
  OPENSSL_cleanse(keys_.context_key.data(), keys_.context_key.size());
  OPENSSL_cleanse(keys_.acceptor_subkey.data(), keys_.acceptor_subkey.size());
}

ContextKeys Krb5Tokens::Keys() const {
  ContextKeys keys = keys_;
  keys.send_seq = send_seq_.load(std::memory_order_relaxed);
  return keys;
}

Krb5Tokens::Krb5Tokens(bool initiator, uint64_t send_seq, KeySet context,
                       std::optional<KeySet> acceptor)
    : initiator_(initiator),
      send_seq_(send_seq),
      context_(std::move(context)),
      acceptor_(std::move(acceptor)) {}

void Krb5Tokens::Header(uint8_t tok_id, bool seal, uint8_t out[kHeader]) {
  out[0] = tok_id;
  out[1] = 0x04;
  out[2] = static_cast<uint8_t>((initiator_ ? 0 : kSentByAcceptor) | (seal ? kSealed : 0) |
                                (acceptor_.has_value() ? kAcceptorSubkey : 0));
  // MIC: five filler bytes; Wrap: one filler byte, then EC and RRC (zero).
  std::memset(out + 3, 0xFF, 5);
  if (tok_id == kWrapId) std::memset(out + 4, 0, 4);
  const uint64_t seq = send_seq_.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<uint8_t>(seq >> (56 - 8 * i));
}

const Krb5Tokens::KeySet* Krb5Tokens::ReceiveKeys(uint8_t flags) const {
  // The peer is the acceptor exactly when this end initiated.
  if (((flags & kSentByAcceptor) != 0) != initiator_) return nullptr;
  if ((flags & kAcceptorSubkey) == 0) return &context_;
  return acceptor_.has_value() ? &*acceptor_ : nullptr;
}

bool Krb5Tokens::GetMic(Pieces message, uint8_t out[kMicLen]) {
  Header(kMicId, false, out);
  // The checksum covers the message, then the header.
  absl::InlinedVector<absl::Span<const uint8_t>, 8> pieces(message.begin(), message.end());
  pieces.push_back({out, kHeader});
  return SendKeys().send_sign.Checksum(pieces, out + kHeader);
}

bool Krb5Tokens::VerifyMic(Pieces message, absl::Span<const uint8_t> token) const {
  static constexpr uint8_t kFiller[5] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  if (token.size() != kMicLen || token[0] != kMicId || token[1] != 0x04 ||
      std::memcmp(&token[3], kFiller, sizeof(kFiller)) != 0) {
    return false;
  }
  const KeySet* keys = ReceiveKeys(token[2]);
  if (keys == nullptr) return false;
  absl::InlinedVector<absl::Span<const uint8_t>, 8> pieces(message.begin(), message.end());
  pieces.push_back(token.first(kHeader));
  uint8_t expected[kChecksumLen];
  return keys->receive_sign.Checksum(pieces, expected) &&
         CRYPTO_memcmp(expected, &token[kHeader], kChecksumLen) == 0;
}

bool Krb5Tokens::Wrap(absl::Span<uint8_t> token, size_t len, bool seal) {
  if (token.size() != WrapSize(len, seal)) return false;
  uint8_t* header = token.data();
  Header(kWrapId, seal, header);
  const KeySet& keys = SendKeys();
  if (seal) {
    // E(confounder | plaintext | header) | HMAC; EC = 0 (no filler).
    std::memcpy(token.data() + WrapDataOffset(true) + len, header, kHeader);
    absl::Span<uint8_t> encrypted = token.subspan(kHeader, kBlock + len + kHeader);
    return keys.send_seal.Encrypt(encrypted, token.data() + token.size() - kChecksumLen);
  }
  // plaintext | checksum over (plaintext, header with EC = RRC = 0); the
  // header then says EC = checksum length.
  const absl::Span<const uint8_t> pieces[] = {token.subspan(kHeader, len),
                                              absl::MakeConstSpan(header, kHeader)};
  if (!keys.send_seal.Checksum(pieces, token.data() + kHeader + len)) return false;
  Put16(header + 4, kChecksumLen);
  return true;
}

std::optional<absl::Span<uint8_t>> Krb5Tokens::Unwrap(absl::Span<uint8_t> token,
                                                      bool* sealed) const {
  if (token.size() < kHeader + kChecksumLen || token[0] != kWrapId || token[1] != 0x04 ||
      token[3] != 0xFF) {
    return std::nullopt;
  }
  const KeySet* keys = ReceiveKeys(token[2]);
  if (keys == nullptr) return std::nullopt;
  const uint8_t* header = token.data();
  const size_t ec = Get16(header + 4);
  absl::Span<uint8_t> body = token.subspan(kHeader);
  // Undo the sender's right rotation by RRC.
  const size_t rrc = Get16(header + 6) % body.size();
  if (rrc != 0) std::rotate(body.begin(), body.begin() + rrc, body.end());
  const size_t mac_at = body.size() - kChecksumLen;
  *sealed = (header[2] & kSealed) != 0;
  if (*sealed) {
    // confounder | plaintext | EC filler | header copy, then the HMAC.
    if (mac_at < kBlock + ec + kHeader) return std::nullopt;
    absl::Span<uint8_t> encrypted = body.first(mac_at);
    if (!keys->receive_seal.Decrypt(encrypted, body.data() + mac_at)) return std::nullopt;
    // The copy must repeat the header, RRC aside (it is sent as 0).
    const uint8_t* copy = encrypted.data() + encrypted.size() - kHeader;
    if (std::memcmp(copy, header, 6) != 0 || std::memcmp(copy + 8, header + 8, 8) != 0) {
      return std::nullopt;
    }
    return encrypted.subspan(kBlock, encrypted.size() - kBlock - ec - kHeader);
  }
  if (ec != kChecksumLen) return std::nullopt;
  uint8_t signed_header[kHeader];
  std::memcpy(signed_header, header, kHeader);
  std::memset(signed_header + 4, 0, 4);  // EC and RRC count as zero
  const absl::Span<const uint8_t> pieces[] = {body.first(mac_at),
                                              absl::MakeConstSpan(signed_header, kHeader)};
  uint8_t expected[kChecksumLen];
  if (!keys->receive_seal.Checksum(pieces, expected) ||
      CRYPTO_memcmp(expected, body.data() + mac_at, kChecksumLen) != 0) {
    return std::nullopt;
  }
  return body.first(mac_at);
}

}  // namespace nfs3d::rpc::gss::krb5
