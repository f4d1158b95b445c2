// RpcServer's TCP connections across a handover (nfs3d --takeover): given up
// by the predecessor once idle, adopted by the successor.
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <future>
#include <memory>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/strand.hpp"

#include "common/log.h"
#include "rpc/rpc_server.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;

namespace {
// How often the predecessor looks whether its connections became idle.
constexpr std::chrono::milliseconds kHandOverPoll(1);
}  // namespace

std::vector<HandedConnection> RpcServer::HandOverConnections(std::chrono::milliseconds bound) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_ || stopped_) return {};
  }
  std::vector<std::shared_ptr<TcpConnection>> left = tcp_context_.OpenConnections();
  for (auto& c : left) c->StopReadingForHandover();
  std::vector<HandedConnection> handed;
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!left.empty()) {
    struct Attempt {
      std::promise<void> done;
      TcpConnection::HandOverStep step = TcpConnection::HandOverStep::kNotYet;
      HandedConnection handed;
    };
    std::vector<std::shared_ptr<Attempt>> attempts;
    for (auto& c : left) {
      auto a = std::make_shared<Attempt>();
      c->PostTryHandOver([a](TcpConnection::HandOverStep step, HandedConnection h) {
        a->step = step;
        a->handed = std::move(h);
        a->done.set_value();
      });
      attempts.push_back(std::move(a));
    }
    std::vector<std::shared_ptr<TcpConnection>> not_yet;
    for (size_t i = 0; i < left.size(); ++i) {
      attempts[i]->done.get_future().wait();  // the io threads run: it comes
      if (attempts[i]->step == TcpConnection::HandOverStep::kHanded) {
        handed.push_back(std::move(attempts[i]->handed));
      } else if (attempts[i]->step == TcpConnection::HandOverStep::kNotYet) {
        not_yet.push_back(left[i]);
      }
    }
    left = std::move(not_yet);
    if (left.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      NFS3D_LOG_WARNING(
          "handover: %d connections still run calls after %d ms; they are closed (clients "
          "reconnect)",
          left.size(), bound.count());
      break;
    }
    std::this_thread::sleep_for(kHandOverPoll);
  }
  return handed;
}

absl::Status RpcServer::AdoptConnection(int fd, std::string_view pending,
                                        const ConnectionSecurity& tls) {
  std::lock_guard<std::mutex> lock(mu_);
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (stopped_ || fd < 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 ||
      (local.ss_family != AF_INET && local.ss_family != AF_INET6)) {
    if (fd >= 0) close(fd);
    return absl::InvalidArgumentError("handed connection: not a TCP socket");
  }
  asio::ip::tcp::endpoint endpoint;
  std::memcpy(endpoint.data(), &local, len);
  endpoint.resize(len);
  bool served = false;
  for (auto& l : tcp_listeners_) served = served || l->Serves(endpoint);
  if (!served) {
    close(fd);
    return absl::NotFoundError(absl::StrCat("handed connection to port ", endpoint.port(),
                                            ": no listener here any more; closed"));
  }
  TcpConnection::Socket socket(asio::make_strand(NextContext()));
  boost::system::error_code ec;
  socket.assign(endpoint.protocol(), fd, ec);
  if (ec) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("handed connection: ", ec.message()));
  }
  const asio::ip::tcp::endpoint peer = socket.remote_endpoint(ec);
  auto conn = std::make_shared<TcpConnection>(std::move(socket), &tcp_context_);
  if (absl::Status s = conn->SetHandedTls(tls); !s.ok()) {
    conn->CloseNow();
    return s;
  }
  conn->SetPending(pending);
  if (tls.mode != TransportSecurity::kNone) {
    // Names the connection: tests and operators see the session crossed.
    NFS3D_LOG_INFO(
        "handover: took over the TLS connection from %s port %d (%s, records in the "
        "kernel)",
        peer.address().to_string(), peer.port(), DescribeSecurity(tls));
  }
  if (!tcp_context_.Add(conn.get(), conn->client(), conn)) {
    conn->CloseNow();
    return absl::ResourceExhaustedError("handed connection: connection limit reached; closed");
  }
  // The connection table shows the session (nfs3stat --clients, metrics).
  if (tls.mode != TransportSecurity::kNone) conn->PublishSecurity();
  conn->Start();
  return absl::OkStatus();
}

}  // namespace nfs3d::rpc
