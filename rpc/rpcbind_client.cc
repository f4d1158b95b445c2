#include "rpc/rpcbind_client.h"

#include <netconfig.h>  // libtirpc
#include <netdb.h>
#include <poll.h>
#include <rpc/types.h>  // libtirpc: netbuf, rpcprog_t, bool_t
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "common/log.h"
#include "rpc/portmap_program.h"
#include "rpc/portmap_registry.h"
#include "rpc/rpc_message.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

// libtirpc's <rpc/rpc.h> includes <rpc/auth.h>, which the project's own
// rpc/auth.h shadows on the include path, so the three calls used here are
// declared by hand (signatures from <rpc/rpcb_clnt.h> and <rpc/rpc.h>).
extern "C" {
bool_t rpcb_set(const rpcprog_t, const rpcvers_t, const struct netconfig*, const struct netbuf*);
bool_t rpcb_unset(const rpcprog_t, const rpcvers_t, const struct netconfig*);
struct netbuf* uaddr2taddr(const struct netconfig*, const char*);
}

namespace nfs3d::rpc {
namespace {

// libtirpc keeps static state (netconfig database, rpcbind handles).
std::mutex& TirpcMutex() {
  static std::mutex mu;
  return mu;
}

std::set<std::pair<uint32_t, uint32_t>>& Registered() {
  static std::set<std::pair<uint32_t, uint32_t>> registered;
  return registered;
}

int ConnectUdp(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  // Connected, so an ICMP port-unreachable surfaces as ECONNREFUSED at once.
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

}  // namespace

bool RpcbindAvailable(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  int fd = ConnectUdp(host, port);
  if (fd < 0) return false;
  uint32_t xid = std::random_device{}();
  xdr::BufferChain chain;
  xdr::Encoder enc(&chain);
  // Portmapper version 2: every portmapper has it.
  xdr::Encode(enc,
              CallHeader{.xid = xid, .prog = kPortmapProgram, .vers = 2, .proc = kPmapProcNull});
  std::string call = chain.Flatten();

  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool answered = false;
  int sends = 0;
  while (!answered) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    if (sends < 3) {  // the first try, then two retransmits
      if (send(fd, call.data(), call.size(), MSG_NOSIGNAL) < 0 && errno == ECONNREFUSED) break;
      ++sends;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    int wait_ms = static_cast<int>(std::min<int64_t>(left.count(), timeout.count() / 3 + 1));
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, wait_ms);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    uint8_t buf[512];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == ECONNREFUSED) break;  // nobody listens
      continue;
    }
    xdr::Decoder dec(buf, static_cast<size_t>(n));
    ReplyHeader reply;
    answered = xdr::Decode(dec, &reply) && reply.xid == xid && reply.reply_stat == 0;
  }
  close(fd);
  return answered;
}

absl::Status RegisterWithRpcbind(uint32_t prog, uint32_t vers, const std::string& netid,
                                 uint16_t port) {
  std::lock_guard<std::mutex> lock(TirpcMutex());
  netconfig* nconf = getnetconfigent(netid.c_str());
  if (nconf == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown netid ", netid));
  std::string uaddr = MakeUaddr(NetidIsV6(netid) ? "::" : "0.0.0.0", port);
  netbuf* addr = uaddr2taddr(nconf, uaddr.c_str());
  if (addr == nullptr) {
    freenetconfigent(nconf);
    return absl::InternalError(absl::StrCat("uaddr2taddr failed for ", uaddr));
  }
  rpcb_unset(prog, vers, nconf);  // a stale entry from an earlier run would make SET fail
  bool ok = rpcb_set(prog, vers, nconf, addr);
  free(addr->buf);
  free(addr);
  freenetconfigent(nconf);
  if (!ok) {
    return absl::UnavailableError(
        absl::StrCat("rpcbind refused ", prog, " v", vers, " ", netid, " port ", port));
  }
  Registered().insert({prog, vers});
  NFS3D_LOG_INFO("registered program %d v%d %s port %d with rpcbind", prog, vers, netid, port);
  return absl::OkStatus();
}

absl::Status UnregisterAll() {
  std::lock_guard<std::mutex> lock(TirpcMutex());
  absl::Status status;
  for (const auto& [prog, vers] : Registered()) {
    if (!rpcb_unset(prog, vers, nullptr)) {
      status = absl::UnavailableError(absl::StrCat("rpcb_unset ", prog, " v", vers, " failed"));
    }
  }
  Registered().clear();
  return status;
}

}  // namespace nfs3d::rpc
