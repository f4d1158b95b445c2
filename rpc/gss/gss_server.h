// RPCSEC_GSS version 1 (RFC 2203), server side, on MIT Kerberos' GSS-API:
// context creation (INIT, CONTINUE_INIT), data calls with the services none
// (krb5), integrity (krb5i) and privacy (krb5p), and DESTROY. Once a context
// is established its per-message tokens come from a GssProtection
// (gss_protection.h: OpenSSL for the AES enctypes, else GSS-API), used
// without the context's lock; only the sequence window takes it.
//
// Per data call (§5.3.3): the credential names a live context; the verifier
// is a MIC over the call header up to the credential; the sequence number is
// new and not too old (§5.3.3.1, seq_window.h; else the call is dropped silently);
// krb5i arguments carry a MIC over (seq_num, arguments), krb5p arguments are
// GSS_Wrap'ed; both must repeat the credential's seq_num. Replies carry a MIC
// over the seq_num as verifier and the results protected the same way.
// Refusals: unknown handle or a bad header MIC → RPCSEC_GSS_CREDPROBLEM;
// expired context or spent sequence numbers → RPCSEC_GSS_CTXPROBLEM; a bad
// argument checksum or seal → GARBAGE_ARGS.
//
// Context creation is open to anyone, so it holds little before a client
// proves who it is: only the Kerberos mechanism is accepted (not SPNEGO or
// whatever else the GSS-API library offers) unless configured otherwise; an
// empty token fails at once; a context GSS-API wants another round for is
// half-open, kept apart from the established ones, bounded, and dropped
// after seconds (gss_context_table.h).
#ifndef NFS3D_RPC_GSS_GSS_SERVER_H_
#define NFS3D_RPC_GSS_GSS_SERVER_H_

#include <gssapi/gssapi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "rpc/gss/gss_context_table.h"
#include "rpc/gss/gss_protection.h"
#include "rpc/gss/seq_window.h"
#include "rpc/wrapping_flavor.h"

namespace nfs3d::rpc::gss {

struct GssServerOptions {
  // Keytab holding the service key; "" = the Kerberos default
  // (KRB5_KTNAME, else /etc/krb5.keytab).
  std::string keytab;
  // Service principal, "service@host" or "service/host[@REALM]"; "" = any
  // principal whose key the keytab holds (the client names the one it wants).
  std::string principal;
  size_t max_contexts = 4096;  // established
  // Half-open contexts (CONTINUE_NEEDED): in all, per client address, and
  // how long one may wait for its client's next round.
  size_t max_half_open = 256;
  size_t max_half_open_per_address = 8;
  absl::Duration half_open_lifetime = absl::Seconds(5);
  // false: every mechanism the GSS-API library offers the acceptor (SPNEGO,
  // ...); the per-message tokens still need a Kerberos context.
  bool krb5_only = true;
  uint32_t seq_window = 128;  // Linux knfsd's GSS_SEQ_WIN
  // Upper bound of a context's life when GSS-API reports none.
  absl::Duration max_lifetime = absl::Hours(24);
  // Clock; tests move it.
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Principal → identity; default MapInitiator (gss_identity.h).
  std::function<GssIdentity(gss_name_t)> map = nullptr;
  // Per-message tokens by GSS-API even for AES contexts (tests).
  bool gssapi_only = false;
};

// An established context as a successor process takes it over (a
// handover, daemon/handover.h): the client goes on with it, its handle,
// keys and sequence numbers unchanged.
struct HandedContext {
  std::array<uint8_t, 16> handle{};
  absl::Duration left;  // until it expires
  GssIdentity identity;
  SeqWindow::Saved window;
  ExportedProtection protection;
};

class GssServer : public WrappingFlavor {
 public:
  // Acquires the acceptor credential from the keytab: fails when the keytab
  // cannot be read or holds no key for the principal.
  static absl::StatusOr<std::unique_ptr<GssServer>> Create(GssServerOptions options);
  ~GssServer() override;

  uint32_t flavor() const override;
  Verdict Accept(absl::Span<const uint8_t> message, const CallHeader& header, size_t args_offset,
                 const TransportInfo& transport, std::unique_ptr<Call>* call,
                 xdr::BufferChain* reply) override;
  bool Seal(Call& call, xdr::BufferChain* reply) override;

  size_t contexts() const { return table_.size(); }  // established and half-open
  size_t half_open_contexts() const { return table_.half_open(); }

  // Handover (gss_handover.cc). The established, unexpired contexts, once
  // no call runs any more: GSS-API ones are spent by it.
  std::vector<HandedContext> ExportContexts();
  // Before serving: the predecessor's contexts, in force here. Returns how
  // many could be taken up (the others' clients make new ones).
  size_t ImportContexts(const std::vector<HandedContext>& contexts);

 private:
  struct DataCall;
  GssServer(GssServerOptions options, gss_cred_id_t cred);

  Verdict Init(const CallHeader& header, absl::Span<const uint8_t> handle, bool first,
               absl::Span<const uint8_t> args, const TransportInfo& transport,
               xdr::BufferChain* reply);
  // After GSS-API's answer: the context is kept (established or half-open)
  // or dropped.
  void Keep(const std::shared_ptr<GssContext>& ctx, bool first, OM_uint32 major,
            const TransportInfo& transport, absl::Time now);
  // Verifies the call's protection and fills *call; kRun or a refusal.
  // `rerun`: the call was accepted before (TransportInfo::answered_early).
  Verdict Data(absl::Span<const uint8_t> message, const CallHeader& header, size_t args_offset,
               bool rerun, std::unique_ptr<Call>* call, xdr::BufferChain* reply);

  GssServerOptions options_;
  gss_cred_id_t cred_;
  GssContextTable table_;
};

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_GSS_SERVER_H_
