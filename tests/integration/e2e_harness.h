// Shared pieces of the end-to-end tests that run the nfs3d binary: a child
// nfs3d process on free loopback ports with its own exports, and a raw RPC
// client that controls everything a hostile or retransmitting client would
// (xid, source address and port, transport, exact bytes). Header-only.
#ifndef NFS3D_TESTS_INTEGRATION_E2E_HARNESS_H_
#define NFS3D_TESTS_INTEGRATION_E2E_HARNESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"

#include "client/rpc_client.h"
#include "rpc/call_context.h"
#include "tests/support/build_paths.h"
#include "tests/support/net.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::e2e {

namespace fs = std::filesystem;

using test_support::FreePort;
using test_support::Span;
using test_support::Str;

// XDR argument builder.
class Args {
 public:
  Args& U32(uint32_t v) {
    e_.U32(v);
    return *this;
  }
  Args& U64(uint64_t v) {
    e_.U64(v);
    return *this;
  }
  Args& Bool(bool v) {
    e_.Bool(v);
    return *this;
  }
  Args& Opaque(const std::string& b) {
    e_.Opaque(Span(b));
    return *this;
  }
  Args& String(const std::string& s) {
    e_.Opaque(Span(s));
    return *this;
  }
  Args& Raw(const std::string& b) {
    chain_.Append(b.data(), b.size());
    return *this;
  }
  // sattr3 with only the mode set.
  Args& ModeOnly(uint32_t mode) {
    Bool(true).U32(mode);
    return Bool(false).Bool(false).Bool(false).U32(0).U32(0);
  }
  std::string str() { return chain_.Flatten(); }

 private:
  xdr::BufferChain chain_;
  xdr::Encoder e_{&chain_};
};

struct Fattr {
  uint32_t type = 0, mode = 0, nlink = 0, uid = 0, gid = 0;
  uint64_t size = 0, fsid = 0, fileid = 0;
};

inline Fattr DecodeFattr(xdr::Decoder& d) {
  Fattr a;
  a.type = d.U32();
  a.mode = d.U32();
  a.nlink = d.U32();
  a.uid = d.U32();
  a.gid = d.U32();
  a.size = d.U64();
  d.U64();  // used
  d.U64();  // rdev
  a.fsid = d.U64();
  a.fileid = d.U64();
  for (int i = 0; i < 6; ++i) d.U32();  // times
  return a;
}
inline std::optional<Fattr> DecodePostOpAttr(xdr::Decoder& d) {
  if (!d.Bool()) return std::nullopt;
  return DecodeFattr(d);
}
inline void SkipWcc(xdr::Decoder& d) {
  if (d.Bool()) {  // pre_op_attr: size, mtime, ctime
    d.U64();
    for (int i = 0; i < 4; ++i) d.U32();
  }
  DecodePostOpAttr(d);
}

// A test's own directory, TempDir()/nfs3d-NAME-PID, emptied, with an empty
// export/ in it: where most e2e fixtures start.
inline fs::path FreshTestDir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-", name, "-", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "export");
  return dir;
}

// The exports line that gives `clients` (with their options) dir/export.
inline std::string ExportLine(
    const fs::path& dir, const std::string& clients = "127.0.0.1(rw,insecure,no_root_squash)") {
  return absl::StrCat((dir / "export").string(), " ", clients, "\n");
}

// nfs3d as a child process, configured from a directory of its own.
class NfsdProcess {
 public:
  // Writes dir/{state/,exports,nfs3d.conf}; `extra` is appended to [nfsd].
  void Configure(const fs::path& dir, const std::string& exports, const std::string& extra = "") {
    exports_ = exports;
    extra_ = extra;
    dir_ = dir;
    fs::create_directories(dir_ / "state");
    if (port_ == 0) port_ = FreePort();
    if (mount_port_ == 0) mount_port_ = FreePort();
    std::ofstream(dir_ / "exports") << exports;
    std::ofstream(dir_ / "nfs3d.conf")
        << "[nfsd]\nlisten = 0.0.0.0\nport = " << port_ << "\nmountd_port = " << mount_port_
        << "\nportmapper = off\nthreads = 4\n"
        << extra << "\n[paths]\nstate_dir = " << (dir_ / "state").string()
        << "\nexports = " << (dir_ / "exports").string() << "\n";
  }

  // Starts nfs3d and waits until NFS answers NULL over TCP and UDP. A free
  // port can be taken by another test between FreePort and nfs3d's bind
  // (tests run in parallel): then new ports are picked and it starts again.
  bool Start() {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const size_t log_before = Log().size();
      if (StartOnce()) return true;
      if (pid_ > 0 || Log().find("Address already in use", log_before) == std::string::npos) {
        return false;
      }
      port_ = mount_port_ = 0;
      Configure(dir_, exports_, extra_);
    }
    return false;
  }

  bool Answers(rpc::Transport transport) const {
    client::RpcClientOptions o;
    o.transport = transport;
    o.timeout = absl::Milliseconds(300);
    o.udp_retransmit = absl::Milliseconds(100);
    auto c = client::RpcClient::Connect("127.0.0.1", port_, o);
    if (!c.ok()) return false;
    auto r = (*c)->Call(nfs3::kProgram, 3, nfs3::kNull, {});
    return r.ok() && r->reply_stat == 0 && r->accept_stat == 0;
  }

  bool Alive() const { return pid_ > 0 && kill(pid_, 0) == 0; }

  void Kill9() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // SIGTERM and wait up to 30 s (then SIGKILL); true if it exited cleanly
  // (status 0) in time.
  bool Stop() {
    if (pid_ <= 0) return false;
    kill(pid_, SIGTERM);
    std::optional<int> status = WaitExit(absl::Seconds(30));
    return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
  }

  // Runs nfs3d where it should refuse to start: its wait status once it
  // exited, or none if it still ran after `limit` (it is killed then).
  std::optional<int> RunUntilExit(absl::Duration limit) {
    Spawn();
    return WaitExit(limit);
  }

  // Starts nfs3d and returns at once: a start that must not finish.
  void StartWithoutWaiting() { Spawn(); }
  // Sends `sig`, then waits up to `limit` as WaitExit.
  std::optional<int> SignalAndWaitExit(int sig, absl::Duration limit) {
    if (pid_ > 0) kill(pid_, sig);
    return WaitExit(limit);
  }

  std::string Log() const {
    std::ifstream in(dir_ / "nfs3d.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // True once `text` is in the log at or after byte `from`, within 30 s:
  // nfs3d writes its log lines asynchronously to the calls that cause them.
  bool WaitForLog(std::string_view text, size_t from = 0) const {
    for (int i = 0; i < 300; ++i) {
      if (Log().find(text, from) != std::string::npos) return true;
      usleep(100000);
    }
    return false;
  }

  // Starts `nfs3d --takeover` on the same configuration and waits for the
  // running one to hand over and exit: true once it exited 0 and the new
  // one, now this process, answers on the same port over TCP and UDP.
  // `env` (NAME=VALUE) is set in the new process only.
  bool TakeOver(const std::string& env = "") {
    const pid_t old = pid_;
    const size_t log_from = Log().size();
    Spawn({"--takeover"}, env);
    const pid_t successor = pid_;
    pid_ = old;
    std::optional<int> status = WaitExit(absl::Seconds(60));
    pid_ = successor;
    if (!status || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) return false;
    for (int i = 0; i < 100; ++i) {
      if (Log().find("listening on", log_from) != std::string::npos &&
          Answers(rpc::Transport::kTcp) && Answers(rpc::Transport::kUdp)) {
        return true;
      }
      usleep(100000);
    }
    return false;
  }

  // Runs `nfs3d --takeover` expecting it to give up: its wait status (none
  // if it still ran after `limit`). The running process stays this one.
  std::optional<int> TakeOverUntilExit(const std::string& env, absl::Duration limit) {
    const pid_t old = pid_;
    Spawn({"--takeover"}, env);
    std::optional<int> status = WaitExit(limit);
    pid_ = old;
    return status;
  }

  // Starts `nfs3d --takeover` and returns at once with its pid; the running
  // process stays this one (for tests that kill either at some point).
  pid_t SpawnTakeover(const std::string& env = "") {
    const pid_t old = pid_;
    Spawn({"--takeover"}, env);
    const pid_t successor = pid_;
    pid_ = old;
    return successor;
  }
  // Makes `pid` (a SpawnTakeover child) the process this object runs.
  void Adopt(pid_t pid) { pid_ = pid; }

  // NAME=VALUE set in the processes Start spawns from now on.
  void set_start_env(const std::string& env) { start_env_ = env; }

  // `nfs3d SUBCOMMAND --config <this server's> ARGS...` (e.g. "exports"):
  // its exit status, and its stdout and stderr in `output`.
  int Command(const std::string& subcommand, const std::vector<std::string>& args,
              std::string* output = nullptr) const {
    std::string cmd = absl::StrCat(test_support::Nfs3dBinary(), " ", subcommand, " --config '",
                                   (dir_ / "nfs3d.conf").string(), "'");
    for (const std::string& a : args) absl::StrAppend(&cmd, " '", a, "'");
    absl::StrAppend(&cmd, " 2>&1");
    std::FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return -1;
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    const int status = pclose(p);
    if (output) *output = out;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }
  uint16_t mount_port() const { return mount_port_; }
  const fs::path& dir() const { return dir_; }

 private:
  // Our nfs3d (started when the log was log_from long) said it listens on
  // port_ over both transports. Answers() alone is not enough: between a
  // test's FreePort (or a restart on its old port) and the bind, another
  // test's nfs3d can take the port, and then it would answer for ours.
  bool ListensOnItsPort(size_t log_from) const {
    const std::string log = Log();
    const std::string_view mine = std::string_view(log).substr(std::min(log_from, log.size()));
    for (const char* transport : {"tcp", "udp"}) {
      if (mine.find(absl::StrCat("listening on ", transport, " 0.0.0.0 port ", port_)) ==
          std::string_view::npos) {
        return false;
      }
    }
    return true;
  }

  // Starts nfs3d on the configuration, its stderr appended to nfs3d.log;
  // `extra` arguments and one NAME=VALUE `env` for it alone.
  void Spawn(std::initializer_list<const char*> extra = {}, const std::string& env = "") {
    std::string config = (dir_ / "nfs3d.conf").string();
    std::string log = (dir_ / "nfs3d.log").string();
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, 2);
      const std::string& set = env.empty() ? start_env_ : env;
      if (!set.empty()) putenv(const_cast<char*>(set.c_str()));
      std::vector<const char*> argv = {"nfs3d", "--config", config.c_str(), "--foreground"};
      argv.insert(argv.end(), extra.begin(), extra.end());
      argv.push_back(nullptr);
      execv(test_support::Nfs3dBinary(), const_cast<char* const*>(argv.data()));
      _exit(127);
    }
  }

  // Waits up to `limit` for nfs3d to exit: its wait status, or none after
  // a SIGKILL when it did not.
  std::optional<int> WaitExit(absl::Duration limit) {
    int status = 0;
    const absl::Time deadline = absl::Now() + limit;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (absl::Now() >= deadline) {
        Kill9();
        return std::nullopt;
      }
      usleep(100000);
    }
    pid_ = -1;
    return status;
  }

  // One start; false if nfs3d exited (pid_ -1) or did not answer in 60 s.
  // The limit is generous on purpose: CI runs this beside a lab VM and a
  // nice'd sanitizer build on 2 cores, where a head that mounts CephFS took
  // more than the 10 s this once allowed.
  bool StartOnce() {
    const size_t log_from = Log().size();
    Spawn();
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      if (ListensOnItsPort(log_from) && Answers(rpc::Transport::kTcp) &&
          Answers(rpc::Transport::kUdp)) {
        return true;
      }
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      usleep(100000);
    }
    return false;
  }

  fs::path dir_;
  std::string exports_, extra_;  // as configured, to configure again
  std::string start_env_;
  pid_t pid_ = -1;
  uint16_t port_ = 0, mount_port_ = 0;
};

struct ClientOptions {
  rpc::Transport transport = rpc::Transport::kTcp;
  std::string local_ip = "127.0.0.1";  // source address (any 127/8 works on lo)
  bool reserved_port = false;          // source port < 1024
  uint32_t uid = 0, gid = 0;
  bool auth_none = false;
};

// A raw RPC client on one socket (UDP or one TCP connection).
class RawClient {
 public:
  static std::unique_ptr<RawClient> Open(uint16_t port, const ClientOptions& o = {}) {
    const bool tcp = o.transport == rpc::Transport::kTcp;
    int fd = socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
    if (fd < 0) return nullptr;
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, o.local_ip.c_str(), &local.sin_addr);
    bool bound = false;
    if (o.reserved_port) {
      for (uint16_t p = 1023; p >= 600 && !bound; --p) {
        local.sin_port = htons(p);
        bound = bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) == 0;
      }
    } else {
      local.sin_port = 0;
      bound = bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) == 0;
    }
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(port);
    server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!bound || connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) != 0) {
      close(fd);
      return nullptr;
    }
    return std::unique_ptr<RawClient>(new RawClient(fd, o));
  }
  ~RawClient() { close(fd_); }

  std::string EncodeCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                         const std::string& args) const {
    Args a;
    a.U32(xid).U32(0).U32(2).U32(prog).U32(vers).U32(proc);
    if (o_.auth_none) {
      a.U32(kAuthNone).U32(0);
    } else {
      Args body;
      body.U32(0).String("e2e").U32(o_.uid).U32(o_.gid).U32(0);
      a.U32(kAuthSys).Opaque(body.str());
    }
    a.U32(kAuthNone).U32(0);
    return a.str() + args;
  }

  // One message: a datagram, or a TCP record in one last fragment.
  bool SendMessage(const std::string& message) {
    if (o_.transport == rpc::Transport::kUdp) return SendBytes(message);
    uint32_t mark = htonl(0x80000000u | static_cast<uint32_t>(message.size()));
    return SendBytes(std::string(reinterpret_cast<const char*>(&mark), 4) + message);
  }
  bool SendBytes(const std::string& bytes) {
    if (o_.transport == rpc::Transport::kUdp) {
      return send(fd_, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size());
    }
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // The next message, or nullopt after `wait` (or when the peer closed).
  std::optional<std::string> Receive(absl::Duration wait) {
    absl::Time deadline = absl::Now() + wait;
    for (;;) {
      if (o_.transport == rpc::Transport::kTcp) {
        if (auto rec = TakeRecord()) return rec;
        if (peer_closed_) return std::nullopt;
      }
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) <= 0) continue;
      char buf[65536];
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (o_.transport == rpc::Transport::kUdp) {
        if (n >= 0) return std::string(buf, static_cast<size_t>(n));
        continue;  // e.g. ECONNREFUSED from an earlier datagram
      }
      if (n <= 0) {
        peer_closed_ = true;
        continue;
      }
      stream_.append(buf, static_cast<size_t>(n));
    }
  }

  // A call with the given xid; UDP retransmits (same xid) every 500 ms.
  std::optional<client::RpcReply> Call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                       const std::string& args,
                                       absl::Duration timeout = absl::Seconds(5)) {
    const std::string msg = EncodeCall(xid, prog, vers, proc, args);
    absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (!SendMessage(msg)) {
        return Failed(absl::StrCat("send failed: ", strerror(errno)));
      }
      absl::Time resend = o_.transport == rpc::Transport::kUdp
                              ? std::min(deadline, absl::Now() + absl::Milliseconds(500))
                              : deadline;
      while (absl::Now() < resend) {
        std::optional<std::string> m = Receive(resend - absl::Now());
        if (!m) break;
        client::RpcReply r;
        if (client::ParseReply(Span(*m), &r) && r.xid == xid) {
          r.raw = std::move(*m);
          return r;
        }
      }
      if (peer_closed_) {
        return Failed("the server closed the connection");
      }
    }
    return Failed(absl::StrCat("no reply in ", absl::FormatDuration(timeout)));
  }
  // Why the last Call returned nullopt.
  const std::string& last_failure() const { return last_failure_; }
  std::optional<client::RpcReply> Call(uint32_t prog, uint32_t vers, uint32_t proc,
                                       const std::string& args,
                                       absl::Duration timeout = absl::Seconds(5)) {
    return Call(next_xid_++, prog, vers, proc, args, timeout);
  }

  // TCP: true once the server has closed the connection (within `wait`).
  bool WaitClosed(absl::Duration wait) {
    absl::Time deadline = absl::Now() + wait;
    while (!peer_closed_ && absl::Now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) peer_closed_ = true;
    }
    return peer_closed_;
  }

  uint16_t local_port() const {
    sockaddr_in a{};
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
  }
  int fd() const { return fd_; }

 private:
  RawClient(int fd, const ClientOptions& o) : fd_(fd), o_(o) {
    next_xid_ = static_cast<uint32_t>(getpid()) << 12;
  }

  // Records why a call failed, also on stderr: tests that call through
  // helpers then still show it.
  std::nullopt_t Failed(std::string why) {
    std::fprintf(stderr, "RawClient (local port %u): call failed: %s\n", local_port(), why.c_str());
    last_failure_ = std::move(why);
    return std::nullopt;
  }

  std::optional<std::string> TakeRecord() {
    std::string record;
    size_t pos = 0;
    while (stream_.size() >= pos + 4) {
      uint32_t mark;
      std::memcpy(&mark, stream_.data() + pos, 4);
      mark = ntohl(mark);
      size_t len = mark & 0x7fffffffu;
      if (stream_.size() < pos + 4 + len) return std::nullopt;
      record.append(stream_, pos + 4, len);
      pos += 4 + len;
      if (mark & 0x80000000u) {
        stream_.erase(0, pos);
        return record;
      }
    }
    return std::nullopt;
  }

  int fd_;
  ClientOptions o_;
  uint32_t next_xid_;
  std::string last_failure_;
  std::string stream_;
  bool peer_closed_ = false;
};

// NFSv3/MOUNT calls on top of a RawClient, with the results split up.
struct NfsReply {
  bool ok = false;          // a reply arrived
  uint32_t reply_stat = 0;  // 0 accepted, 1 denied
  uint32_t accept_stat = 0;
  uint32_t reject_stat = 0;  // when denied: 0 RPC_MISMATCH, 1 AUTH_ERROR
  uint32_t auth_stat = 0;
  uint32_t status = 0;  // first word of the results (nfsstat3 / mountstat3)
  std::string results;
  std::string raw;
};

inline NfsReply ToNfsReply(const std::optional<client::RpcReply>& r) {
  NfsReply out;
  if (!r) return out;
  out.ok = true;
  out.reply_stat = r->reply_stat;
  out.accept_stat = r->accept_stat;
  out.reject_stat = r->reject_stat;
  out.auth_stat = r->auth_stat;
  out.results = r->results;
  out.raw = r->raw;
  if (r->reply_stat == 0 && r->accept_stat == 0 && r->results.size() >= 4) {
    xdr::Decoder d(Span(r->results));
    out.status = d.U32();
  }
  return out;
}

inline NfsReply Nfs(RawClient& c, uint32_t proc, const std::string& args,
                    absl::Duration timeout = absl::Seconds(5)) {
  return ToNfsReply(c.Call(nfs3::kProgram, 3, proc, args, timeout));
}

// MNT; returns the root handle ("" on failure, status in *status).
inline std::string Mount(RawClient& c, const std::string& path, uint32_t* status = nullptr) {
  NfsReply r = ToNfsReply(c.Call(mount3::kProgram, 3, mount3::kMnt, Args().String(path).str()));
  if (status) *status = r.ok && r.reply_stat == 0 && r.accept_stat == 0 ? r.status : 0xffffffffu;
  if (!r.ok || r.status != 0) return "";
  xdr::Decoder d(Span(r.results));
  d.U32();
  return Str(d.Opaque(64));
}

inline std::string DirOp(const std::string& dir, const std::string& name) {
  return Args().Opaque(dir).String(name).str();
}

// LOOKUP: the object's handle and attributes.
struct LookupResult {
  uint32_t status = 0xffffffffu;
  std::string fh;
  Fattr attr;
};
inline LookupResult Lookup(RawClient& c, const std::string& dir, const std::string& name) {
  LookupResult out;
  NfsReply r = Nfs(c, nfs3::kLookup, DirOp(dir, name));
  if (!r.ok || r.reply_stat != 0 || r.accept_stat != 0) return out;
  out.status = r.status;
  if (r.status != 0) return out;
  xdr::Decoder d(Span(r.results));
  d.U32();
  out.fh = Str(d.Opaque(64));
  if (auto a = DecodePostOpAttr(d)) out.attr = *a;
  return out;
}

inline std::optional<Fattr> Getattr(RawClient& c, const std::string& fh, uint32_t* status,
                                    absl::Duration timeout = absl::Seconds(5)) {
  NfsReply r = Nfs(c, nfs3::kGetattr, Args().Opaque(fh).str(), timeout);
  *status = r.ok && r.reply_stat == 0 && r.accept_stat == 0 ? r.status : 0xffffffffu;
  if (*status != 0) return std::nullopt;
  xdr::Decoder d(Span(r.results));
  d.U32();
  return DecodeFattr(d);
}

// CREATE/MKDIR results: the new handle (post_op_fh3), if any.
inline std::string NewHandle(const NfsReply& r) {
  if (!r.ok || r.status != 0) return "";
  xdr::Decoder d(Span(r.results));
  d.U32();
  if (!d.Bool()) return "";
  return Str(d.Opaque(64));
}

// WRITE of `data` at `offset`, `stable` as in stable_how; returns the write
// verifier (8 bytes) and, when asked, how the data was committed.
inline std::string WriteVerifier(RawClient& c, const std::string& fh, uint64_t offset,
                                 const std::string& data, uint32_t stable,
                                 uint32_t* committed = nullptr) {
  NfsReply r = Nfs(c, nfs3::kWrite,
                   Args()
                       .Opaque(fh)
                       .U64(offset)
                       .U32(static_cast<uint32_t>(data.size()))
                       .U32(stable)
                       .Opaque(data)
                       .str());
  EXPECT_EQ(r.status, nfs3::NFS3_OK);
  xdr::Decoder d(Span(r.results));
  d.U32();
  SkipWcc(d);
  EXPECT_EQ(d.U32(), data.size());
  const uint32_t how = d.U32();
  if (committed != nullptr) *committed = how;
  return Str(d.FixedOpaque(8));
}

// COMMIT of the whole file; returns the write verifier (8 bytes).
inline std::string CommitVerifier(RawClient& c, const std::string& fh) {
  NfsReply r = Nfs(c, nfs3::kCommit, Args().Opaque(fh).U64(0).U32(0).str());
  EXPECT_EQ(r.status, nfs3::NFS3_OK);
  xdr::Decoder d(Span(r.results));
  d.U32();
  SkipWcc(d);
  return Str(d.FixedOpaque(8));
}

inline std::string CreateArgs(const std::string& dir, const std::string& name,
                              uint32_t how = nfs3::GUARDED) {
  return Args().Opaque(dir).String(name).U32(how).ModeOnly(0644).str();
}
inline std::string MkdirArgs(const std::string& dir, const std::string& name) {
  return Args().Opaque(dir).String(name).ModeOnly(0755).str();
}

}  // namespace nfs3d::e2e

#endif  // NFS3D_TESTS_INTEGRATION_E2E_HARNESS_H_
