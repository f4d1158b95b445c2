#include "client/rpc_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

#include "rpc/rpc_auth.h"
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
  rpc::CallHeader call{.xid = xid, .prog = prog, .vers = vers, .proc = proc};
  std::string body;
  if (cred.flavor == kAuthSys) {
    body = xdr::EncodeToString(cred);
    call.cred = {kAuthSys, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(body.data()),
                                                     body.size())};
  }
  xdr::Encode(e, call);
}

bool DecodeReplyHeader(absl::Span<const uint8_t> message, ReplyHeader* header,
                       absl::Span<const uint8_t>* results) {
  xdr::Decoder d(message);
  const bool ok = xdr::Decode(d, header);
  const bool success = ok && header->reply_stat == 0 && header->accept_stat == 0;
  *results = success ? d.Rest() : absl::Span<const uint8_t>();
  return ok;
}

}  // namespace nfs3d::client
