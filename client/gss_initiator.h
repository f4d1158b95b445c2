// The client side of RPCSEC_GSS (RFC 2203) with Kerberos 5, for tests and
// nfs3bench: establishes a context (INIT/CONTINUE_INIT over any transport the
// caller provides), encodes calls with the RPCSEC_GSS credential and header
// MIC and the arguments protected per service, and checks and opens replies.
// Per-message tokens come from a GssProtection (rpc/gss/gss_protection.h),
// the same as the server's.
#ifndef NFS3D_CLIENT_GSS_INITIATOR_H_
#define NFS3D_CLIENT_GSS_INITIATOR_H_

#include <gssapi/gssapi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "client/call_security.h"
#include "rpc/gss/gss_protection.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "rpc/rpc_message.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::client {

struct GssInitiatorOptions {
  // Initiator principal ("alice" in the default realm, or "host/x@R") whose
  // key `client_keytab` holds; empty = the default credential cache.
  std::string principal;
  std::string client_keytab;
  // Acceptor: "nfs/host[@REALM]" or "nfs@host".
  std::string target = "nfs/localhost";
  rpc::gss::GssService service = rpc::gss::GssService::kNone;
  // Per-message tokens by GSS-API even for AES contexts (tests).
  bool gssapi_only = false;
};

class GssInitiator : public CallSecurity {
 public:
  // Sends one call message and returns the reply message.
  using Exchange = std::function<absl::StatusOr<std::string>(const std::string& message)>;

  // Runs context creation as NULL calls of (prog, vers) through `exchange`,
  // with xids from `first_xid` on.
  static absl::StatusOr<std::unique_ptr<GssInitiator>> Establish(const GssInitiatorOptions& options,
                                                                 uint32_t prog, uint32_t vers,
                                                                 uint32_t first_xid,
                                                                 const Exchange& exchange);
  ~GssInitiator() override;
  GssInitiator(const GssInitiator&) = delete;
  GssInitiator& operator=(const GssInitiator&) = delete;

  // The next sequence number (each call, retransmissions too, takes one).
  uint32_t NextSeq() { return next_seq_++; }
  rpc::gss::GssService service() const { return service_; }
  void set_service(rpc::gss::GssService s) { service_ = s; }
  uint32_t seq_window() const { return seq_window_; }

  // Appends the call message with sequence number seq to *out; args' bytes
  // move there by reference (krb5, krb5i) or are sealed in one copy (krb5p).
  void EncodeCallTo(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                    xdr::BufferChain args, uint32_t seq, rpc::gss::GssProc gss_proc,
                    xdr::BufferChain* out);
  // A whole call message with sequence number seq (tests).
  std::string EncodeCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                         absl::Span<const uint8_t> args, uint32_t seq,
                         rpc::gss::GssProc gss_proc = rpc::gss::GssProc::kData);
  // Checks the reply's verifier (a MIC over seq) and returns the plain
  // results of a SUCCESS reply ("" for other accepted replies; *header tells
  // which). Fails on a bad verifier or protection. The results lie inside
  // `reply`, which krb5p decrypts in place.
  absl::StatusOr<absl::Span<const uint8_t>> OpenReplyInPlace(absl::Span<uint8_t> reply,
                                                             uint32_t seq,
                                                             rpc::ReplyHeader* header);
  // The same on a copy of reply (tests).
  absl::StatusOr<std::string> OpenReply(absl::Span<const uint8_t> reply, uint32_t seq,
                                        rpc::ReplyHeader* header);

  // CallSecurity: each call takes the next sequence number (the token).
  void Encode(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, xdr::BufferChain args,
              xdr::BufferChain* out, uint32_t* token) override;
  absl::StatusOr<absl::Span<const uint8_t>> Open(absl::Span<uint8_t> reply,
                                                 uint32_t token) override;

 private:
  GssInitiator() = default;

  gss_ctx_id_t ctx_ = GSS_C_NO_CONTEXT;                  // while establishing
  std::unique_ptr<rpc::gss::GssProtection> protection_;  // once established
  std::string handle_;
  uint32_t seq_window_ = 0;
  uint32_t next_seq_ = 1;
  rpc::gss::GssService service_ = rpc::gss::GssService::kNone;
};

}  // namespace nfs3d::client

#endif  // NFS3D_CLIENT_GSS_INITIATOR_H_
