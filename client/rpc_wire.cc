#include "client/rpc_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "rpc/rpc_auth.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encode_to_string.h"

namespace nfs3d::client {

absl::Status ParseNumericAddress(const std::string& host, uint16_t port, sockaddr_storage* addr,
                                 socklen_t* len) {
  *addr = sockaddr_storage{};
  auto* a4 = reinterpret_cast<sockaddr_in*>(addr);
  auto* a6 = reinterpret_cast<sockaddr_in6*>(addr);
  if (inet_pton(AF_INET, host.c_str(), &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons(port);
    *len = sizeof(*a4);
  } else if (inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(port);
    *len = sizeof(*a6);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("not a numeric address: ", host));
  }
  return absl::OkStatus();
}

bool BindReservedPort(int fd, int family) {
  for (uint16_t port = 1023; port >= 600; --port) {
    sockaddr_storage addr{};
    socklen_t len;
    if (family == AF_INET6) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons(port);
      len = sizeof(*a6);
    } else {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
      a4->sin_family = AF_INET;
      a4->sin_port = htons(port);
      len = sizeof(*a4);
    }
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) return true;
  }
  return false;
}

void EncodeCallHeader(xdr::Encoder& e, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                      const rpc::Credential& cred) {
  e.U32(xid);
  e.U32(0);  // CALL
  e.U32(2);  // RPC version
  e.U32(prog);
  e.U32(vers);
  e.U32(proc);
  if (cred.flavor == rpc::kAuthSys) {
    std::string bytes = xdr::EncodeToString(cred);
    e.U32(rpc::kAuthSys);
    e.Opaque(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                       bytes.size()));
  } else {
    e.U32(rpc::kAuthNone);
    e.U32(0);
  }
  e.U32(rpc::kAuthNone);  // verifier
  e.U32(0);
}

bool DecodeReplyHeader(absl::Span<const uint8_t> message, ReplyHeader* header,
                       absl::Span<const uint8_t>* results) {
  *results = {};
  xdr::Decoder d(message);
  header->xid = d.U32();
  if (d.U32() != 1 || !d.ok()) return false;  // not a REPLY
  header->reply_stat = d.U32();
  if (header->reply_stat == 0) {
    d.U32();        // verifier flavor
    d.Opaque(400);  // verifier body
    header->accept_stat = d.U32();
    if (header->accept_stat == 2) {
      header->mismatch_low = d.U32();
      header->mismatch_high = d.U32();
    }
    if (!d.ok()) return false;
    if (header->accept_stat == 0) *results = d.Rest();
    return true;
  }
  if (header->reply_stat != 1) return false;
  header->reject_stat = d.U32();
  if (header->reject_stat == 0) {
    header->mismatch_low = d.U32();
    header->mismatch_high = d.U32();
  } else {
    header->auth_stat = d.U32();
  }
  return d.ok();
}

}  // namespace nfs3d::client
