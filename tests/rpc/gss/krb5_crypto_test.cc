// The RFC 3961/3962 primitives of rpc/gss/krb5_crypto.h against the
// published test vectors: n-fold (RFC 3961 appendix A.1), key derivation
// (RFC 3962 appendix B's string-to-key: PBKDF2, then DK with "kerberos"; and
// DK with usage constants), AES-CTS (RFC 3962 appendix B).
#include "rpc/gss/krb5_crypto.h"

#include <openssl/evp.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace nfs3d::rpc::gss::krb5 {
namespace {

std::vector<uint8_t> Hex(absl::string_view hex) {
  std::string clean;
  for (char c : hex) {
    if (c != ' ') clean.push_back(c);
  }
  const std::string bytes = absl::HexStringToBytes(clean);
  return {bytes.begin(), bytes.end()};
}
std::vector<uint8_t> Text(absl::string_view s) { return {s.begin(), s.end()}; }
std::string ToHex(absl::Span<const uint8_t> b) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

TEST(NFoldTest, Rfc3961Vectors) {
  struct Case {
    size_t bits;
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {64, "012345", "be072631276b1955"},
      {56, "password", "78a07b6caf85fa"},
      {64, "Rough Consensus, and Running Code", "bb6ed30870b7f0e0"},
      {168, "password", "59e4a8ca7c0385c3c37b3f6d2000247cb6e6bd5b3e"},
      {192, "MASSACHVSETTS INSTITVTE OF TECHNOLOGY",
       "db3b0d8f0b061e603282b308a50841229ad798fab9540c1b"},
      {168, "Q", "518a54a215a8452a518a54a215a8452a518a54a215"},
      {168, "ba", "fb25d531ae8974499f52fd92ea9857c4ba24cf297e"},
      {64, "kerberos", "6b65726265726f73"},
      {128, "kerberos", "6b65726265726f737b9b5b2b93132b93"},
      {168, "kerberos", "8372c236344e5f1550cd0747e15d62ca7a5a3bcea4"},
      {256, "kerberos", "6b65726265726f737b9b5b2b93132b935c9bdcdad95c9899c4cae4dee6d6cae4"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ToHex(NFold(Text(c.in), c.bits / 8)), c.out) << c.bits << "-fold " << c.in;
  }
}

TEST(DeriveKeyTest, StringToKeyVectorsOfRfc3962) {
  // AES key = DK(PBKDF2-HMAC-SHA1(pass phrase, salt, iterations), "kerberos").
  struct Case {
    int iterations;
    size_t len;
    const char* key;
  };
  const Case cases[] = {
      {1, 16, "42263c6e89f4fc28b8df68ee09799f15"},
      {1, 32, "fe697b52bc0d3ce14432ba036a92e65bbb52280990a2fa27883998d72af30161"},
      {1200, 16, "4c01cd46d632d01e6dbe230a01ed642a"},
      {1200, 32, "55a6ac740ad17b4846941051e1e8b0a7548d93b0ab30a8bc3ff16280382b8c2a"},
  };
  const std::string pass = "password";
  const std::string salt = "ATHENA.MIT.EDUraeburn";
  for (const Case& c : cases) {
    std::vector<uint8_t> tkey(c.len);
    ASSERT_EQ(PKCS5_PBKDF2_HMAC_SHA1(pass.data(), static_cast<int>(pass.size()),
                                     reinterpret_cast<const uint8_t*>(salt.data()),
                                     static_cast<int>(salt.size()), c.iterations,
                                     static_cast<int>(c.len), tkey.data()),
              1);
    absl::StatusOr<std::vector<uint8_t>> key = DeriveKey(tkey, Text("kerberos"));
    ASSERT_TRUE(key.ok()) << key.status();
    EXPECT_EQ(ToHex(*key), c.key) << c.iterations << " iterations, " << c.len << " bytes";
  }
}

TEST(DeriveKeyTest, UsageConstants) {
  // DK(key, usage 2 | 0x99 / 0xAA), as OpenSSL's KRB5KDF tests have them.
  const std::vector<uint8_t> k128 = Hex("42263c6e89f4fc28b8df68ee09799f15");
  const std::vector<uint8_t> k256 =
      Hex("fe697b52bc0d3ce14432ba036a92e65bbb52280990a2fa27883998d72af30161");
  EXPECT_EQ(ToHex(*DeriveKey(k128, Hex("0000000299"))), "34280a382bc92769b2da2f9ef066854b");
  EXPECT_EQ(ToHex(*DeriveKey(k128, Hex("00000002aa"))), "5b14fc4e250e14ddf9dccf1af6674f53");
  EXPECT_EQ(ToHex(*DeriveKey(k256, Hex("0000000299"))),
            "bfab388bdcb238e9f9c98d6a878304f04d30c82556375ac507a7a852790f4674");
  EXPECT_FALSE(DeriveKey(Hex("0011"), Text("kerberos")).ok());
}

TEST(AesCtsTest, Rfc3962Vectors) {
  absl::StatusOr<AesCts> cts = AesCts::Create(Hex("636869636b656e207465726979616b69"));
  ASSERT_TRUE(cts.ok());
  const std::string plain = "I would like the General Gau's Chicken, please, and wonton soup.";
  struct Case {
    size_t len;
    const char* cipher;
  };
  const Case cases[] = {
      {17, "c6353568f2bf8cb4d8a580362da7ff7f97"},
      {31, "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5"},
      {32, "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584"},
      {47,
       "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e39312523a78662d5be7fcb"
       "cc98ebf5"},
      {48,
       "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd839312523a78662d5be7f"
       "cbcc98ebf5a8"},
      {64,
       "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a84807efe836ee89a52673"
       "0dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> data(plain.begin(), plain.begin() + c.len);
    ASSERT_TRUE(cts->Encrypt(absl::MakeSpan(data)));
    EXPECT_EQ(ToHex(data), c.cipher) << c.len << " bytes";
    ASSERT_TRUE(cts->Decrypt(absl::MakeSpan(data)));
    EXPECT_EQ(std::string(data.begin(), data.end()), plain.substr(0, c.len));
  }
  std::vector<uint8_t> short_block(15);
  EXPECT_FALSE(cts->Encrypt(absl::MakeSpan(short_block)));
  EXPECT_FALSE(cts->Decrypt(absl::MakeSpan(short_block)));
}

TEST(UsageKeysTest, EncryptionRoundTripsAndRefusesChanges) {
  for (size_t key_len : {16, 32}) {
    const std::vector<uint8_t> base(key_len, 0x5a);
    absl::StatusOr<UsageKeys> keys = UsageKeys::Derive(base, 24);
    ASSERT_TRUE(keys.ok());
    // Lengths around the block size and across the CBC chunk size.
    for (size_t len : {0, 1, 15, 16, 17, 31, 32, 33, 100, 16 * 1024 + 5, 40000}) {
      std::vector<uint8_t> data(kBlock, 0);  // room for the confounder
      for (size_t i = 0; i < len; ++i) data.push_back(static_cast<uint8_t>(i * 7 + len));
      const std::vector<uint8_t> plain = data;
      uint8_t mac[kChecksumLen];
      ASSERT_TRUE(keys->Encrypt(absl::MakeSpan(data), mac));
      std::vector<uint8_t> flipped = data;
      flipped[flipped.size() / 2] ^= 0x10;
      EXPECT_FALSE(keys->Decrypt(absl::MakeSpan(flipped), mac)) << len;
      ASSERT_TRUE(keys->Decrypt(absl::MakeSpan(data), mac)) << len;
      EXPECT_TRUE(std::equal(data.begin() + kBlock, data.end(), plain.begin() + kBlock)) << len;
    }
  }
}

}  // namespace
}  // namespace nfs3d::rpc::gss::krb5
