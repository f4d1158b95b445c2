// Handing a TLS session's records to the kernel (kTLS, Documentation/
// networking/tls.rst): after the handshake in user space, the record keys
// and sequence numbers go to the socket (TCP_ULP "tls", SOL_TLS TLS_TX and
// TLS_RX), which then encrypts what is written (also by sendfile) and
// decrypts what is read (also by splice). The RPC transport then runs on the
// socket unchanged.
#ifndef NFS3D_RPC_TLS_KERNEL_TLS_H_
#define NFS3D_RPC_TLS_KERNEL_TLS_H_

#include <gnutls/gnutls.h>

#include <string>

#include "absl/status/status.h"

namespace nfs3d::rpc::tls {

// Moves the session's records to the kernel. Errors:
//   - Unavailable: the kernel cannot take them (no tls module: TCP_ULP gives
//     ENOENT; a cipher it lacks; GnuTLS already holds received records). The
//     socket is as before: records may go on in user space.
//   - Internal: the transmit side was set and the receive side refused; the
//     socket can serve neither way and must be closed.
absl::Status EnableKernelTls(int fd, gnutls_session_t session);

// Whether the socket's records are the kernel's: its upper layer protocol
// (TCP_ULP) is "tls". A socket handed over by another process is checked
// before it is served as a TLS session.
bool HasKernelTls(int fd);

// What a kTLS socket holds instead of data when a read failed with EIO: the
// next record is not application data. Reads it (recvmsg with a control
// buffer, TLS_GET_RECORD_TYPE) and describes it for the log: an alert
// (close_notify, or another with its level and number), a handshake message
// (a KeyUpdate, which this kernel cannot take, or a post-handshake message),
// or the read's own error. The connection closes in every case.
std::string DescribeControlRecord(int fd);

}  // namespace nfs3d::rpc::tls

#endif  // NFS3D_RPC_TLS_KERNEL_TLS_H_
