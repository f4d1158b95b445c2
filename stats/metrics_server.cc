#include "stats/metrics_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <list>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"

#include "common/log.h"
#include "common/unix_socket.h"

namespace nfs3d::stats {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;
using local_stream = asio::local::stream_protocol;

constexpr auto kSessionTimeout = std::chrono::seconds(10);
constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";
// Bounds on what a request may make the server hold (Beast's parser enforces
// them): a scrape is a header of a few hundred bytes and no body; a control
// call carries one exports line.
constexpr uint32_t kHeaderLimit = 8 << 10;
constexpr uint64_t kTcpBodyLimit = 1 << 10;
constexpr uint64_t kControlBodyLimit = 64 << 10;
// Open connections per kind of listener. A scrape is answered in
// milliseconds; a connection beyond this closes the oldest one, so idle
// connections from anyone who reaches the port cannot hold descriptors the
// NFS service needs, nor lock out a scraper for longer than a scrape takes.
constexpr size_t kMaxSessions = 64;
// After accept fails (EMFILE, ENFILE, ENOBUFS): wait this long before the
// next accept instead of spinning on a listener that stays readable.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
// The X-Nfs3d-Who text a control call claims is logged at most this long.
constexpr size_t kClaimedWhoLimit = 128;

// Who called on the unix socket, from the kernel (SO_PEERCRED), not from
// anything the caller wrote; what the caller says it is follows, escaped.
std::string PeerIdentity(int fd, std::string_view claimed) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  std::string who = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0
                        ? absl::StrCat("uid ", cred.uid, " (pid ", cred.pid)
                        : std::string("an unknown peer (");
  if (!claimed.empty()) {
    absl::StrAppend(
        &who, cred.pid != 0 ? ", " : "", "says \"",
        absl::CHexEscape(
            absl::string_view(claimed.data(), claimed.size()).substr(0, kClaimedWhoLimit)),
        claimed.size() > kClaimedWhoLimit ? "...\"" : "\"");
  }
  return absl::StrCat(who, ")");
}

// The open sessions of one kind of listener, oldest first; all on the
// server's one thread.
class SessionBase;
struct Sessions {
  std::list<SessionBase*> open;
};

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Close() = 0;
};

// One request, one answer, then close. Runs on the server's only thread.
template <typename Socket>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Socket>> {
 public:
  // `control` is null on TCP: control calls come only through the unix socket.
  Session(Socket socket, const MetricsServer::Render* render, const MetricsServer::Control* control,
          Sessions* sessions)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        render_(render),
        control_(control),
        sessions_(sessions) {
    parser_.header_limit(kHeaderLimit);
    parser_.body_limit(control_ ? kControlBodyLimit : kTcpBodyLimit);
  }

  void Start() {
    if (sessions_->open.size() >= kMaxSessions) sessions_->open.front()->Close();
    place_ = sessions_->open.insert(sessions_->open.end(), this);
    auto self = this->shared_from_this();
    timer_.expires_after(kSessionTimeout);
    timer_.async_wait([self](const error_code& ec) {
      if (!ec) self->Close();
    });
    http::async_read(socket_, buffer_, parser_,
                     [self](const error_code& ec, size_t) { self->OnRead(ec); });
  }

  void Close() override {
    if (closed_) return;
    closed_ = true;
    sessions_->open.erase(place_);
    error_code ignored;
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
    timer_.cancel();
  }

 private:
  void OnRead(const error_code& ec) {
    if (ec || closed_) {
      Close();
      return;
    }
    const http::request<http::string_body>& request = parser_.get();
    auto response = std::make_shared<http::response<http::string_body>>();
    response->version(request.version());
    response->keep_alive(false);
    response->set(http::field::server, "nfs3d");
    const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
    std::string_view target(request.target().data(), request.target().size());
    const bool metrics = target == "/metrics" || target.substr(0, 9) == "/metrics?";
    if (control_ && *control_ && !metrics && target != "/") {
      std::string_view method(request.method_string().data(), request.method_string().size());
      auto who = request.find("X-Nfs3d-Who");
      std::string_view claimed;
      if (who != request.end()) claimed = {who->value().data(), who->value().size()};
      MetricsServer::ControlAnswer answer = (*control_)(
          method, target, PeerIdentity(socket_.native_handle(), claimed), request.body());
      response->result(static_cast<http::status>(answer.status));
      response->set(http::field::content_type, "text/plain");
      response->body() = std::move(answer.body);
    } else if (!get) {
      response->result(http::status::method_not_allowed);
      response->body() = "only GET\n";
    } else if (metrics) {
      response->result(http::status::ok);
      response->set(http::field::content_type, kContentType);
      response->body() = (*render_)(control_ ? MetricsServer::Audience::kControlSocket
                                             : MetricsServer::Audience::kTcp);
    } else if (target == "/") {
      response->result(http::status::ok);
      response->set(http::field::content_type, "text/plain");
      response->body() = "nfs3d: metrics at /metrics\n";
    } else {
      response->result(http::status::not_found);
      response->body() = "not found\n";
    }
    response->prepare_payload();
    if (request.method() == http::verb::head) response->body().clear();
    auto self = this->shared_from_this();
    http::async_write(socket_, *response,
                      [self, response](const error_code&, size_t) { self->Close(); });
  }

  Socket socket_;
  asio::steady_timer timer_;
  const MetricsServer::Render* render_;
  const MetricsServer::Control* control_;
  Sessions* sessions_;
  std::list<SessionBase*>::iterator place_;
  bool closed_ = false;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
};

// A listener with its sessions and the timer of its accept back-off.
template <typename Acceptor>
struct Listener {
  explicit Listener(Acceptor a) : acceptor(std::move(a)), retry(acceptor.get_executor()) {}
  Acceptor acceptor;
  asio::steady_timer retry;
  bool failing = false;  // logged the current run of accept failures
};

template <typename Acceptor>
void AcceptLoop(Listener<Acceptor>* l, const MetricsServer::Render* render,
                const MetricsServer::Control* control, Sessions* sessions) {
  l->acceptor.async_accept(
      [l, render, control, sessions](const error_code& ec,
                                     typename Acceptor::protocol_type::socket socket) {
        if (ec == asio::error::operation_aborted || !l->acceptor.is_open()) return;
        if (ec) {
          // E.g. EMFILE: the listener stays readable, so accepting again at once
          // would spin; the backlog holds the client meanwhile.
          if (!l->failing) NFS3D_LOG_WARNING("metrics: accept: %s; retrying", ec.message());
          l->failing = true;
          l->retry.expires_after(kAcceptBackoff);
          l->retry.async_wait([l, render, control, sessions](const error_code& wait_ec) {
            if (!wait_ec && l->acceptor.is_open()) AcceptLoop(l, render, control, sessions);
          });
          return;
        }
        l->failing = false;
        std::make_shared<Session<typename Acceptor::protocol_type::socket>>(
            std::move(socket), render, control, sessions)
            ->Start();
        AcceptLoop(l, render, control, sessions);
      });
}

using TcpListener = Listener<asio::ip::tcp::acceptor>;
using UnixListener = Listener<local_stream::acceptor>;

}  // namespace

struct MetricsServer::Impl {
  // Declared first: destroyed last, after everything that uses it.
  asio::io_context io;
  Render render;
  Control control;
  std::vector<std::unique_ptr<TcpListener>> tcp;
  std::vector<std::unique_ptr<UnixListener>> unix_sockets;
  std::vector<std::string> unix_paths;
  Sessions tcp_sessions;
  Sessions unix_sessions;
  std::thread thread;
  bool started = false;
  bool stopped = false;
};

MetricsServer::MetricsServer(Render render) : impl_(std::make_unique<Impl>()) {
  impl_->render = std::move(render);
}

MetricsServer::~MetricsServer() { Stop(); }

absl::StatusOr<uint16_t> MetricsServer::ListenTcp(const std::string& address, uint16_t port) {
  error_code ec;
  asio::ip::address addr = asio::ip::make_address(address, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("metrics: bad address ", address));
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(impl_->io);
  asio::ip::tcp::endpoint endpoint(addr, port);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec && addr.is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("metrics: cannot listen on ", address, " port ", port, ": ", ec.message()));
  }
  uint16_t bound = acceptor->local_endpoint(ec).port();
  impl_->tcp.push_back(std::make_unique<TcpListener>(std::move(*acceptor)));
  return bound;
}

absl::Status MetricsServer::ListenUnix(const std::string& path) {
  error_code ec;
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::AlreadyExistsError(absl::StrCat("metrics: ", path, " exists and is no socket"));
    }
    // A socket someone still answers on belongs to a running server.
    local_stream::socket probe(impl_->io);
    probe.connect(local_stream::endpoint(path), ec);
    if (!ec) {
      return absl::AlreadyExistsError(absl::StrCat("metrics: another server answers on ", path));
    }
    unlink(path.c_str());
  }
  auto acceptor = std::make_unique<local_stream::acceptor>(impl_->io);
  acceptor->open(local_stream(), ec);
  // 0600 from the moment it exists (common/unix_socket.h).
  absl::Status bound =
      ec ? absl::OkStatus() : BindUnixSocket(acceptor->native_handle(), path, 0600);
  if (!bound.ok()) return absl::UnavailableError(absl::StrCat("metrics: ", bound.message()));
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return absl::UnavailableError(
        absl::StrCat("metrics: cannot listen on ", path, ": ", ec.message()));
  impl_->unix_sockets.push_back(std::make_unique<UnixListener>(std::move(*acceptor)));
  impl_->unix_paths.push_back(path);
  return absl::OkStatus();
}

absl::StatusOr<uint16_t> MetricsServer::AdoptTcp(int fd) {
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    close(fd);
    return absl::InvalidArgumentError("metrics: inherited socket: getsockname failed");
  }
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(impl_->io);
  error_code ec;
  acceptor->assign(local.ss_family == AF_INET6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), fd, ec);
  if (ec) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("metrics: inherited socket: ", ec.message()));
  }
  uint16_t bound = acceptor->local_endpoint(ec).port();
  impl_->tcp.push_back(std::make_unique<TcpListener>(std::move(*acceptor)));
  return bound;
}

absl::Status MetricsServer::AdoptUnix(int fd, const std::string& path) {
  auto acceptor = std::make_unique<local_stream::acceptor>(impl_->io);
  error_code ec;
  acceptor->assign(local_stream(), fd, ec);
  if (ec) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("metrics: inherited socket: ", ec.message()));
  }
  impl_->unix_sockets.push_back(std::make_unique<UnixListener>(std::move(*acceptor)));
  impl_->unix_paths.push_back(path);
  return absl::OkStatus();
}

std::vector<int> MetricsServer::TcpListenerFds() const {
  std::vector<int> fds;
  for (auto& l : impl_->tcp) fds.push_back(l->acceptor.native_handle());
  return fds;
}

std::vector<int> MetricsServer::UnixListenerFds() const {
  std::vector<int> fds;
  for (auto& l : impl_->unix_sockets) fds.push_back(l->acceptor.native_handle());
  return fds;
}
void MetricsServer::SetControl(Control control) { impl_->control = std::move(control); }

void MetricsServer::Start() {
  if (impl_->started) return;
  impl_->started = true;
  for (auto& l : impl_->tcp) AcceptLoop(l.get(), &impl_->render, nullptr, &impl_->tcp_sessions);
  for (auto& l : impl_->unix_sockets) {
    AcceptLoop(l.get(), &impl_->render, &impl_->control, &impl_->unix_sessions);
  }
  impl_->thread = std::thread([this] {
    try {
      impl_->io.run();
    } catch (const std::exception& e) {
      NFS3D_LOG_ERROR("metrics server stopped: %s", e.what());
    }
  });
}

void MetricsServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  error_code ignored;
  for (auto& l : impl_->tcp) l->acceptor.close(ignored);
  for (auto& l : impl_->unix_sockets) l->acceptor.close(ignored);
  for (const std::string& path : impl_->unix_paths) unlink(path.c_str());
}

namespace {

// What one request carries besides its target.
struct Request {
  http::verb method = http::verb::get;
  std::string path;
  std::string who;
  std::string body;
};

// The error for a control call's non-200 answer: its body says why.
absl::Status AnswerError(unsigned status, const std::string& body) {
  std::string why = body;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  if (why.empty()) why = absl::StrCat("HTTP status ", status);
  switch (status) {
    case 400:
      return absl::InvalidArgumentError(why);
    case 404:
      return absl::NotFoundError(why);
    case 409:
      return absl::FailedPreconditionError(why);
    default:
      return absl::UnavailableError(why);
  }
}

template <typename Socket>
absl::StatusOr<std::string> Exchange(Socket& socket, const std::string& host, const Request& req) {
  // A control call may wait for the cluster ([ceph] timeout): allow for it.
  timeval tv{req.method == http::verb::get ? 5 : 60, 0};
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  http::request<http::string_body> request{req.method, req.path, 11};
  request.set(http::field::host, host);
  request.set(http::field::user_agent, "nfs3d");
  if (!req.who.empty()) request.set("X-Nfs3d-Who", req.who);
  request.body() = req.body;
  request.prepare_payload();
  error_code ec;
  http::write(socket, request, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("sending request: ", ec.message()));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(socket, buffer, parser, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("reading answer: ", ec.message()));
  auto& response = parser.get();
  if (response.result() != http::status::ok) {
    return AnswerError(response.result_int(), response.body());
  }
  return std::move(response.body());
}

absl::StatusOr<std::string> Send(const std::string& target, const Request& req) {
  asio::io_context io;
  error_code ec;
  if (target.rfind("unix:", 0) == 0) {
    const std::string socket_path = target.substr(5);
    local_stream::socket socket(io);
    socket.connect(local_stream::endpoint(socket_path), ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to ", socket_path, ": ", ec.message()));
    }
    return Exchange(socket, "localhost", req);
  }
  size_t colon = target.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("'", target, "' is not HOST:PORT"));
  }
  std::string host = target.substr(0, colon);
  std::string port = target.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  asio::ip::tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(host, port, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("resolving ", target, ": ", ec.message()));
  asio::ip::tcp::socket socket(io);
  asio::connect(socket, endpoints, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", target, ": ", ec.message()));
  }
  return Exchange(socket, host, req);
}

}  // namespace

std::string ControlSocketPath(const std::string& state_dir) {
  return absl::StrCat(state_dir, "/nfs3d.sock");
}

std::string ControlSocketTarget(const std::string& state_dir) {
  return absl::StrCat("unix:", ControlSocketPath(state_dir));
}

absl::StatusOr<std::string> HttpGet(const std::string& target, const std::string& path) {
  return Send(target, Request{http::verb::get, path, "", ""});
}

absl::StatusOr<std::string> HttpCall(const std::string& target, const std::string& method,
                                     const std::string& path, const std::string& who,
                                     const std::string& body) {
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) {
    return absl::InvalidArgumentError(absl::StrCat("unknown HTTP method ", method));
  }
  return Send(target, Request{verb, path, who, body});
}

}  // namespace nfs3d::stats
