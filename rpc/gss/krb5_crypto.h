// The Kerberos 5 crypto nfs3d does itself, on OpenSSL: the simplified
// profile of RFC 3961 for the AES enctypes of RFC 3962
// (aes128-cts-hmac-sha1-96 = 17, aes256-cts-hmac-sha1-96 = 18): n-fold, key
// derivation, AES-CBC with ciphertext stealing, HMAC-SHA1-96, and
// encryption with a random confounder. MIT's own crypto (libk5crypto) does
// the same without AES-NI, so per-message tokens (krb5_tokens.h) are built
// here instead.
//
// Keys are derived and OpenSSL contexts prepared once per usage number; each
// operation works on a copy of those prepared contexts, so one UsageKeys is
// used by many threads at once without a lock.
#ifndef NFS3D_RPC_GSS_KRB5_CRYPTO_H_
#define NFS3D_RPC_GSS_KRB5_CRYPTO_H_

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace nfs3d::rpc::gss::krb5 {

constexpr int32_t kAes128CtsHmacSha1 = 17;
constexpr int32_t kAes256CtsHmacSha1 = 18;
constexpr size_t kBlock = 16;        // AES block = confounder length
constexpr size_t kChecksumLen = 12;  // HMAC-SHA1 truncated to 96 bits

// A message in pieces, checksummed in order where they lie.
using Pieces = absl::Span<const absl::Span<const uint8_t>>;

// The key length of an enctype done here; 0 for any other.
size_t KeyLength(int32_t enctype);

// RFC 3961 §5.1: `in` n-folded to out_len bytes.
std::vector<uint8_t> NFold(absl::Span<const uint8_t> in, size_t out_len);

// RFC 3961 §5.1 DK(base, constant) for AES (random-to-key is the identity).
absl::StatusOr<std::vector<uint8_t>> DeriveKey(absl::Span<const uint8_t> base,
                                               absl::Span<const uint8_t> constant);

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

// AES-CBC with ciphertext stealing as RFC 3962 uses it: initial vector
// zero, the last two blocks always swapped (CBC-CS3); at least one block.
class AesCts {
 public:
  static absl::StatusOr<AesCts> Create(absl::Span<const uint8_t> key);
  // In place. Between chunks of CBC work, `each_plain` sees the plaintext
  // (before encrypting, after decrypting) so a checksum can read it while it
  // is still in cache.
  template <typename F>
  bool Encrypt(absl::Span<uint8_t> data, F&& each_plain) const;
  template <typename F>
  bool Decrypt(absl::Span<uint8_t> data, F&& each_plain) const;
  bool Encrypt(absl::Span<uint8_t> data) const {
    return Encrypt(data, [](absl::Span<const uint8_t>) {});
  }
  bool Decrypt(absl::Span<uint8_t> data) const {
    return Decrypt(data, [](absl::Span<const uint8_t>) {});
  }

 private:
  using PlainSink = void (*)(void*, absl::Span<const uint8_t>);
  template <typename F>
  static void CallSink(void* f, absl::Span<const uint8_t> plain) {
    (*static_cast<F*>(f))(plain);
  }
  bool EncryptImpl(absl::Span<uint8_t> data, PlainSink sink, void* arg) const;
  bool DecryptImpl(absl::Span<uint8_t> data, PlainSink sink, void* arg) const;
  AesCts(CipherCtx enc, CipherCtx dec) : enc_(std::move(enc)), dec_(std::move(dec)) {}

  CipherCtx enc_;  // prepared: key set, no padding
  CipherCtx dec_;
};

// HMAC-SHA1 (RFC 2104) with a key set once: SHA-1 states with the inner
// and outer padded key already absorbed, copied for each computation. They
// are OpenSSL's plain SHA_CTX structs (deprecated since OpenSSL 3.0, still
// the same SHA-NI code): an EVP_MD_CTX copy allocates and frees a provider
// context, and EVP_MAC duplicates several, which cost more than the hashing
// of a short message (a GETATTR's MICs).
class HmacSha1 {
 public:
  static absl::StatusOr<HmacSha1> Create(absl::Span<const uint8_t> key);
  HmacSha1(const HmacSha1&) = default;
  HmacSha1& operator=(const HmacSha1&) = default;
  ~HmacSha1();  // wipes the keyed states
  // One computation over any number of pieces.
  class Run {
   public:
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
    void Update(absl::Span<const uint8_t> bytes);
    // The first 12 bytes of the HMAC; false if OpenSSL failed.
    bool Final96(uint8_t out[kChecksumLen]);

   private:
    friend class HmacSha1;
    explicit Run(const HmacSha1& keys) : keys_(keys), ctx_(keys.inner_) {}
    const HmacSha1& keys_;
    SHA_CTX ctx_;
    bool ok_ = true;
  };
  Run Start() const { return Run(*this); }

 private:
  HmacSha1(const SHA_CTX& inner, const SHA_CTX& outer) : inner_(inner), outer_(outer) {}
  SHA_CTX inner_;  // after key XOR ipad
  SHA_CTX outer_;  // after key XOR opad
};

// The keys RFC 3961 derives from a protocol key for one usage number:
// Kc for checksums (hmac-sha1-96-aes), Ke and Ki for encryption.
class UsageKeys {
 public:
  static absl::StatusOr<UsageKeys> Derive(absl::Span<const uint8_t> base, uint32_t usage);

  // HMAC-SHA1-96 with Kc over the pieces, in order.
  bool Checksum(Pieces pieces, uint8_t out[kChecksumLen]) const;
  // Encryption (RFC 3961 §5.3): data = confounder space (kBlock bytes,
  // filled here with random bytes) then the plaintext, encrypted in place;
  // mac gets HMAC-SHA1-96 with Ki over confounder and plaintext.
  bool Encrypt(absl::Span<uint8_t> data, uint8_t mac[kChecksumLen]) const;
  // The reverse: decrypts in place and checks mac.
  bool Decrypt(absl::Span<uint8_t> data, const uint8_t mac[kChecksumLen]) const;

 private:
  // HmacSha1 is copied (it has no move); AesCts is moved.
  UsageKeys(const HmacSha1& kc, const HmacSha1& ki, AesCts ke)
      : kc_(kc), ki_(ki), ke_(std::move(ke)) {}
  HmacSha1 kc_;
  HmacSha1 ki_;
  AesCts ke_;
};

template <typename F>
bool AesCts::Encrypt(absl::Span<uint8_t> data, F&& each_plain) const {
  return EncryptImpl(data, &CallSink<std::remove_reference_t<F>>, &each_plain);
}

template <typename F>
bool AesCts::Decrypt(absl::Span<uint8_t> data, F&& each_plain) const {
  return DecryptImpl(data, &CallSink<std::remove_reference_t<F>>, &each_plain);
}

}  // namespace nfs3d::rpc::gss::krb5

#endif  // NFS3D_RPC_GSS_KRB5_CRYPTO_H_
