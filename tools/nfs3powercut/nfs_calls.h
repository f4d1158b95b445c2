// The few NFSv3 calls nfs3powercut makes, one at a time on a bench::Session.
// A call the server never answered (a cut) is Unavailable; an answered call
// with an error status is FailedPrecondition naming the procedure.
#ifndef NFS3D_TOOLS_NFS3POWERCUT_NFS_CALLS_H_
#define NFS3D_TOOLS_NFS3POWERCUT_NFS_CALLS_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "client/rpc_client.h"
#include "tools/nfs3bench/session.h"
#include "tools/nfs3powercut/journal.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::powercut {

// Sends one call and waits for its decoded results.
template <typename Args, typename Res>
absl::Status Call(bench::Session& s, uint32_t proc, const Args& args, Res* res) {
  absl::Status st = s.rpc().CallSync(nfs3::kProgram, nfs3::kVersion, proc, args, res);
  if (!st.ok()) return absl::UnavailableError(st.message());
  return absl::OkStatus();
}

// Sends the encoded arguments of proc; journals "sent XID PROC ARGS-HEX"
// before the reply can arrive, so that the checker can send the very call
// again after the cut, as a client that never saw the reply does; then
// waits and hands the results to decode.
absl::Status SendJournaled(bench::Session& s, JournalWriter& journal, uint32_t proc,
                           const std::string& args, absl::FunctionRef<bool(xdr::Decoder&)> decode);

// Call, with the call journaled by SendJournaled.
template <typename Args, typename Res>
absl::Status CallJournaled(bench::Session& s, JournalWriter& journal, uint32_t proc,
                           const Args& args, Res* res) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  Encode(e, args);
  return SendJournaled(s, journal, proc, chain.Flatten(),
                       [res](xdr::Decoder& d) { return Decode(d, res); });
}

// Sends the call of a "sent" line again on a new connection to the
// session's server, with the same xid and argument bytes; returns the reply.
absl::StatusOr<client::RpcReply> Resend(const bench::Session& s, uint32_t xid, uint32_t proc,
                                        const std::string& args_hex);

absl::Status NfsFailure(const char* proc, nfs3::nfsstat3 status, const std::string& what);

// The server's answer for one name: absent, or the object and its attributes.
struct Found {
  bool exists = false;
  nfs3::nfs_fh3 fh;
  nfs3::fattr3 attrs;
};
absl::StatusOr<Found> LookupName(bench::Session& s, const nfs3::nfs_fh3& dir,
                                 const std::string& name);

// READ of [offset, offset + count) into *data (shorter at end of file).
absl::Status ReadAt(bench::Session& s, const nfs3::nfs_fh3& fh, uint64_t offset, uint32_t count,
                    std::string* data);

std::string FhHex(const nfs3::nfs_fh3& fh);
bool FhFromHex(const std::string& hex, nfs3::nfs_fh3* fh);

}  // namespace nfs3d::powercut

#endif  // NFS3D_TOOLS_NFS3POWERCUT_NFS_CALLS_H_
