// SHA1_Init/Update/Final: see HmacSha1 in the header.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "rpc/gss/krb5_crypto.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace nfs3d::rpc::gss::krb5 {
namespace {

// CBC work is done in pieces of this size so a checksum over the same bytes
// reads them from cache.
constexpr size_t kChunk = 16 * 1024;
constexpr uint8_t kZeroIv[kBlock] = {};

bool Bit(absl::Span<const uint8_t> bytes, size_t bit) {
  return (bytes[bit / 8] >> (7 - bit % 8)) & 1;
}

const EVP_CIPHER* CbcFor(size_t key_len) {
  if (key_len == 16) return EVP_aes_128_cbc();
  if (key_len == 32) return EVP_aes_256_cbc();
  return nullptr;
}

// CBC over whole blocks, in place, continuing the context's chain.
bool Cbc(EVP_CIPHER_CTX* c, uint8_t* p, size_t len) {
  int out = 0;
  return EVP_CipherUpdate(c, p, &out, p, static_cast<int>(len)) == 1 &&
         static_cast<size_t>(out) == len;
}

bool SetIv(EVP_CIPHER_CTX* c, const uint8_t* iv) {
  return EVP_CipherInit_ex(c, nullptr, nullptr, nullptr, iv, -1) == 1;
}

// A working copy of a prepared context, chain reset to IV zero.
CipherCtx Fresh(const EVP_CIPHER_CTX* prepared) {
  CipherCtx c(EVP_CIPHER_CTX_new());
  if (c == nullptr || EVP_CIPHER_CTX_copy(c.get(), prepared) != 1 || !SetIv(c.get(), kZeroIv)) {
    return nullptr;
  }
  return c;
}

CipherCtx Prepare(absl::Span<const uint8_t> key, int encrypt) {
  const EVP_CIPHER* cipher = CbcFor(key.size());
  CipherCtx c(EVP_CIPHER_CTX_new());
  if (cipher == nullptr || c == nullptr ||
      EVP_CipherInit_ex(c.get(), cipher, nullptr, key.data(), kZeroIv, encrypt) != 1 ||
      EVP_CIPHER_CTX_set_padding(c.get(), 0) != 1) {
    return nullptr;
  }
  return c;
}

// The usage constant of RFC 3961 §5.3: the usage number, then one octet.
std::array<uint8_t, 5> UsageConstant(uint32_t usage, uint8_t which) {
  return {static_cast<uint8_t>(usage >> 24), static_cast<uint8_t>(usage >> 16),
          static_cast<uint8_t>(usage >> 8), static_cast<uint8_t>(usage), which};
}

}  // namespace

size_t KeyLength(int32_t enctype) {
  switch (enctype) {
    case kAes128CtsHmacSha1:
      return 16;
    case kAes256CtsHmacSha1:
      return 32;
    default:
      return 0;
  }
}

std::vector<uint8_t> NFold(absl::Span<const uint8_t> in, size_t out_len) {
  std::vector<uint8_t> out(out_len, 0);
  if (in.empty() || out_len == 0) return out;
  // The input repeated until it fills lcm(in, out) bytes, copy k rotated
  // right by 13*k bits; the out_len-byte pieces of that are added with
  // one's-complement (end-around carry) addition.
  const size_t in_bits = in.size() * 8;
  const size_t total = std::lcm(in.size(), out_len);
  std::vector<uint32_t> column(out_len, 0);
  for (size_t byte = 0; byte < total; ++byte) {
    uint32_t v = 0;
    for (size_t b = 0; b < 8; ++b) {
      const size_t pos = byte * 8 + b;
      const size_t copy = pos / in_bits;
      const size_t rot = (13 * copy) % in_bits;
      const size_t src = (pos % in_bits + in_bits - rot) % in_bits;
      v = (v << 1) | (Bit(in, src) ? 1 : 0);
    }
    column[byte % out_len] += v;
  }
  // Carries run towards byte 0; the one out of byte 0 comes back at the end.
  for (bool carry = true; carry;) {
    carry = false;
    uint32_t c = 0;
    for (size_t i = out_len; i-- > 0;) {
      column[i] += c;
      c = column[i] >> 8;
      column[i] &= 0xff;
    }
    if (c != 0) {
      column[out_len - 1] += c;
      carry = true;
    }
  }
  for (size_t i = 0; i < out_len; ++i) out[i] = static_cast<uint8_t>(column[i]);
  return out;
}

absl::StatusOr<std::vector<uint8_t>> DeriveKey(absl::Span<const uint8_t> base,
                                               absl::Span<const uint8_t> constant) {
  // DR: the n-folded constant encrypted, then each block encrypted again,
  // until there are enough bytes for a key (one AES block each: CBC with IV
  // zero is the plain block cipher).
  CipherCtx c = Prepare(base, 1);
  if (c == nullptr) return absl::InvalidArgumentError("unusable AES key");
  std::vector<uint8_t> block = NFold(constant, kBlock);
  std::vector<uint8_t> key;
  while (key.size() < base.size()) {
    if (!SetIv(c.get(), kZeroIv) || !Cbc(c.get(), block.data(), kBlock)) {
      return absl::InternalError("AES failed");
    }
    key.insert(key.end(), block.begin(), block.end());
  }
  key.resize(base.size());
  return key;
}

absl::StatusOr<AesCts> AesCts::Create(absl::Span<const uint8_t> key) {
  CipherCtx enc = Prepare(key, 1);
  CipherCtx dec = Prepare(key, 0);
  if (enc == nullptr || dec == nullptr) return absl::InvalidArgumentError("unusable AES key");
  return AesCts(std::move(enc), std::move(dec));
}

bool AesCts::EncryptImpl(absl::Span<uint8_t> data, PlainSink sink, void* arg) const {
  const size_t len = data.size();
  uint8_t* p = data.data();
  CipherCtx c = len < kBlock ? nullptr : Fresh(enc_.get());
  if (c == nullptr) return false;
  if (len == kBlock) {
    sink(arg, data);
    return Cbc(c.get(), p, kBlock);
  }
  // Plain CBC up to the last block (whole or partial), then the last block
  // zero-padded; the two last cipher blocks change places and the one that
  // ends up last is cut to the length of the partial block.
  const size_t full = (len - 1) / kBlock * kBlock;
  for (size_t off = 0; off < full; off += kChunk) {
    const size_t n = std::min(kChunk, full - off);
    sink(arg, data.subspan(off, n));
    if (!Cbc(c.get(), p + off, n)) return false;
  }
  const size_t tail = len - full;
  sink(arg, data.subspan(full, tail));
  uint8_t last[kBlock] = {};
  std::memcpy(last, p + full, tail);
  if (!Cbc(c.get(), last, kBlock)) return false;
  uint8_t before[kBlock];
  std::memcpy(before, p + full - kBlock, kBlock);
  std::memcpy(p + full - kBlock, last, kBlock);
  std::memcpy(p + full, before, tail);
  return true;
}

bool AesCts::DecryptImpl(absl::Span<uint8_t> data, PlainSink sink, void* arg) const {
  const size_t len = data.size();
  uint8_t* p = data.data();
  CipherCtx c = len < kBlock ? nullptr : Fresh(dec_.get());
  if (c == nullptr) return false;
  if (len == kBlock) {
    if (!Cbc(c.get(), p, kBlock)) return false;
    sink(arg, data);
    return true;
  }
  // Blocks before the last two: plain CBC. Then the last full cipher block
  // (the padded final block's) decrypts to final plaintext XOR the block
  // before it, whose missing tail it also gives back.
  const size_t head = (len - 1) / kBlock * kBlock - kBlock;
  const size_t tail = len - head - kBlock;
  uint8_t chain[kBlock] = {};
  if (head > 0) std::memcpy(chain, p + head - kBlock, kBlock);
  for (size_t off = 0; off < head; off += kChunk) {
    const size_t n = std::min(kChunk, head - off);
    if (!Cbc(c.get(), p + off, n)) return false;
    sink(arg, data.subspan(off, n));
  }
  uint8_t mixed[kBlock];
  std::memcpy(mixed, p + head, kBlock);
  if (!SetIv(c.get(), kZeroIv) || !Cbc(c.get(), mixed, kBlock)) return false;
  uint8_t stolen[kBlock];
  std::memcpy(stolen, p + head + kBlock, tail);
  std::memcpy(stolen + tail, mixed + tail, kBlock - tail);
  uint8_t final_plain[kBlock];
  for (size_t i = 0; i < tail; ++i) final_plain[i] = mixed[i] ^ stolen[i];
  if (!SetIv(c.get(), chain) || !Cbc(c.get(), stolen, kBlock)) return false;
  std::memcpy(p + head, stolen, kBlock);
  std::memcpy(p + head + kBlock, final_plain, tail);
  sink(arg, data.subspan(head));
  return true;
}

absl::StatusOr<HmacSha1> HmacSha1::Create(absl::Span<const uint8_t> key) {
  constexpr size_t kShaBlock = 64;
  if (key.size() > kShaBlock) return absl::InvalidArgumentError("HMAC key too long");
  uint8_t ipad[kShaBlock];
  uint8_t opad[kShaBlock];
  for (size_t i = 0; i < kShaBlock; ++i) {
    const uint8_t k = i < key.size() ? key[i] : 0;
    ipad[i] = k ^ 0x36;
    opad[i] = k ^ 0x5c;
  }
  SHA_CTX inner;
  SHA_CTX outer;
  const bool ok = SHA1_Init(&inner) == 1 && SHA1_Update(&inner, ipad, kShaBlock) == 1 &&
                  SHA1_Init(&outer) == 1 && SHA1_Update(&outer, opad, kShaBlock) == 1;
  OPENSSL_cleanse(ipad, sizeof(ipad));
  OPENSSL_cleanse(opad, sizeof(opad));
  if (!ok) return absl::InternalError("SHA-1 setup failed");
  HmacSha1 keys(inner, outer);
  OPENSSL_cleanse(&inner, sizeof(inner));
  OPENSSL_cleanse(&outer, sizeof(outer));
  return keys;
}

HmacSha1::~HmacSha1() {
  OPENSSL_cleanse(&inner_, sizeof(inner_));
  OPENSSL_cleanse(&outer_, sizeof(outer_));
}

HmacSha1::Run::~Run() { OPENSSL_cleanse(&ctx_, sizeof(ctx_)); }

void HmacSha1::Run::Update(absl::Span<const uint8_t> bytes) {
  if (ok_ && !bytes.empty()) ok_ = SHA1_Update(&ctx_, bytes.data(), bytes.size()) == 1;
}

bool HmacSha1::Run::Final96(uint8_t out[kChecksumLen]) {
  // H(key ^ opad, H(key ^ ipad, message))
  uint8_t digest[SHA_DIGEST_LENGTH];
  if (!ok_ || SHA1_Final(digest, &ctx_) != 1) return false;
  ctx_ = keys_.outer_;
  if (SHA1_Update(&ctx_, digest, sizeof(digest)) != 1 || SHA1_Final(digest, &ctx_) != 1) {
    return false;
  }
  std::memcpy(out, digest, kChecksumLen);
  OPENSSL_cleanse(digest, sizeof(digest));
  return true;
}

absl::StatusOr<UsageKeys> UsageKeys::Derive(absl::Span<const uint8_t> base, uint32_t usage) {
  absl::StatusOr<std::vector<uint8_t>> kc = DeriveKey(base, UsageConstant(usage, 0x99));
  absl::StatusOr<std::vector<uint8_t>> ke = DeriveKey(base, UsageConstant(usage, 0xAA));
  absl::StatusOr<std::vector<uint8_t>> ki = DeriveKey(base, UsageConstant(usage, 0x55));
  if (!kc.ok()) return kc.status();
  if (!ke.ok()) return ke.status();
  if (!ki.ok()) return ki.status();
  absl::StatusOr<HmacSha1> c = HmacSha1::Create(*kc);
  absl::StatusOr<HmacSha1> i = HmacSha1::Create(*ki);
  absl::StatusOr<AesCts> e = AesCts::Create(*ke);
  OPENSSL_cleanse(kc->data(), kc->size());
  OPENSSL_cleanse(ke->data(), ke->size());
  OPENSSL_cleanse(ki->data(), ki->size());
  if (!c.ok()) return c.status();
  if (!i.ok()) return i.status();
  if (!e.ok()) return e.status();
  return UsageKeys(*c, *i, std::move(*e));
}

bool UsageKeys::Checksum(Pieces pieces, uint8_t out[kChecksumLen]) const {
  HmacSha1::Run run = kc_.Start();
  for (absl::Span<const uint8_t> p : pieces) run.Update(p);
  return run.Final96(out);
}

bool UsageKeys::Encrypt(absl::Span<uint8_t> data, uint8_t mac[kChecksumLen]) const {
  if (data.size() < kBlock || RAND_bytes(data.data(), kBlock) != 1) return false;
  HmacSha1::Run run = ki_.Start();
  return ke_.Encrypt(data, [&run](absl::Span<const uint8_t> plain) { run.Update(plain); }) &&
         run.Final96(mac);
}

bool UsageKeys::Decrypt(absl::Span<uint8_t> data, const uint8_t mac[kChecksumLen]) const {
  HmacSha1::Run run = ki_.Start();
  uint8_t expected[kChecksumLen];
  return ke_.Decrypt(data, [&run](absl::Span<const uint8_t> plain) { run.Update(plain); }) &&
         run.Final96(expected) && CRYPTO_memcmp(expected, mac, kChecksumLen) == 0;
}

}  // namespace nfs3d::rpc::gss::krb5
