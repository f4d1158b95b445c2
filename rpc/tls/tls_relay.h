// RPC-with-TLS records in user space, for a connection whose records the
// kernel cannot take (no kTLS: rpc/tls/kernel_tls.h). The relay owns the TCP
// socket and the session and copies between them and one end of a local
// socket pair; the RPC connection reads and writes the other end as if it
// were the TCP socket, so every path it has (record reassembly, pipelining,
// sendfile and spliced WRITEs, which work on a unix socket too) is the same
// for TLS as for plain RPC. Costs two copies per byte more than kTLS.
#ifndef NFS3D_RPC_TLS_TLS_RELAY_H_
#define NFS3D_RPC_TLS_TLS_RELAY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "boost/asio/any_io_executor.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/local/stream_protocol.hpp"

#include "rpc/tls/tls_session.h"

namespace nfs3d::rpc::tls {

class TlsRelay : public std::enable_shared_from_this<TlsRelay> {
 public:
  // Takes the session and the TCP socket it runs on (`tcp_fd`); returns the
  // descriptor of the plain end for the RPC connection, which owns it. Runs
  // on `executor` (the connection's strand) until either side closes.
  static absl::StatusOr<int> Start(const boost::asio::any_io_executor& executor,
                                   std::unique_ptr<TlsSession> session, int tcp_fd);

 private:
  TlsRelay(const boost::asio::any_io_executor& executor, std::unique_ptr<TlsSession> session);
  // Client to server: TLS records, decrypted, to the plain end.
  void Inbound();
  // Server to client: what the plain end holds, as TLS records.
  void Outbound();
  // Writes in_[in_begin_, in_end_) to the plain end; false while it waits.
  bool FlushInbound();
  void Close(const char* why);

  std::unique_ptr<TlsSession> session_;
  boost::asio::ip::tcp::socket tcp_;
  boost::asio::local::stream_protocol::socket plain_;
  std::vector<unsigned char> in_;  // decrypted, not yet written to plain_
  size_t in_begin_ = 0, in_end_ = 0;
  std::vector<unsigned char> out_;  // read from plain_, not yet sent as records
  size_t out_begin_ = 0, out_end_ = 0;
  bool closed_ = false;
};

}  // namespace nfs3d::rpc::tls

#endif  // NFS3D_RPC_TLS_TLS_RELAY_H_
