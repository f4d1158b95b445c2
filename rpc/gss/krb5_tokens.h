// The per-message tokens of the Kerberos 5 GSS-API mechanism, RFC 4121
// §4.2 ("CFX"): MIC tokens and Wrap tokens (with or without
// confidentiality), for one established context whose keys came out of
// MIT's GSS-API (gss_protection.h), with the crypto of krb5_crypto.h.
//
//   MIC:  04 04 | flags | FF FF FF FF FF | SND_SEQ(8) | HMAC-SHA1-96
//         checksum over the message, then the 16-byte header
//   Wrap: 05 04 | flags | FF | EC(2) | RRC(2) | SND_SEQ(8) | body
//         sealed: body = E(confounder | plaintext | EC filler | header
//         with RRC 0) | HMAC; signed only: body = plaintext | checksum over
//         plaintext and header with EC and RRC 0 (EC = checksum length).
//         The body may arrive rotated right by RRC bytes.
// flags: 0x01 SentByAcceptor, 0x02 Sealed, 0x04 AcceptorSubkey.
//
// Received sequence numbers are not checked here: RPCSEC_GSS keeps its own
// window of them (seq_window.h), and MIT's mechanism does not refuse
// reordered tokens either. Sending takes the next number from an atomic
// counter, so a Krb5Tokens is used by many threads at once without a lock.
#ifndef NFS3D_RPC_GSS_KRB5_TOKENS_H_
#define NFS3D_RPC_GSS_KRB5_TOKENS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "rpc/gss/krb5_crypto.h"

namespace nfs3d::rpc::gss::krb5 {

// RFC 4121 §2 key usage numbers.
constexpr uint32_t kAcceptorSeal = 22;
constexpr uint32_t kAcceptorSign = 23;
constexpr uint32_t kInitiatorSeal = 24;
constexpr uint32_t kInitiatorSign = 25;

// What an established context needs for its tokens.
struct ContextKeys {
  int32_t context_key_type = 0;
  std::vector<uint8_t> context_key;  // the session key or the initiator's subkey
  int32_t acceptor_subkey_type = 0;
  std::vector<uint8_t> acceptor_subkey;  // empty: none was asserted
  bool initiator = false;                // this end initiated the context
  uint64_t send_seq = 0;                 // this end's next sequence number
};

class Krb5Tokens {
 public:
  static constexpr size_t kHeader = 16;
  static constexpr size_t kMicLen = kHeader + kChecksumLen;

  // Fails unless both keys are of an enctype done here (krb5_crypto.h).
  static absl::StatusOr<std::unique_ptr<Krb5Tokens>> Create(const ContextKeys& keys);

  // A MIC token over message: kMicLen bytes to out.
  bool GetMic(Pieces message, uint8_t out[kMicLen]);
  // Whether token is the peer's MIC token over message.
  bool VerifyMic(Pieces message, absl::Span<const uint8_t> token) const;

  // A Wrap token for len bytes of plaintext: its size, and where in it the
  // caller puts the plaintext before Wrap completes the token in place.
  static size_t WrapSize(size_t len, bool seal) {
    return kHeader + (seal ? kBlock + kHeader : 0) + len + kChecksumLen;
  }
  static size_t WrapDataOffset(bool seal) { return kHeader + (seal ? kBlock : 0); }
  bool Wrap(absl::Span<uint8_t> token, size_t len, bool seal);
  ~Krb5Tokens();
  Krb5Tokens(const Krb5Tokens&) = delete;
  Krb5Tokens& operator=(const Krb5Tokens&) = delete;

  // The keys it was made from, with this end's next sequence number: what
  // Create needs to go on in another process (a handover).
  ContextKeys Keys() const;

  // Opens the peer's Wrap token in place: the plaintext, inside token;
  // *sealed tells whether it came encrypted. nullopt if it does not check.
  std::optional<absl::Span<uint8_t>> Unwrap(absl::Span<uint8_t> token, bool* sealed) const;

 private:
  // The keys of one protocol key, for what this end sends and receives.
  struct KeySet {
    UsageKeys send_sign, send_seal, receive_sign, receive_seal;
  };
  static absl::StatusOr<KeySet> MakeKeySet(int32_t enctype, absl::Span<const uint8_t> key,
                                           bool initiator);
  Krb5Tokens(bool initiator, uint64_t send_seq, KeySet context, std::optional<KeySet> acceptor);

  // Header for a token this end sends (EC, RRC zero), taking a sequence number.
  void Header(uint8_t tok_id, bool seal, uint8_t out[kHeader]);
  // The keys a received token's flags name; null if it names none or the
  // wrong sender.
  const KeySet* ReceiveKeys(uint8_t flags) const;
  const KeySet& SendKeys() const { return acceptor_.has_value() ? *acceptor_ : context_; }

  const bool initiator_;
  std::atomic<uint64_t> send_seq_;
  ContextKeys keys_;  // as created (send_seq aside): for Keys()
  const KeySet context_;
  const std::optional<KeySet> acceptor_;
};

}  // namespace nfs3d::rpc::gss::krb5

#endif  // NFS3D_RPC_GSS_KRB5_TOKENS_H_
