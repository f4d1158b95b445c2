// One NFSv3 "mount" of nfs3bench: finds the ports (portmapper unless given),
// mounts the export with MOUNT v3, asks FSINFO for the transfer sizes, and
// keeps a pipelining RPC client to the NFS port over the chosen transport.
#ifndef NFS3D_TOOLS_NFS3BENCH_SESSION_H_
#define NFS3D_TOOLS_NFS3BENCH_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "client/async_rpc_client.h"
#include "client/gss_initiator.h"
#include "client/tls_transport.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::bench {

// HOST:/export, HOST numeric IPv4 or [IPv6].
struct Target {
  std::string host;
  std::string export_path;
};
absl::StatusOr<Target> ParseTarget(const std::string& text);

struct SessionOptions {
  rpc::Transport transport = rpc::Transport::kTcp;
  uint16_t nfs_port = 0;                          // 0: ask the portmapper
  uint16_t mount_port = 0;                        // 0: ask the portmapper
  absl::Duration timeout = absl::Seconds(30);     // one call, end to end
  absl::Duration udp_timeout = absl::Seconds(1);  // first UDP retransmit
  uint32_t uid = 0, gid = 0;
  bool reserved_port = false;
  bool send_per_call = false;  // TCP: one sendmsg per call (kernel-like)
  // RPCSEC_GSS for the NFS calls (MOUNT stays AUTH_SYS): "" (AUTH_SYS),
  // "krb5", "krb5i" or "krb5p"; a context per session (connection).
  std::string sec;
  std::string krb5_principal;  // initiator, its key in krb5_keytab; "" = ticket cache
  std::string krb5_keytab;
  std::string krb5_target;  // acceptor; "" = nfs@<host>
  // RPC-with-TLS for the NFS connections (MOUNT stays plain, as Linux's):
  // set when tls.ca names the CA of the server's certificate.
  client::TlsClientOptions tls;
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Open(const Target& target,
                                                       const SessionOptions& options);
  ~Session();

  client::AsyncRpcClient& rpc() { return *rpc_; }
  const nfs3::nfs_fh3& root() const { return root_; }
  uint32_t rtmax() const { return rtmax_; }
  uint32_t wtmax() const { return wtmax_; }
  // FSINFO's preferred sizes, at most the maxima above.
  uint32_t rtpref() const { return rtpref_; }
  uint32_t wtpref() const { return wtpref_; }
  const char* proto() const;
  const SessionOptions& options() const { return options_; }
  const Target& target() const { return target_; }
  uint16_t nfs_port() const { return nfs_port_; }

  // Synchronous helpers for setup (bounded by the call timeout). They turn a
  // non-OK nfsstat3 into an error naming the procedure.
  absl::StatusOr<nfs3::nfs_fh3> Lookup(const nfs3::nfs_fh3& dir, const std::string& name);
  absl::StatusOr<nfs3::nfs_fh3> MkdirOrLookup(const nfs3::nfs_fh3& dir, const std::string& name);
  // CREATE UNCHECKED with size 0 (truncates an existing file).
  absl::StatusOr<nfs3::nfs_fh3> CreateTruncate(const nfs3::nfs_fh3& dir, const std::string& name);
  absl::StatusOr<nfs3::fattr3> Getattr(const nfs3::nfs_fh3& fh);
  absl::Status Remove(const nfs3::nfs_fh3& dir, const std::string& name);
  absl::Status Rmdir(const nfs3::nfs_fh3& dir, const std::string& name);

 private:
  Session() = default;
  absl::Status Unmount();

  Target target_;
  SessionOptions options_;
  uint16_t mount_port_ = 0;
  uint16_t nfs_port_ = 0;
  std::unique_ptr<client::GssInitiator> gss_;  // outlives rpc_, which uses it
  std::unique_ptr<client::AsyncRpcClient> rpc_;
  nfs3::nfs_fh3 root_;
  uint32_t rtmax_ = 0, wtmax_ = 0;
  uint32_t rtpref_ = 0, wtpref_ = 0;
};

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_SESSION_H_
