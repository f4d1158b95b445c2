// The AUTH_TLS probe of RPC-with-TLS (RFC 9289 §4.1): a client asks whether
// a server speaks TLS on a TCP connection with a NULL call whose credential
// is AUTH_TLS; a server that can answers with an AUTH_NONE verifier holding
// "STARTTLS", and the TLS handshake follows on the same connection.
#ifndef NFS3D_RPC_TLS_TLS_PROBE_H_
#define NFS3D_RPC_TLS_TLS_PROBE_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"

#include "xdr/buffer_chain.h"

namespace nfs3d::rpc::tls {

// The xid of `record` when it is a well-formed probe: a CALL of RPC version 2
// to procedure 0 (NULL) of any program, credential AUTH_TLS with an empty
// body, verifier AUTH_NONE with an empty body, and no arguments. Anything
// else (another procedure with AUTH_TLS, a body, trailing bytes) is not
// taken as a probe and goes to the dispatcher, which refuses AUTH_TLS
// outside a probe with AUTH_BADCRED as knfsd's svcauth_tls_accept does.
std::optional<uint32_t> ProbeXid(absl::Span<const uint8_t> record);

// The reply that accepts a probe: MSG_ACCEPTED, verifier AUTH_NONE with the
// 8 bytes "STARTTLS", SUCCESS (NULL has no results).
void EncodeStartTlsReply(uint32_t xid, xdr::BufferChain* reply);

}  // namespace nfs3d::rpc::tls

#endif  // NFS3D_RPC_TLS_TLS_PROBE_H_
