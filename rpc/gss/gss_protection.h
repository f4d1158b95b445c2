// Per-message protection with an established Kerberos context (RFC 2743
// GSS_GetMIC, GSS_VerifyMIC, GSS_Wrap with confidentiality, GSS_Unwrap),
// as RPCSEC_GSS uses it on both sides (gss_body.h, gss_server.h,
// client/gss_initiator.h).
//
// TakeOver picks the implementation once per context: for the AES enctypes
// (17, 18) of RFC 4121 contexts nfs3d computes the tokens itself with
// OpenSSL (krb5_tokens.h), with no lock; any other context stays with
// MIT's GSS-API, whose calls on one context are serialised. Both are safe
// to use from many threads at once.
#ifndef NFS3D_RPC_GSS_GSS_PROTECTION_H_
#define NFS3D_RPC_GSS_GSS_PROTECTION_H_

#include <gssapi/gssapi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "rpc/gss/krb5_tokens.h"

namespace nfs3d::rpc::gss {

// An established context's protection as another process takes it up (a
// handover): the keys of one done with OpenSSL, or the context GSS-API
// exported (RFC 2743 §2.2.8, gss_export_sec_context).
struct ExportedProtection {
  std::optional<krb5::ContextKeys> keys;
  std::string gss_token;
};

class GssProtection {
 public:
  using Pieces = krb5::Pieces;
  using Mic = absl::InlinedVector<uint8_t, 64>;
  enum class Check { kGood, kBad, kExpired };
  // A sealed token's size, and where its plaintext goes.
  struct SealLayout {
    size_t token = 0;
    size_t data_offset = 0;
  };

  virtual ~GssProtection() = default;

  // A MIC token over the message's pieces, in order.
  virtual bool GetMic(Pieces message, Mic* mic) = 0;
  virtual Check VerifyMic(Pieces message, absl::Span<const uint8_t> mic) = 0;
  // Sealing len bytes: the caller lays out a token of SealSize(len).token
  // bytes with the plaintext at data_offset, and Seal encrypts it in place.
  virtual std::optional<SealLayout> SealSize(size_t len) = 0;
  virtual bool Seal(absl::Span<uint8_t> token, size_t len) = 0;
  // Opens a token that must be sealed, in place: the plaintext, inside it.
  virtual std::optional<absl::Span<uint8_t>> Unseal(absl::Span<uint8_t> token) = 0;
  // "openssl" or "gss-api", for logs and tests.
  virtual const char* kind() const = 0;
  // For a handover; a GSS-API context is spent by it (no token works after).
  // nullopt when GSS-API cannot export the context.
  virtual std::optional<ExportedProtection> Export() = 0;
};

// Takes over the established context *ctx (*ctx is GSS_C_NO_CONTEXT after);
// null when GSS-API lost it on the way (then no protection is possible).
// gssapi_only, or NFS3D_KRB5_GSSAPI=1 in the environment, keeps every
// context on GSS-API (tests, A/B measurements, troubleshooting).
std::unique_ptr<GssProtection> TakeOver(gss_ctx_id_t* ctx, bool gssapi_only = false);

// The protection Export gave, in this process (RFC 2743 §2.2.9,
// gss_import_sec_context, for a GSS-API one); null when it does not work.
std::unique_ptr<GssProtection> ImportProtection(const ExportedProtection& exported);

// The RFC 4121 keys of an established krb5 context, through a copy of it
// (exporting the lucid context consumes the context it is given): *ctx
// stays usable. Fails for RFC 1964 contexts and unknown mechanisms, and
// when the copy cannot be made (then *ctx may be GSS_C_NO_CONTEXT).
absl::StatusOr<krb5::ContextKeys> ExportKeys(gss_ctx_id_t* ctx);

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_GSS_PROTECTION_H_
