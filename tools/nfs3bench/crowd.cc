#include "tools/nfs3bench/crowd.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/async_rpc_client.h"
#include "client/rpc_wire.h"
#include "xdr/buffer_chain.h"
#include "xdr/encoder.h"
#include "xdr/nfs3_client_codec.h"

namespace nfs3d::bench {
namespace {

constexpr absl::Duration kRetryConnect = absl::Milliseconds(100);
constexpr absl::Duration kTick = absl::Milliseconds(50);

struct Conn {
  int fd = -1;
  int depth = 1;    // calls this connection keeps in flight
  std::string out;  // bytes not yet sent: out[out_off, end)
  size_t out_off = 0;
  bool want_write = false;                           // EPOLLOUT registered
  std::vector<uint8_t> in;                           // received, not yet parsed
  std::string record;                                // fragments of a reply not yet complete
  std::unordered_map<uint32_t, absl::Time> pending;  // xid -> first sent
  absl::Time next_due;                               // interval mode: when the next calls go out
  int reopens = 0;                                   // opened again since its last reply
  uint64_t breaks = 0;  // times it broke: a new socket may get the same fd number
};

// A connection that the server closes this often in a row without answering
// has its calls failed instead of sent once more.
constexpr int kMaxReopensInARow = 3;

// A min-heap entry: wake connection `index` at `when`.
struct Wake {
  absl::Time when;
  int index;
  bool operator>(const Wake& o) const { return when > o.when; }
};

void SummarizeWindows(const std::vector<uint32_t>& per_100ms, CrowdResult* r);

class Crowd {
 public:
  Crowd(const CrowdOptions& o, const std::atomic<bool>* stop) : o_(o), stop_(stop) {}
  ~Crowd() {
    for (Conn& c : conns_) {
      if (c.fd >= 0) close(c.fd);
    }
    if (epoll_ >= 0) close(epoll_);
  }

  absl::Status Open();
  CrowdResult Run();

 private:
  absl::StatusOr<int> Connect();
  bool Reopen(int i);
  void Broken(int i);
  void Watch(int i, bool write);
  // The call message (with its record mark) carrying this xid.
  std::string CallWithXid(uint32_t xid) const;
  void StartCall(int i);
  void ResendPending(int i);
  void Flush(int i);
  void OnReadable(int i);
  void OnReply(absl::Span<const uint8_t> message);
  void Fail(const std::string& why);
  void OnWake(int i, absl::Time now);
  void ExpireCalls(absl::Time now);
  bool Issuing(absl::Time now) const;
  size_t Pending() const;
  void Summarize(absl::Time first, CrowdResult* r);

  const CrowdOptions& o_;
  const std::atomic<bool>* stop_;
  int epoll_ = -1;
  std::vector<Conn> conns_;
  std::unordered_map<uint32_t, int> owner_;  // xid -> connection
  std::priority_queue<Wake, std::vector<Wake>, std::greater<Wake>> wakes_;
  std::string call_;  // record mark + call with xid 0; patched per call
  uint32_t next_xid_ = 0;
  uint64_t started_ = 0;
  absl::Time end_;
  std::vector<float> latencies_ms_;
  std::vector<uint32_t> per_100ms_;  // calls answered in each 100 ms since first_
  absl::Time first_;
  CrowdResult r_;
};

absl::StatusOr<int> Crowd::Connect() {
  sockaddr_storage addr;
  socklen_t len;
  absl::Status parsed = client::ParseNumericAddress(o_.host, o_.port, &addr, &len);
  if (!parsed.ok()) return parsed;
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
  timeval tv{10, 0};  // bounds the blocking connect
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect: ", strerror(err)));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  tv = timeval{0, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

absl::Status Crowd::Open() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) return absl::InternalError(absl::StrCat("epoll: ", strerror(errno)));
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  client::EncodeCallHeader(e, 0, nfs3::kProgram, nfs3::kVersion, o_.proc, o_.cred);
  if (o_.proc == nfs3::kGetattr) Encode(e, nfs3::GETATTR3args{o_.fh});
  std::vector<uint8_t> data(o_.proc == nfs3::kWrite ? o_.write_size : 0);
  for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(k * 131 + 7);
  if (o_.proc == nfs3::kWrite) {
    Encode(e, nfs3::WRITE3args{o_.fh, 0, o_.write_size,
                               o_.file_sync ? nfs3::FILE_SYNC : nfs3::UNSTABLE, data});
  }
  std::string body = chain.Flatten();
  const uint32_t mark = 0x80000000u | static_cast<uint32_t>(body.size());
  call_ = {static_cast<char>(mark >> 24), static_cast<char>(mark >> 16),
           static_cast<char>(mark >> 8), static_cast<char>(mark)};
  call_ += body;
  next_xid_ = static_cast<uint32_t>(getpid()) << 16;
  conns_.resize(static_cast<size_t>(o_.connections));
  for (int i = 0; i < o_.connections; ++i) {
    conns_[i].depth = o_.outstanding / o_.connections + (i < o_.outstanding % o_.connections);
    absl::StatusOr<int> fd = Connect();
    if (!fd.ok()) {
      return absl::UnavailableError(
          absl::StrCat("connection ", i + 1, " of ", o_.connections, ": ", fd.status().message()));
    }
    conns_[i].fd = *fd;
    Watch(i, false);
  }
  std::printf("# connected %d\n", o_.connections);
  std::fflush(stdout);
  return absl::OkStatus();
}

void Crowd::Watch(int i, bool write) {
  Conn& c = conns_[i];
  epoll_event ev{};
  ev.events = write ? static_cast<uint32_t>(EPOLLIN | EPOLLOUT) : static_cast<uint32_t>(EPOLLIN);
  ev.data.u32 = static_cast<uint32_t>(i);
  if (epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev) != 0) epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &ev);
  c.want_write = write;
}

bool Crowd::Reopen(int i) {
  absl::StatusOr<int> fd = Connect();
  if (!fd.ok()) {
    ++r_.connect_failures;
    wakes_.push({absl::Now() + kRetryConnect, i});
    return false;
  }
  ++r_.reconnects;
  conns_[i].fd = *fd;
  Watch(i, false);
  ResendPending(i);
  return true;
}

void Crowd::Broken(int i) {
  Conn& c = conns_[i];
  close(c.fd);  // also leaves the epoll set
  c.fd = -1;
  c.out.clear();
  c.out_off = 0;
  c.in.clear();
  c.record.clear();
  c.want_write = false;
  ++c.breaks;
  // Calls in flight are sent again at once; an idle connection opens again
  // when it next has a call to send (a reconnect storm helps no one).
  if (c.pending.empty()) return;
  if (++c.reopens <= kMaxReopensInARow) {
    Reopen(i);
    return;
  }
  for (const auto& [xid, sent] : c.pending) {
    owner_.erase(xid);
    Fail("connection closed by the server again and again");
  }
  c.pending.clear();
}

void Crowd::ResendPending(int i) {
  Conn& c = conns_[i];
  for (const auto& [xid, sent] : c.pending) c.out += CallWithXid(xid);
  Flush(i);
}

std::string Crowd::CallWithXid(uint32_t xid) const {
  std::string m = call_;
  for (int b = 0; b < 4; ++b) m[4 + b] = static_cast<char>(xid >> (24 - 8 * b));  // after the mark
  return m;
}

void Crowd::StartCall(int i) {
  Conn& c = conns_[i];
  if (c.fd < 0 && !Reopen(i)) {
    ++r_.errors;  // the call could not be sent; Reopen retries the connection
    if (r_.first_error.empty()) r_.first_error = "cannot reconnect";
    return;
  }
  const uint32_t xid = next_xid_++;
  c.out += CallWithXid(xid);
  c.pending.emplace(xid, absl::Now());
  owner_[xid] = i;
  ++started_;
  Flush(i);
}

void Crowd::Flush(int i) {
  Conn& c = conns_[i];
  while (c.fd >= 0 && c.out_off < c.out.size()) {
    ssize_t n =
        send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out_off += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!c.want_write) Watch(i, true);
      return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      Broken(i);
      return;
    }
  }
  if (c.fd < 0) return;
  c.out.clear();
  c.out_off = 0;
  if (c.want_write) Watch(i, false);
}

void Crowd::OnReadable(int i) {
  Conn& c = conns_[i];
  uint8_t buf[16384];
  ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    Broken(i);
    return;
  }
  c.in.insert(c.in.end(), buf, buf + n);
  size_t at = 0;
  while (c.in.size() - at >= 4) {
    const uint8_t* p = c.in.data() + at;
    const uint32_t mark = (uint32_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
    const size_t len = mark & 0x7fffffffu;
    if (c.in.size() - at - 4 < len) break;
    c.record.append(reinterpret_cast<const char*>(p + 4), len);
    at += 4 + len;
    if (mark & 0x80000000u) {
      std::string record = std::move(c.record);
      c.record.clear();
      const uint64_t breaks = c.breaks;
      OnReply(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(record.data()), record.size()));
      if (c.breaks != breaks) return;  // broken while sending the next call: c.in is gone
    }
  }
  c.in.erase(c.in.begin(), c.in.begin() + static_cast<ptrdiff_t>(at));
}

void Crowd::Fail(const std::string& why) {
  ++r_.errors;
  if (r_.first_error.empty()) r_.first_error = why;
}

void Crowd::OnReply(absl::Span<const uint8_t> message) {
  uint32_t xid = 0;
  absl::Span<const uint8_t> results;
  absl::Status status = client::ParseReplyHeader(message, &xid, &results);
  auto owner = owner_.find(xid);
  if (owner == owner_.end()) return;  // a call already timed out
  const int i = owner->second;
  owner_.erase(owner);
  Conn& c = conns_[i];
  c.reopens = 0;
  auto it = c.pending.find(xid);
  const absl::Time now = absl::Now();
  latencies_ms_.push_back(static_cast<float>(absl::ToDoubleMilliseconds(now - it->second)));
  c.pending.erase(it);
  if (!status.ok()) {
    Fail(std::string(status.message()));
  } else if (o_.proc != nfs3::kNull && (results.size() < 4 || results[3] != 0 || results[0] != 0 ||
                                        results[1] != 0 || results[2] != 0)) {
    Fail(o_.proc == nfs3::kWrite ? "WRITE: not NFS3_OK" : "GETATTR: not NFS3_OK");
  } else {
    ++r_.ops;
    const size_t window = static_cast<size_t>((now - first_) / absl::Milliseconds(100));
    if (per_100ms_.size() <= window) per_100ms_.resize(window + 1);
    ++per_100ms_[window];
  }
  if (o_.interval == absl::ZeroDuration() && Issuing(now)) StartCall(i);
}

bool Crowd::Issuing(absl::Time now) const {
  return now < end_ && !(stop_ != nullptr && stop_->load()) && (o_.ops == 0 || started_ < o_.ops);
}

void Crowd::OnWake(int i, absl::Time now) {
  Conn& c = conns_[i];
  if (o_.interval == absl::ZeroDuration()) {  // only a connection retry
    if (c.fd < 0 && !c.pending.empty()) Reopen(i);
    return;
  }
  if (now < c.next_due) {  // a connection retry came first
    if (c.fd < 0 && !c.pending.empty()) Reopen(i);
    return;
  }
  // A connection still waiting for the last interval's calls skips a beat.
  if (c.pending.empty() && Issuing(now)) {
    for (int k = 0; k < c.depth; ++k) StartCall(i);
  }
  c.next_due += o_.interval;
  if (c.next_due < now) c.next_due = now + o_.interval;
  wakes_.push({c.next_due, i});
}

void Crowd::ExpireCalls(absl::Time now) {
  for (int i = 0; i < static_cast<int>(conns_.size()); ++i) {
    Conn& c = conns_[i];
    for (auto it = c.pending.begin(); it != c.pending.end();) {
      if (now - it->second < o_.timeout) {
        ++it;
        continue;
      }
      owner_.erase(it->first);
      it = c.pending.erase(it);
      Fail(absl::StrCat("no reply within ", absl::FormatDuration(o_.timeout)));
      if (o_.interval == absl::ZeroDuration() && Issuing(now)) StartCall(i);
    }
  }
}

size_t Crowd::Pending() const { return owner_.size(); }

CrowdResult Crowd::Run() {
  if (o_.started) o_.started();
  const absl::Time first = absl::Now();
  first_ = first;
  end_ = o_.time > absl::ZeroDuration() ? first + o_.time : absl::InfiniteFuture();
  for (int i = 0; i < static_cast<int>(conns_.size()); ++i) {
    if (o_.interval == absl::ZeroDuration()) {
      for (int k = 0; k < conns_[i].depth && Issuing(first); ++k) StartCall(i);
    } else {
      // Spread the first calls over the first interval, as mounts made at
      // different times would.
      conns_[i].next_due = first + o_.interval * i / static_cast<double>(conns_.size());
      wakes_.push({conns_[i].next_due, i});
    }
  }
  std::vector<epoll_event> events(1024);
  absl::Time last_expire = first;
  while (Issuing(absl::Now()) || Pending() > 0) {
    absl::Time now = absl::Now();
    if (now > end_ + o_.timeout) break;  // ExpireCalls has failed them all by now
    absl::Duration wait = kTick;
    if (!wakes_.empty())
      wait = std::min(wait, std::max(wakes_.top().when - now, absl::ZeroDuration()));
    // Rounded up: a wait shorter than a millisecond must not spin.
    const int wait_ms =
        static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1))));
    int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), wait_ms);
    for (int k = 0; k < n; ++k) {
      const int i = static_cast<int>(events[k].data.u32);
      if (conns_[i].fd < 0) continue;  // closed by an earlier event of this round
      if (events[k].events & EPOLLOUT) Flush(i);
      if (conns_[i].fd >= 0 && (events[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) OnReadable(i);
    }
    now = absl::Now();
    while (!wakes_.empty() && wakes_.top().when <= now) {
      const int i = wakes_.top().index;
      wakes_.pop();
      OnWake(i, now);
    }
    if (now - last_expire >= kTick) {
      ExpireCalls(now);
      last_expire = now;
    }
  }
  Summarize(first, &r_);
  return r_;
}

void Crowd::Summarize(absl::Time first, CrowdResult* r) {
  r->seconds = absl::ToDoubleSeconds(absl::Now() - first);
  r->errors += Pending();  // left without a reply when the run ended
  if (Pending() > 0 && r->first_error.empty()) r->first_error = "calls left without a reply";
  std::vector<float>& v = latencies_ms_;
  if (v.empty()) return;
  double sum = 0;
  for (float x : v) sum += x;
  r->mean_ms = sum / static_cast<double>(v.size());
  auto at = [&v](double q) {
    size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
    return static_cast<double>(v[k]);
  };
  r->p50_ms = at(0.50);
  r->p99_ms = at(0.99);
  r->max_ms = *std::max_element(v.begin(), v.end());
  SummarizeWindows(per_100ms_, r);
}

// Whole windows only: the one the run ended in is cut short.
void SummarizeWindows(const std::vector<uint32_t>& per_100ms, CrowdResult* r) {
  auto min_median = [](std::vector<double> w, double* min, double* median) {
    if (w.empty()) return;
    std::sort(w.begin(), w.end());
    *min = w.front();
    *median = w[w.size() / 2];
  };
  if (per_100ms.size() < 2) return;
  std::vector<double> short_windows, long_windows;
  for (size_t k = 0; k + 1 < per_100ms.size(); ++k) short_windows.push_back(per_100ms[k] * 10.0);
  for (size_t k = 0; k + 10 < per_100ms.size(); k += 10) {
    long_windows.push_back(std::accumulate(per_100ms.begin() + static_cast<ptrdiff_t>(k),
                                           per_100ms.begin() + static_cast<ptrdiff_t>(k + 10),
                                           0.0));
  }
  min_median(std::move(short_windows), &r->min_100ms, &r->median_100ms);
  min_median(std::move(long_windows), &r->min_1s, &r->median_1s);
}

}  // namespace

uint64_t RaiseOpenFileLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur;
}

void RunCrowdWorkload(const Session& session, const nfs3::nfs_fh3& object, const WorkloadOptions& o,
                      const std::atomic<bool>* stop, RunResult* r, std::function<void()> started) {
  CrowdOptions c;
  c.host = session.target().host;
  c.port = session.nfs_port();
  c.connections = o.connections;
  c.outstanding = std::max(o.outstanding, o.connections);
  c.interval = o.interval;
  c.time = o.time;
  c.ops = o.time > absl::ZeroDuration() ? 0 : (o.ops ? o.ops : 1000);
  c.timeout = session.options().timeout;
  c.cred.flavor = kAuthSys;
  c.cred.machine = "nfs3bench";
  c.cred.uid = session.options().uid;
  c.cred.gid = session.options().gid;
  c.cred.gids = {c.cred.gid};
  c.proc = o.name == "null" ? nfs3::kNull : o.name == "write" ? nfs3::kWrite : nfs3::kGetattr;
  c.write_size = r->xfer;
  c.file_sync = o.stable != StableMode::kUnstable;
  c.fh = object;
  c.started = std::move(started);
  r->connections = o.connections;
  r->outstanding = c.outstanding;
  absl::StatusOr<CrowdResult> run = RunCrowd(c, stop);
  if (!run.ok()) {
    r->error = std::string(run.status().message());
    return;
  }
  r->seconds = run->seconds;
  r->ops = r->calls = run->ops;
  r->errors = run->errors;
  r->reconnects = run->reconnects;
  r->msec_per_call = run->mean_ms;
  r->p50_ms = run->p50_ms;
  r->p99_ms = run->p99_ms;
  r->max_ms = run->max_ms;
  r->min_100ms = run->min_100ms;
  r->median_100ms = run->median_100ms;
  r->min_1s = run->min_1s;
  r->median_1s = run->median_1s;
  if (c.proc == nfs3::kWrite) r->bytes = run->ops * c.write_size;
  if (run->errors > 0) {
    r->error = absl::StrCat(run->errors, " calls failed, the first: ", run->first_error);
  }
}

absl::StatusOr<CrowdResult> RunCrowd(const CrowdOptions& options, const std::atomic<bool>* stop) {
  const uint64_t files = RaiseOpenFileLimit();
  if (files < static_cast<uint64_t>(options.connections) + 64) {
    return absl::ResourceExhaustedError(
        absl::StrCat(options.connections, " connections need more open files than the limit ",
                     files, " (ulimit -n)"));
  }
  Crowd crowd(options, stop);
  absl::Status opened = crowd.Open();
  if (!opened.ok()) return opened;
  return crowd.Run();
}

}  // namespace nfs3d::bench
