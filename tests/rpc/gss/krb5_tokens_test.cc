// RFC 4121 tokens of rpc/gss/krb5_tokens.h against MIT's GSS-API as the
// oracle: a real initiator/acceptor context pair from the test KDC
// (tests/fixtures/krb5-kdc.sh; ctest fixture krb5), once per enctype (17, 18),
// whose keys both sides of ours take (ExportKeys leaves MIT's contexts
// usable). Our tokens must open with MIT's and MIT's with ours, both
// directions; damaged, truncated and reflected tokens are refused.
#include "rpc/gss/krb5_tokens.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include <gssapi/gssapi_krb5.h>

#include "rpc/gss/gss_protection.h"
#include "rpc/gss/gss_util.h"

namespace nfs3d::rpc::gss::krb5 {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  return b;
}
Bytes FromBuffer(const gss_buffer_desc& b) {
  const auto* p = static_cast<const uint8_t*>(b.value);
  return Bytes(p, p + b.length);
}

gss_name_t Name(const std::string& text, gss_OID type) {
  gss_buffer_desc buf{text.size(), const_cast<char*>(text.data())};
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 minor = 0;
  EXPECT_FALSE(GSS_ERROR(gss_import_name(&minor, &buf, type, &name)));
  return name;
}

class Krb5TokensTest : public ::testing::TestWithParam<int32_t> {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("NFS3D_KRB5_DIR");
    if (dir == nullptr) GTEST_SKIP() << "no test KDC (NFS3D_KRB5_DIR unset)";
    const std::string d = dir;
    setenv("KRB5_CONFIG", (d + "/krb5.conf").c_str(), 1);
    setenv("KRB5RCACHENAME", "none:", 1);
    Establish(d);
    if (HasFatalFailure()) return;
    absl::StatusOr<ContextKeys> ik = ExportKeys(&mit_init_);
    absl::StatusOr<ContextKeys> ak = ExportKeys(&mit_acc_);
    ASSERT_TRUE(ik.ok()) << ik.status();
    ASSERT_TRUE(ak.ok()) << ak.status();
    ASSERT_NE(mit_init_, GSS_C_NO_CONTEXT);  // MIT's contexts stay usable
    ASSERT_NE(mit_acc_, GSS_C_NO_CONTEXT);
    // The enctype asked for is the one in use.
    EXPECT_EQ(ik->context_key_type, GetParam());
    EXPECT_TRUE(ik->initiator);
    EXPECT_FALSE(ak->initiator);
    // MIT's acceptor asserts a subkey of the same enctype (mutual auth).
    EXPECT_EQ(ik->acceptor_subkey, ak->acceptor_subkey);
    EXPECT_EQ(ik->acceptor_subkey_type, GetParam());
    auto i = Krb5Tokens::Create(*ik);
    auto a = Krb5Tokens::Create(*ak);
    ASSERT_TRUE(i.ok()) << i.status();
    ASSERT_TRUE(a.ok()) << a.status();
    init_ = std::move(*i);
    acc_ = std::move(*a);
  }

  void TearDown() override {
    OM_uint32 minor = 0;
    if (mit_init_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &mit_init_, nullptr);
    if (mit_acc_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &mit_acc_, nullptr);
  }

  // An initiator (daemon, limited to the enctype under test) and the
  // acceptor nfs/localhost, both MIT, in this process.
  void Establish(const std::string& dir) {
    OM_uint32 minor = 0;
    const std::string ccache = "MEMORY:krb5_tokens_test";
    const std::string client_keytab = dir + "/client.keytab";
    const std::string keytab = dir + "/nfs.keytab";
    gss_key_value_element_desc ie[] = {{"client_keytab", client_keytab.c_str()},
                                       {"ccache", ccache.c_str()}};
    gss_key_value_set_desc istore{2, ie};
    gss_name_t user = Name("daemon", GSS_KRB5_NT_PRINCIPAL_NAME);
    gss_cred_id_t icred = GSS_C_NO_CREDENTIAL;
    ASSERT_FALSE(
        GSS_ERROR(gss_acquire_cred_from(&minor, user, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                        GSS_C_INITIATE, &istore, &icred, nullptr, nullptr)));
    krb5_enctype enctype = GetParam();
    ASSERT_FALSE(GSS_ERROR(gss_krb5_set_allowable_enctypes(&minor, icred, 1, &enctype)));
    gss_key_value_element_desc ae{"keytab", keytab.c_str()};
    gss_key_value_set_desc astore{1, &ae};
    gss_name_t service = Name("nfs/localhost", GSS_KRB5_NT_PRINCIPAL_NAME);
    gss_cred_id_t acred = GSS_C_NO_CREDENTIAL;
    ASSERT_FALSE(
        GSS_ERROR(gss_acquire_cred_from(&minor, service, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                        GSS_C_ACCEPT, &astore, &acred, nullptr, nullptr)));
    gss_buffer_desc to_acceptor = GSS_C_EMPTY_BUFFER;
    gss_buffer_desc to_initiator = GSS_C_EMPTY_BUFFER;
    OM_uint32 imajor = GSS_S_CONTINUE_NEEDED;
    OM_uint32 amajor = GSS_S_CONTINUE_NEEDED;
    for (int round = 0; round < 4 && (imajor != GSS_S_COMPLETE || amajor != GSS_S_COMPLETE);
         ++round) {
      if (imajor != GSS_S_COMPLETE) {
        gss_release_buffer(&minor, &to_acceptor);
        imajor = gss_init_sec_context(&minor, icred, &mit_init_, service, gss_mech_krb5,
                                      GSS_C_MUTUAL_FLAG | GSS_C_CONF_FLAG | GSS_C_INTEG_FLAG,
                                      GSS_C_INDEFINITE, GSS_C_NO_CHANNEL_BINDINGS,
                                      round == 0 ? GSS_C_NO_BUFFER : &to_initiator, nullptr,
                                      &to_acceptor, nullptr, nullptr);
        ASSERT_FALSE(GSS_ERROR(imajor)) << GssErrorText(imajor, minor);
      }
      if (amajor != GSS_S_COMPLETE && to_acceptor.length > 0) {
        gss_release_buffer(&minor, &to_initiator);
        amajor = gss_accept_sec_context(&minor, &mit_acc_, acred, &to_acceptor,
                                        GSS_C_NO_CHANNEL_BINDINGS, nullptr, nullptr, &to_initiator,
                                        nullptr, nullptr, nullptr);
        ASSERT_FALSE(GSS_ERROR(amajor)) << GssErrorText(amajor, minor);
      }
    }
    ASSERT_EQ(imajor, GSS_S_COMPLETE);
    ASSERT_EQ(amajor, GSS_S_COMPLETE);
    gss_release_buffer(&minor, &to_acceptor);
    gss_release_buffer(&minor, &to_initiator);
    gss_release_name(&minor, &user);
    gss_release_name(&minor, &service);
    gss_release_cred(&minor, &icred);
    gss_release_cred(&minor, &acred);
  }

  Bytes MitMic(gss_ctx_id_t ctx, const Bytes& msg) {
    gss_buffer_desc in{msg.size(), const_cast<uint8_t*>(msg.data())};
    OutBuffer mic;
    OM_uint32 minor = 0;
    EXPECT_FALSE(GSS_ERROR(gss_get_mic(&minor, ctx, GSS_C_QOP_DEFAULT, &in, &mic.b)));
    return FromBuffer(mic.b);
  }
  bool MitVerify(gss_ctx_id_t ctx, const Bytes& msg, const Bytes& mic) {
    gss_buffer_desc m{msg.size(), const_cast<uint8_t*>(msg.data())};
    gss_buffer_desc t{mic.size(), const_cast<uint8_t*>(mic.data())};
    OM_uint32 minor = 0;
    return !GSS_ERROR(gss_verify_mic(&minor, ctx, &m, &t, nullptr));
  }
  Bytes MitWrap(gss_ctx_id_t ctx, const Bytes& msg, bool seal) {
    gss_buffer_desc in{msg.size(), const_cast<uint8_t*>(msg.data())};
    OutBuffer out;
    OM_uint32 minor = 0;
    int conf = 0;
    EXPECT_FALSE(
        GSS_ERROR(gss_wrap(&minor, ctx, seal ? 1 : 0, GSS_C_QOP_DEFAULT, &in, &conf, &out.b)));
    EXPECT_EQ(conf != 0, seal);
    return FromBuffer(out.b);
  }
  // MIT's unwrap: the plaintext, or nullopt.
  std::optional<Bytes> MitUnwrap(gss_ctx_id_t ctx, const Bytes& token, bool* sealed) {
    gss_buffer_desc in{token.size(), const_cast<uint8_t*>(token.data())};
    OutBuffer out;
    OM_uint32 minor = 0;
    int conf = 0;
    if (GSS_ERROR(gss_unwrap(&minor, ctx, &in, &out.b, &conf, nullptr))) return std::nullopt;
    *sealed = conf != 0;
    return FromBuffer(out.b);
  }
  static Bytes OurMic(Krb5Tokens& t, const Bytes& msg) {
    // In two pieces: the checksum runs over pieces in order.
    const size_t half = msg.size() / 2;
    const absl::Span<const uint8_t> pieces[] = {absl::MakeConstSpan(msg).first(half),
                                                absl::MakeConstSpan(msg).subspan(half)};
    Bytes mic(Krb5Tokens::kMicLen);
    EXPECT_TRUE(t.GetMic(pieces, mic.data()));
    return mic;
  }
  static bool OurVerify(const Krb5Tokens& t, const Bytes& msg, const Bytes& mic) {
    const absl::Span<const uint8_t> pieces[] = {msg};
    return t.VerifyMic(pieces, mic);
  }
  static Bytes OurWrap(Krb5Tokens& t, const Bytes& msg, bool seal) {
    Bytes token(Krb5Tokens::WrapSize(msg.size(), seal));
    std::copy(msg.begin(), msg.end(), token.begin() + Krb5Tokens::WrapDataOffset(seal));
    EXPECT_TRUE(t.Wrap(absl::MakeSpan(token), msg.size(), seal));
    return token;
  }
  static std::optional<Bytes> OurUnwrap(const Krb5Tokens& t, Bytes token, bool* sealed) {
    std::optional<absl::Span<uint8_t>> plain = t.Unwrap(absl::MakeSpan(token), sealed);
    if (!plain.has_value()) return std::nullopt;
    return Bytes(plain->begin(), plain->end());
  }
  // The token with its body rotated right by rrc and RRC set (RFC 4121 §4.2.5).
  static Bytes Rotated(Bytes token, uint16_t rrc) {
    auto body = token.begin() + Krb5Tokens::kHeader;
    std::rotate(body, token.end() - rrc % (token.end() - body), token.end());
    token[6] = static_cast<uint8_t>(rrc >> 8);
    token[7] = static_cast<uint8_t>(rrc);
    return token;
  }

  gss_ctx_id_t mit_init_ = GSS_C_NO_CONTEXT;
  gss_ctx_id_t mit_acc_ = GSS_C_NO_CONTEXT;
  std::unique_ptr<Krb5Tokens> init_;  // ours, with the initiator's keys
  std::unique_ptr<Krb5Tokens> acc_;   // ours, with the acceptor's keys
};

TEST_P(Krb5TokensTest, MicsCheckBothWaysWithMit) {
  for (size_t len : {0, 4, 13, 100, 70000}) {
    const Bytes msg = Random(len, static_cast<uint32_t>(len));
    EXPECT_TRUE(MitVerify(mit_acc_, msg, OurMic(*init_, msg))) << len;
    EXPECT_TRUE(MitVerify(mit_init_, msg, OurMic(*acc_, msg))) << len;
    EXPECT_TRUE(OurVerify(*acc_, msg, MitMic(mit_init_, msg))) << len;
    EXPECT_TRUE(OurVerify(*init_, msg, MitMic(mit_acc_, msg))) << len;
  }
}

TEST_P(Krb5TokensTest, WrapsOpenBothWaysWithMit) {
  for (bool seal : {true, false}) {
    for (size_t len : {0, 1, 4, 13, 16, 17, 100, 70001}) {
      const Bytes msg = Random(len, static_cast<uint32_t>(len + 7));
      bool sealed = !seal;
      std::optional<Bytes> got;
      // (MIT's gss_unwrap leaks a byte per empty message: LeakSanitizer.)
      if (len > 0) {
        got = MitUnwrap(mit_acc_, OurWrap(*init_, msg, seal), &sealed);
        ASSERT_TRUE(got.has_value()) << seal << " " << len;
        EXPECT_EQ(*got, msg);
        EXPECT_EQ(sealed, seal);
        got = MitUnwrap(mit_init_, OurWrap(*acc_, msg, seal), &sealed);
        ASSERT_TRUE(got.has_value()) << seal << " " << len;
        EXPECT_EQ(*got, msg);
      }
      got = OurUnwrap(*acc_, MitWrap(mit_init_, msg, seal), &sealed);
      ASSERT_TRUE(got.has_value()) << seal << " " << len;
      EXPECT_EQ(*got, msg);
      EXPECT_EQ(sealed, seal);
      got = OurUnwrap(*init_, MitWrap(mit_acc_, msg, seal), &sealed);
      ASSERT_TRUE(got.has_value()) << seal << " " << len;
      EXPECT_EQ(*got, msg);
    }
  }
}

TEST_P(Krb5TokensTest, RotatedWrapTokensOpen) {
  const Bytes msg = Random(61, 3);
  for (bool seal : {true, false}) {
    for (uint16_t rrc : {1, 12, 16, 28, 60, 1000}) {
      bool sealed = false;
      std::optional<Bytes> got =
          OurUnwrap(*acc_, Rotated(MitWrap(mit_init_, msg, seal), rrc), &sealed);
      ASSERT_TRUE(got.has_value()) << seal << " rrc " << rrc;
      EXPECT_EQ(*got, msg);
      // MIT opens rotated tokens of ours too.
      got = MitUnwrap(mit_init_, Rotated(OurWrap(*acc_, msg, seal), rrc), &sealed);
      ASSERT_TRUE(got.has_value()) << seal << " rrc " << rrc;
      EXPECT_EQ(*got, msg);
    }
  }
}

TEST_P(Krb5TokensTest, EveryFlippedBitIsRefused) {
  // Odd body lengths: no RRC change is a whole rotation.
  const Bytes msg = Random(13, 5);
  const Bytes mic = MitMic(mit_init_, msg);
  for (size_t bit = 0; bit < mic.size() * 8; ++bit) {
    Bytes bad = mic;
    bad[bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
    EXPECT_FALSE(OurVerify(*acc_, msg, bad)) << "MIC bit " << bit;
  }
  for (bool seal : {true, false}) {
    const Bytes token = MitWrap(mit_init_, msg, seal);
    for (size_t bit = 0; bit < token.size() * 8; ++bit) {
      Bytes bad = token;
      bad[bit / 8] ^= static_cast<uint8_t>(1 << (bit % 8));
      bool sealed = false;
      EXPECT_FALSE(OurUnwrap(*acc_, bad, &sealed).has_value())
          << (seal ? "sealed" : "signed") << " wrap bit " << bit;
    }
  }
}

TEST_P(Krb5TokensTest, ReflectedAndTruncatedTokensAreRefused) {
  const Bytes msg = Random(40, 9);
  // A token sent back to its sender carries the wrong direction flag.
  EXPECT_FALSE(OurVerify(*init_, msg, OurMic(*init_, msg)));
  EXPECT_FALSE(OurVerify(*acc_, msg, MitMic(mit_acc_, msg)));
  bool sealed = false;
  for (bool seal : {true, false}) {
    EXPECT_FALSE(OurUnwrap(*init_, OurWrap(*init_, msg, seal), &sealed).has_value());
    EXPECT_FALSE(OurUnwrap(*acc_, MitWrap(mit_acc_, msg, seal), &sealed).has_value());
    const Bytes token = MitWrap(mit_init_, msg, seal);
    for (size_t n = 0; n < token.size(); ++n) {
      EXPECT_FALSE(OurUnwrap(*acc_, Bytes(token.begin(), token.begin() + n), &sealed).has_value())
          << n;
    }
  }
  const Bytes mic = MitMic(mit_init_, msg);
  for (size_t n = 0; n < mic.size(); ++n) {
    EXPECT_FALSE(OurVerify(*acc_, msg, Bytes(mic.begin(), mic.begin() + n))) << n;
  }
  // A MIC over another message.
  Bytes other = msg;
  other[0] ^= 1;
  EXPECT_FALSE(OurVerify(*acc_, other, mic));
}

TEST_P(Krb5TokensTest, TakeOverUsesOpenSsl) {
  std::unique_ptr<GssProtection> p = TakeOver(&mit_acc_);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(mit_acc_, GSS_C_NO_CONTEXT);
  EXPECT_STREQ(p->kind(), "openssl");
  // Sealed with MIT's initiator, opened by the protection; and back.
  const Bytes msg = Random(33, 11);
  Bytes token = MitWrap(mit_init_, msg, true);
  std::optional<absl::Span<uint8_t>> plain = p->Unseal(absl::MakeSpan(token));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(Bytes(plain->begin(), plain->end()), msg);
  Bytes signed_only = MitWrap(mit_init_, msg, false);
  EXPECT_FALSE(p->Unseal(absl::MakeSpan(signed_only)).has_value());  // must be sealed
  std::optional<GssProtection::SealLayout> layout = p->SealSize(msg.size());
  ASSERT_TRUE(layout.has_value());
  Bytes out(layout->token);
  std::copy(msg.begin(), msg.end(), out.begin() + layout->data_offset);
  ASSERT_TRUE(p->Seal(absl::MakeSpan(out), msg.size()));
  bool sealed = false;
  std::optional<Bytes> back = MitUnwrap(mit_init_, out, &sealed);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, msg);
  EXPECT_TRUE(sealed);
}

INSTANTIATE_TEST_SUITE_P(Enctypes, Krb5TokensTest,
                         ::testing::Values(kAes128CtsHmacSha1, kAes256CtsHmacSha1),
                         [](const ::testing::TestParamInfo<int32_t>& info) {
                           return info.param == kAes128CtsHmacSha1 ? std::string("aes128")
                                                                   : std::string("aes256");
                         });

}  // namespace
}  // namespace nfs3d::rpc::gss::krb5
