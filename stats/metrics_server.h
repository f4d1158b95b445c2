// A tiny HTTP/1.1 server (Boost.Beast) for the Prometheus endpoint: GET
// /metrics answers with whatever the render callback returns. It listens on
// TCP addresses (the [metrics] section) and on a unix socket in the state
// directory (nfs3stat's default, mode 0600 so only root reads it). One
// thread; one request per connection, its header and body bounded by
// Beast's parser; idle connections are closed after a few seconds, and at
// most 64 are open per kind of listener (a new one closes the oldest). When
// accept fails (EMFILE) the listener waits 100 ms instead of spinning. The
// unix socket also answers the control calls of the `nfs3d` command
// (SetControl): only root reaches it, so they are never served on TCP.
#ifndef NFS3D_STATS_METRICS_SERVER_H_
#define NFS3D_STATS_METRICS_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nfs3d::stats {

class MetricsServer {
 public:
  // Who a page is for: anyone who reaches a TCP listener, or root on the
  // unix socket (which may see per-client addresses, uids and principals).
  enum class Audience { kTcp, kControlSocket };
  // Returns the /metrics body; called on the server's thread.
  using Render = std::function<std::string(Audience)>;

  // A control call's answer: an HTTP status and a text body.
  struct ControlAnswer {
    int status = 200;
    std::string body;
  };
  // Answers a request other than GET /metrics that came in on the unix
  // socket: its method ("GET", "POST"), target, who called and the body.
  // `who` is the caller's uid and pid from the kernel (SO_PEERCRED), then
  // what its X-Nfs3d-Who header claims, escaped and bounded:
  // 'uid 0 (pid 42, says "root@host at ...")'. Called on the server's thread.
  using Control = std::function<ControlAnswer(std::string_view method, std::string_view target,
                                              std::string_view who, const std::string& body)>;

  explicit MetricsServer(Render render);
  ~MetricsServer();  // Stop()s
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Before Start(). Port 0 picks one; the bound port is returned.
  absl::StatusOr<uint16_t> ListenTcp(const std::string& address, uint16_t port);
  // Replaces a stale socket file at `path`; the socket gets mode 0600.
  absl::Status ListenUnix(const std::string& path);

  // Before Start(): a listening socket another process handed over
  // (daemon/handover.h); takes the descriptor. A unix socket keeps its path
  // (removed again by Stop).
  absl::StatusOr<uint16_t> AdoptTcp(int fd);
  absl::Status AdoptUnix(int fd, const std::string& path);
  // The listening sockets, for a successor (the server keeps them).
  std::vector<int> TcpListenerFds() const;
  std::vector<int> UnixListenerFds() const;

  // Before Start().
  void SetControl(Control control);

  void Start();
  // Closes the listeners and joins the thread; removes the unix socket file.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The control socket of the server whose state directory is `state_dir`
// (<state_dir>/nfs3d.sock), and the same as a target for HttpGet/HttpCall.
std::string ControlSocketPath(const std::string& state_dir);
std::string ControlSocketTarget(const std::string& state_dir);

// Fetches http://<target><path> where target is "HOST:PORT", "[V6]:PORT" or
// "unix:/path/to/socket". Returns the body of a 200 answer.
absl::StatusOr<std::string> HttpGet(const std::string& target, const std::string& path);

// A control call: `method` to `path` with `body` and the X-Nfs3d-Who header.
// Returns the body of a 200 answer; any other answer is an error whose
// message is that body (FailedPrecondition for 409, InvalidArgument for
// 400, NotFound for 404).
absl::StatusOr<std::string> HttpCall(const std::string& target, const std::string& method,
                                     const std::string& path, const std::string& who,
                                     const std::string& body);

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_METRICS_SERVER_H_
