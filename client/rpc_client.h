// A small blocking ONC RPC client over UDP or TCP, for tests and tools: it
// encodes the call header with an AUTH_SYS or AUTH_NONE credential, sends
// (retransmitting over UDP), and waits — always with a deadline — for the
// reply with the matching xid.
#ifndef NFS3D_CLIENT_RPC_CLIENT_H_
#define NFS3D_CLIENT_RPC_CLIENT_H_

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "client/rpc_wire.h"
#include "rpc/call_context.h"

namespace nfs3d::client {

struct RpcClientOptions {
  rpc::Transport transport = rpc::Transport::kTcp;
  absl::Duration timeout = absl::Seconds(5);  // whole call, incl. retransmits
  absl::Duration udp_retransmit = absl::Milliseconds(500);
  bool reserved_port = false;  // bind a source port < 1024 (needs root)
  rpc::Credential cred;        // flavor kAuthNone or kAuthSys
};

// The reply to one call, split at the results.
struct RpcReply : ReplyHeader {
  std::string results;  // bytes after the header (SUCCESS only)
  std::string raw;      // the whole reply message
};

class RpcClient {
 public:
  static absl::StatusOr<std::unique_ptr<RpcClient>> Connect(const sockaddr* server,
                                                            socklen_t server_len,
                                                            const RpcClientOptions& options);
  // host: numeric IPv4/IPv6 address.
  static absl::StatusOr<std::unique_ptr<RpcClient>> Connect(const std::string& host, uint16_t port,
                                                            const RpcClientOptions& options);
  ~RpcClient();

  // One call with a fresh xid. Returns an error only for transport problems
  // (timeout, connection closed, undecodable reply); RPC-level rejections are
  // reported in the RpcReply.
  absl::StatusOr<RpcReply> Call(uint32_t prog, uint32_t vers, uint32_t proc,
                                absl::Span<const uint8_t> args);
  // Same with a caller-chosen xid (duplicate request cache tests).
  absl::StatusOr<RpcReply> CallWithXid(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                       absl::Span<const uint8_t> args);
  // Sends an arbitrary message (a TCP record body or a datagram) and waits for
  // any reply; for malformed-input tests. Fails with DeadlineExceeded when the
  // server sends nothing.
  absl::StatusOr<std::string> SendRaw(absl::Span<const uint8_t> message, absl::Duration wait);

  void set_cred(const rpc::Credential& cred) { options_.cred = cred; }
  int fd() const { return fd_; }

 private:
  RpcClient(int fd, const RpcClientOptions& options);
  std::string EncodeCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                         absl::Span<const uint8_t> args) const;
  absl::Status Send(const std::string& message);
  // Receives one message (datagram or whole record) before deadline.
  absl::StatusOr<std::string> Receive(absl::Time deadline);

  int fd_;
  RpcClientOptions options_;
  uint32_t next_xid_;
  std::string tcp_buffer_;
};

// Parses a reply message into its parts; false if malformed.
bool ParseReply(absl::Span<const uint8_t> message, RpcReply* reply);

}  // namespace nfs3d::client

#endif  // NFS3D_CLIENT_RPC_CLIENT_H_
