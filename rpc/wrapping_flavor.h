// An auth flavor that keeps per-context state and may protect the procedure
// arguments and results (RPCSEC_GSS). The dispatcher hands it the calls that
// carry its flavor: it answers context control calls itself, refuses or
// silently drops bad calls, and for a data call yields the caller's identity
// and the plain arguments, then seals the finished reply (verifier, and the
// results wrapped as the call asked).
#ifndef NFS3D_RPC_WRAPPING_FLAVOR_H_
#define NFS3D_RPC_WRAPPING_FLAVOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/types/span.h"

#include "rpc/call_context.h"
#include "rpc/rpc_message.h"
#include "xdr/buffer_chain.h"

namespace nfs3d::rpc {

class WrappingFlavor {
 public:
  virtual ~WrappingFlavor() = default;

  // One data call between Accept and Seal.
  struct Call {
    virtual ~Call() = default;
    Credential cred;
    absl::Span<const uint8_t> args;  // plain procedure arguments
    // Who the caller is, beyond the address: part of the duplicate request
    // cache key (RPCSEC_GSS: the principal), so a reply cached for one user
    // never answers another user on the same host. It points into state the
    // flavor keeps alive while the call lives (RPCSEC_GSS: its context).
    std::string_view drc_identity;
    // Seal reads every byte of the results (RPCSEC_GSS integrity and
    // privacy), so the procedure should put them in memory rather than leave
    // file segments for the transport to splice.
    bool seal_reads_results = false;
  };

  enum class Verdict : uint8_t {
    kReplied,      // *reply holds the complete reply (a control call)
    kRefused,      // *reply holds an AUTH_ERROR refusal (counted as an auth error)
    kGarbageArgs,  // *reply holds a GARBAGE_ARGS reply (protection did not check)
    kDrop,         // send nothing (replay, sequence number outside the window)
    kRun,          // *call is set: run the procedure, then Seal the reply
  };

  virtual uint32_t flavor() const = 0;

  // `message` is the whole call; `header` was decoded from it and its
  // arguments start at args_offset; `transport` is how it came (a call
  // answered early has passed Accept once already).
  virtual Verdict Accept(absl::Span<const uint8_t> message, const CallHeader& header,
                         size_t args_offset, const TransportInfo& transport,
                         std::unique_ptr<Call>* call, xdr::BufferChain* reply) = 0;

  // Rewrites the plain reply to `call` (AUTH_NONE verifier, plain results)
  // into what the flavor sends. False: the reply cannot be protected; send
  // nothing.
  virtual bool Seal(Call& call, xdr::BufferChain* reply) = 0;
};

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_WRAPPING_FLAVOR_H_
