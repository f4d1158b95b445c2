#include "rpc/gss/gss_protection.h"

#include <gssapi/gssapi_ext.h>
#include <openssl/crypto.h>

#include <array>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include <gssapi/gssapi_krb5.h>

#include "rpc/gss/gss_util.h"

namespace nfs3d::rpc::gss {
namespace {

gss_iov_buffer_desc Iov(OM_uint32 type, const void* data = nullptr, size_t len = 0) {
  return gss_iov_buffer_desc{type, gss_buffer_desc{len, const_cast<void*>(data)}};
}

// RFC 4121 tokens computed here (krb5_tokens.h).
class OpenSslProtection : public GssProtection {
 public:
  explicit OpenSslProtection(std::unique_ptr<krb5::Krb5Tokens> tokens)
      : tokens_(std::move(tokens)) {}

  bool GetMic(Pieces message, Mic* mic) override {
    mic->resize(krb5::Krb5Tokens::kMicLen);
    return tokens_->GetMic(message, mic->data());
  }
  Check VerifyMic(Pieces message, absl::Span<const uint8_t> mic) override {
    return tokens_->VerifyMic(message, mic) ? Check::kGood : Check::kBad;
  }
  std::optional<SealLayout> SealSize(size_t len) override {
    return SealLayout{krb5::Krb5Tokens::WrapSize(len, true),
                      krb5::Krb5Tokens::WrapDataOffset(true)};
  }
  bool Seal(absl::Span<uint8_t> token, size_t len) override {
    return tokens_->Wrap(token, len, true);
  }
  std::optional<absl::Span<uint8_t>> Unseal(absl::Span<uint8_t> token) override {
    bool sealed = false;
    std::optional<absl::Span<uint8_t>> plain = tokens_->Unwrap(token, &sealed);
    if (!sealed) return std::nullopt;
    return plain;
  }
  const char* kind() const override { return "openssl"; }
  std::optional<ExportedProtection> Export() override {
    return ExportedProtection{tokens_->Keys(), ""};
  }

 private:
  const std::unique_ptr<krb5::Krb5Tokens> tokens_;
};

// MIT's GSS-API on the context; its calls change the context (sequence
// numbers), so they take turns.
class GssApiProtection : public GssProtection {
 public:
  explicit GssApiProtection(gss_ctx_id_t ctx) : ctx_(ctx) {}
  ~GssApiProtection() override {
    absl::MutexLock lock(&mu_);
    OM_uint32 minor = 0;
    gss_delete_sec_context(&minor, &ctx_, GSS_C_NO_BUFFER);
  }

  bool GetMic(Pieces message, Mic* mic) override {
    std::vector<gss_iov_buffer_desc> iov;
    iov.reserve(message.size() + 1);
    for (absl::Span<const uint8_t> p : message) {
      iov.push_back(Iov(GSS_IOV_BUFFER_TYPE_DATA, p.data(), p.size()));
    }
    iov.push_back(Iov(GSS_IOV_BUFFER_TYPE_MIC_TOKEN | GSS_IOV_BUFFER_FLAG_ALLOCATE));
    OM_uint32 minor = 0;
    absl::MutexLock lock(&mu_);
    if (GSS_ERROR(gss_get_mic_iov(&minor, ctx_, GSS_C_QOP_DEFAULT, iov.data(),
                                  static_cast<int>(iov.size())))) {
      gss_release_iov_buffer(&minor, iov.data(), static_cast<int>(iov.size()));
      return false;
    }
    const gss_buffer_desc& token = iov.back().buffer;
    const auto* bytes = static_cast<const uint8_t*>(token.value);
    mic->assign(bytes, bytes + token.length);
    gss_release_iov_buffer(&minor, iov.data(), static_cast<int>(iov.size()));
    return true;
  }

  Check VerifyMic(Pieces message, absl::Span<const uint8_t> mic) override {
    std::vector<gss_iov_buffer_desc> iov;
    iov.reserve(message.size() + 1);
    for (absl::Span<const uint8_t> p : message) {
      iov.push_back(Iov(GSS_IOV_BUFFER_TYPE_DATA, p.data(), p.size()));
    }
    iov.push_back(Iov(GSS_IOV_BUFFER_TYPE_MIC_TOKEN, mic.data(), mic.size()));
    OM_uint32 minor = 0;
    absl::MutexLock lock(&mu_);
    const OM_uint32 major =
        gss_verify_mic_iov(&minor, ctx_, nullptr, iov.data(), static_cast<int>(iov.size()));
    if (!GSS_ERROR(major)) return Check::kGood;
    return GSS_ROUTINE_ERROR(major) == GSS_S_CONTEXT_EXPIRED ? Check::kExpired : Check::kBad;
  }

  std::optional<SealLayout> SealSize(size_t len) override {
    absl::MutexLock lock(&mu_);
    std::optional<std::array<gss_iov_buffer_desc, 4>> iov = LayoutLocked(len);
    if (!iov.has_value()) return std::nullopt;
    size_t token = 0;
    for (const gss_iov_buffer_desc& b : *iov) token += b.buffer.length;
    return SealLayout{token, (*iov)[0].buffer.length};
  }

  bool Seal(absl::Span<uint8_t> token, size_t len) override {
    absl::MutexLock lock(&mu_);
    std::optional<std::array<gss_iov_buffer_desc, 4>> iov = LayoutLocked(len);
    if (!iov.has_value()) return false;
    // header | data (encrypted in place) | padding | trailer
    uint8_t* at = token.data();
    for (gss_iov_buffer_desc& b : *iov) {
      b.buffer.value = at;
      at += b.buffer.length;
    }
    if (at != token.data() + token.size()) return false;
    OM_uint32 minor = 0;
    int confidential = 0;
    return !GSS_ERROR(gss_wrap_iov(&minor, ctx_, 1, GSS_C_QOP_DEFAULT, &confidential, iov->data(),
                                   static_cast<int>(iov->size()))) &&
           confidential != 0;
  }

  std::optional<absl::Span<uint8_t>> Unseal(absl::Span<uint8_t> token) override {
    std::array<gss_iov_buffer_desc, 2> iov = {
        Iov(GSS_IOV_BUFFER_TYPE_STREAM, token.data(), token.size()), Iov(GSS_IOV_BUFFER_TYPE_DATA)};
    OM_uint32 minor = 0;
    int confidential = 0;
    absl::MutexLock lock(&mu_);
    if (GSS_ERROR(gss_unwrap_iov(&minor, ctx_, &confidential, nullptr, iov.data(),
                                 static_cast<int>(iov.size()))) ||
        confidential == 0) {
      return std::nullopt;
    }
    // The data buffer points into the stream: into token.
    return absl::MakeSpan(static_cast<uint8_t*>(iov[1].buffer.value), iov[1].buffer.length);
  }

  const char* kind() const override { return "gss-api"; }
  std::optional<ExportedProtection> Export() override {
    OM_uint32 minor = 0;
    gss_buffer_desc token = GSS_C_EMPTY_BUFFER;
    absl::MutexLock lock(&mu_);
    if (GSS_ERROR(gss_export_sec_context(&minor, &ctx_, &token))) return std::nullopt;
    ExportedProtection out;
    out.gss_token.assign(static_cast<const char*>(token.value), token.length);
    OPENSSL_cleanse(token.value, token.length);  // it holds the keys
    gss_release_buffer(&minor, &token);
    return out;
  }

 private:
  std::optional<std::array<gss_iov_buffer_desc, 4>> LayoutLocked(size_t len)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::array<gss_iov_buffer_desc, 4> iov = {
        Iov(GSS_IOV_BUFFER_TYPE_HEADER), Iov(GSS_IOV_BUFFER_TYPE_DATA, nullptr, len),
        Iov(GSS_IOV_BUFFER_TYPE_PADDING), Iov(GSS_IOV_BUFFER_TYPE_TRAILER)};
    OM_uint32 minor = 0;
    int confidential = 0;
    if (GSS_ERROR(gss_wrap_iov_length(&minor, ctx_, 1, GSS_C_QOP_DEFAULT, &confidential, iov.data(),
                                      static_cast<int>(iov.size())))) {
      return std::nullopt;
    }
    return iov;
  }

  absl::Mutex mu_;
  gss_ctx_id_t ctx_ ABSL_GUARDED_BY(mu_);
};

std::vector<uint8_t> KeyBytes(const gss_krb5_lucid_key_t& key) {
  const auto* p = static_cast<const uint8_t*>(key.data);
  return p == nullptr ? std::vector<uint8_t>() : std::vector<uint8_t>(p, p + key.length);
}

}  // namespace

absl::StatusOr<krb5::ContextKeys> ExportKeys(gss_ctx_id_t* ctx) {
  // Exporting the lucid context deletes the context it is given, and so
  // does gss_export_sec_context: export once, import twice (one import
  // becomes *ctx again, the other one is spent on the lucid export).
  OM_uint32 minor = 0;
  gss_buffer_desc token = GSS_C_EMPTY_BUFFER;
  OM_uint32 major = gss_export_sec_context(&minor, ctx, &token);
  if (GSS_ERROR(major)) {
    return absl::UnimplementedError("gss_export_sec_context: " + GssErrorText(major, minor));
  }
  gss_ctx_id_t copy = GSS_C_NO_CONTEXT;
  major = gss_import_sec_context(&minor, &token, ctx);
  const OM_uint32 copy_major = gss_import_sec_context(&minor, &token, &copy);
  OPENSSL_cleanse(token.value, token.length);  // it holds the keys
  gss_release_buffer(&minor, &token);
  if (GSS_ERROR(major) || GSS_ERROR(copy_major)) {
    if (copy != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &copy, GSS_C_NO_BUFFER);
    return absl::InternalError("gss_import_sec_context failed");
  }
  void* exported = nullptr;
  major = gss_krb5_export_lucid_sec_context(&minor, &copy, 1, &exported);
  if (GSS_ERROR(major)) {
    if (copy != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &copy, GSS_C_NO_BUFFER);
    return absl::UnimplementedError("no lucid context: " + GssErrorText(major, minor));
  }
  const auto* lucid = static_cast<const gss_krb5_lucid_context_v1_t*>(exported);
  absl::StatusOr<krb5::ContextKeys> keys;
  if (lucid->version != 1 || lucid->protocol != 1) {
    keys = absl::UnimplementedError("not an RFC 4121 context");
  } else {
    const gss_krb5_cfx_keydata_t& kd = lucid->cfx_kd;
    krb5::ContextKeys k;
    k.initiator = lucid->initiate != 0;
    k.send_seq = lucid->send_seq;
    k.context_key_type = static_cast<int32_t>(kd.ctx_key.type);
    k.context_key = KeyBytes(kd.ctx_key);
    if (kd.have_acceptor_subkey != 0) {
      k.acceptor_subkey_type = static_cast<int32_t>(kd.acceptor_subkey.type);
      k.acceptor_subkey = KeyBytes(kd.acceptor_subkey);
    }
    keys = std::move(k);
  }
  gss_krb5_free_lucid_sec_context(&minor, exported);
  return keys;
}

std::unique_ptr<GssProtection> ImportProtection(const ExportedProtection& exported) {
  if (exported.keys.has_value()) {
    absl::StatusOr<std::unique_ptr<krb5::Krb5Tokens>> tokens =
        krb5::Krb5Tokens::Create(*exported.keys);
    if (!tokens.ok()) return nullptr;
    return std::make_unique<OpenSslProtection>(std::move(*tokens));
  }
  if (exported.gss_token.empty()) return nullptr;
  std::string copy = exported.gss_token;  // GSS-API takes a mutable buffer
  gss_buffer_desc token{copy.size(), copy.data()};
  gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
  OM_uint32 minor = 0;
  const OM_uint32 major = gss_import_sec_context(&minor, &token, &ctx);
  OPENSSL_cleanse(copy.data(), copy.size());
  if (GSS_ERROR(major) || ctx == GSS_C_NO_CONTEXT) return nullptr;
  return std::make_unique<GssApiProtection>(ctx);
}

std::unique_ptr<GssProtection> TakeOver(gss_ctx_id_t* ctx, bool gssapi_only) {
  const char* env = std::getenv("NFS3D_KRB5_GSSAPI");
  gssapi_only = gssapi_only || (env != nullptr && std::string_view(env) == "1");
  absl::StatusOr<krb5::ContextKeys> keys =
      gssapi_only ? absl::CancelledError("GSS-API asked for") : ExportKeys(ctx);
  std::unique_ptr<GssProtection> out;
  if (keys.ok()) {
    absl::StatusOr<std::unique_ptr<krb5::Krb5Tokens>> tokens = krb5::Krb5Tokens::Create(*keys);
    OPENSSL_cleanse(keys->context_key.data(), keys->context_key.size());
    OPENSSL_cleanse(keys->acceptor_subkey.data(), keys->acceptor_subkey.size());
    if (tokens.ok()) out = std::make_unique<OpenSslProtection>(std::move(*tokens));
  }
  if (*ctx == GSS_C_NO_CONTEXT) return out;  // lost on the way (or never there)
  if (out != nullptr) {
    OM_uint32 minor = 0;
    gss_delete_sec_context(&minor, ctx, GSS_C_NO_BUFFER);
    return out;
  }
  out = std::make_unique<GssApiProtection>(*ctx);
  *ctx = GSS_C_NO_CONTEXT;
  return out;
}

}  // namespace nfs3d::rpc::gss
