// The protected body of RPCSEC_GSS data calls and replies (RFC 2203
// §5.3.2.2-3): seq_num, then the procedure's arguments or results, sent as
// rpc_gss_integ_data (the body in the clear and a MIC over it) or as
// rpc_gss_priv_data (the body GSS_Wrap'ed). Both sides use these, and they
// avoid copies of the body, which is up to a 1 MiB WRITE's or READ's data:
// integrity checksums the body's segments where they lie and sends them by
// reference; privacy copies the body once, into the token, and encrypts it
// there; opening a priv body decrypts it in place. The tokens come from the
// context's GssProtection (gss_protection.h).
#ifndef NFS3D_RPC_GSS_GSS_BODY_H_
#define NFS3D_RPC_GSS_GSS_BODY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/types/span.h"

#include "rpc/gss/gss_protection.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc::gss {

// Appends rpc_gss_integ_data for (seq, body's bytes from `from` on) to out;
// the body's bytes move over by reference. The body's length from `from` is
// a multiple of 4 (XDR). False when the MIC fails (nothing usable in out).
bool AppendIntegData(GssProtection& ctx, uint32_t seq, xdr::BufferChain body, size_t from,
                     xdr::BufferChain* out);

// Appends rpc_gss_priv_data for (seq, body's bytes from `from` on) to out.
bool AppendPrivData(GssProtection& ctx, uint32_t seq, const xdr::BufferChain& body, size_t from,
                    xdr::BufferChain* out);

// Decodes rpc_gss_integ_data (all of `wire`), checks its MIC and that the
// body starts with seq: the arguments or results after seq, inside wire.
std::optional<absl::Span<const uint8_t>> OpenIntegData(GssProtection& ctx, uint32_t seq,
                                                       absl::Span<const uint8_t> wire);

// Decodes rpc_gss_priv_data (all of `wire`), unwraps it in place (it must be
// sealed, not only signed) and checks the leading seq: the arguments or
// results after seq, inside wire.
std::optional<absl::Span<const uint8_t>> OpenPrivData(GssProtection& ctx, uint32_t seq,
                                                      absl::Span<uint8_t> wire);

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_GSS_BODY_H_
