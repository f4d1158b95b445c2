#include "nlm/peer_caller.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

#include "client/rpc_client.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::nlm {
namespace {

constexpr uint32_t kPmapProgram = 100000;
constexpr uint32_t kPmapVersion = 2;
constexpr uint32_t kPmapGetport = 3;
constexpr uint32_t kIpprotoTcp = 6;
constexpr uint32_t kIpprotoUdp = 17;

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::string AddressString(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf));
    return buf;
  }
  if (addr.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
      inet_ntop(AF_INET, &sin6->sin6_addr.s6_addr[12], buf, sizeof(buf));
    } else {
      inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf));
    }
    return buf;
  }
  return "";
}

absl::StatusOr<std::string> RpcPeerCaller::Call(const PeerCall& call) {
  std::string host = AddressString(call.peer);
  if (host.empty()) return absl::InvalidArgumentError("peer is not an IP address");

  client::RpcClientOptions pmap_options;
  pmap_options.transport = rpc::Transport::kUdp;
  pmap_options.timeout = timeout_;
  absl::StatusOr<std::unique_ptr<client::RpcClient>> pmap =
      client::RpcClient::Connect(host, portmap_port_, pmap_options);
  if (!pmap.ok()) return pmap.status();
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  e.U32(call.prog);
  e.U32(call.vers);
  e.U32(call.transport == rpc::Transport::kTcp ? kIpprotoTcp : kIpprotoUdp);
  e.U32(0);
  std::string getport_args = chain.Flatten();
  absl::StatusOr<client::RpcReply> port_reply =
      (*pmap)->Call(kPmapProgram, kPmapVersion, kPmapGetport, Bytes(getport_args));
  if (!port_reply.ok()) return port_reply.status();
  if (port_reply->reply_stat != 0 || port_reply->accept_stat != 0) {
    return absl::UnavailableError(absl::StrCat("portmapper at ", host, " refused GETPORT"));
  }
  xdr::Decoder d(Bytes(port_reply->results));
  uint32_t port = d.U32();
  if (!d.ok() || port == 0 || port > 65535) {
    return absl::NotFoundError(
        absl::StrCat("program ", call.prog, " v", call.vers, " not registered at ", host));
  }

  client::RpcClientOptions options;
  options.transport = call.transport;
  options.timeout = timeout_;
  options.reserved_port = geteuid() == 0;
  options.cred.flavor = kAuthSys;
  options.cred.machine = "nfs3d";
  options.cred.uid = 0;
  options.cred.gid = 0;
  absl::StatusOr<std::unique_ptr<client::RpcClient>> peer =
      client::RpcClient::Connect(host, static_cast<uint16_t>(port), options);
  if (!peer.ok()) return peer.status();
  absl::StatusOr<client::RpcReply> reply =
      (*peer)->Call(call.prog, call.vers, call.proc, Bytes(call.args));
  if (!reply.ok()) return reply.status();
  if (reply->reply_stat != 0 || reply->accept_stat != 0) {
    return absl::UnavailableError(absl::StrCat("call to ", host, " rejected (reply_stat ",
                                               reply->reply_stat, ", accept_stat ",
                                               reply->accept_stat, ")"));
  }
  return reply->results;
}

bool ParseAddress(const std::string& text, sockaddr_storage* out) {
  *out = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(out);
  if (inet_pton(AF_INET, text.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    return true;
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET6, text.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    return true;
  }
  return false;
}

}  // namespace nfs3d::nlm
