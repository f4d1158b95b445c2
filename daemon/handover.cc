#include "daemon/handover.h"

#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "common/log.h"
#include "common/version.h"

namespace nfs3d::daemon {

namespace {

// Small frames; the big ones (State) have their own bound.
constexpr size_t kMaxSmallFrame = 64 << 10;
// The successor adopts or binds its listeners between Sockets and Ready (a
// few milliseconds); meanwhile the predecessor's listeners are paused, so a
// successor that stalls there is given up on after this long (finding 9).
constexpr absl::Duration kReadyDeadline = absl::Seconds(5);
// The predecessor finishes the calls it runs before State (up to 10 s);
// the successor then reads State as it comes.
constexpr int kStateTimeoutSeconds = 60;
constexpr int kStepTimeoutSeconds = 10;

// The formats the successor reads: kOldestFormat..kFormat, or one format
// named by NFS3D_TEST_HANDOVER_FORMAT (tests: a successor that cannot read
// what its predecessor writes).
handover::Hello MakeHello() {
  handover::Hello hello;
  hello.version = kVersion;
  uint32_t only = 0;
  if (const char* env = std::getenv("NFS3D_TEST_HANDOVER_FORMAT");
      env != nullptr && absl::SimpleAtoi(env, &only)) {
    hello.oldest_format = hello.newest_format = only;
  }
  return hello;
}

// Tests kill a process at a named point of the handover (kill -9 there):
// NFS3D_TEST_HANDOVER_KILL=<point>.
void MaybeDieAt(std::string_view point) {
  const char* env = std::getenv("NFS3D_TEST_HANDOVER_KILL");
  if (env != nullptr && point == env) raise(SIGKILL);
}

// Waits until a whole frame is queued on `fd`, the peer closed, or the
// deadline passed; never longer, however the peer trickles its bytes.
void WaitForWholeFrame(int fd, absl::Time deadline) {
  for (;;) {
    uint32_t length = 0;
    const ssize_t n = recv(fd, &length, sizeof(length), MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return;  // closed or broken
    if (n == sizeof(length)) {
      const size_t whole = sizeof(length) + ntohl(length);
      int queued = 0;
      if (whole > sizeof(length) + kMaxSmallFrame) return;  // Receive refuses it
      if (ioctl(fd, FIONREAD, &queued) == 0 && static_cast<size_t>(queued) >= whole) return;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return;
    if (n > 0) {
      // Part of a frame: poll would return at once; look again shortly.
      absl::SleepFor(std::min(left, absl::Milliseconds(20)));
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
  }
}

// The successor's Ready, at most kReadyDeadline after Sockets. Reading is
// shut down first, so both sides agree whether Ready arrived: a Ready queued
// whole before the shutdown is read; a later one fails in the successor
// (EPIPE), which then does not serve.
absl::StatusOr<FdFrame> ReceiveReady(FdChannel& channel) {
  WaitForWholeFrame(channel.fd(), absl::Now() + kReadyDeadline);
  shutdown(channel.fd(), SHUT_RD);
  absl::StatusOr<FdFrame> frame = channel.Receive(kMaxSmallFrame);
  if (!frame.ok()) {
    return absl::DeadlineExceededError(absl::StrCat("no ready from the successor within ",
                                                    absl::FormatDuration(kReadyDeadline), " (",
                                                    frame.status().message(), ")"));
  }
  return frame;
}

}  // namespace

std::string HandoverSocketPath(const std::string& state_dir) {
  return absl::StrCat(state_dir, "/handover.sock");
}

HandoverServer::HandoverServer(OwnedFd listener, PredecessorHooks hooks)
    : listener_(std::move(listener)),
      hooks_(std::move(hooks)),
      wake_(eventfd(0, EFD_CLOEXEC)),
      thread_([this] { Run(); }) {}

HandoverServer::~HandoverServer() {
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
}

void HandoverServer::Run() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    OwnedFd conn(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (conn.get() < 0) continue;
    if (Serve(FdChannel(std::move(conn)))) {
      hooks_.handed_over();
      return;
    }
  }
}

bool HandoverServer::Greet(FdChannel& channel, const FdFrame& frame) {
  std::optional<handover::Hello> hello =
      handover::DecodeFrame<handover::Hello>(handover::Step::kHello, frame.payload);
  if (!hello || hello->magic != handover::kMagic) {
    NFS3D_LOG_WARNING("handover: a malformed hello; serving on");
    return false;
  }
  handover::Answer answer;
  answer.version = kVersion;
  if (handover::kFormat < hello->oldest_format || handover::kFormat > hello->newest_format) {
    answer.reason = absl::StrCat("nfs3d ", kVersion, " hands over in format ", handover::kFormat,
                                 "; nfs3d ", hello->version, " reads formats ",
                                 hello->oldest_format, " to ", hello->newest_format);
    NFS3D_LOG_WARNING("handover refused: %s; serving on", answer.reason);
    (void)channel.Send(handover::EncodeFrame(handover::Step::kAnswer, answer));
    return false;
  }
  answer.accepted = true;
  NFS3D_LOG_INFO("handover: nfs3d %s takes over", hello->version);
  return channel.Send(handover::EncodeFrame(handover::Step::kAnswer, answer)).ok();
}

bool HandoverServer::Serve(FdChannel channel) {
  // The socket is the owner's only (mode 0600 in a 0700 directory); a peer
  // of another user gets nothing all the same.
  if (channel.PeerUid() != static_cast<int>(geteuid())) {
    NFS3D_LOG_WARNING("handover: refused a peer of uid %d", channel.PeerUid());
    return false;
  }
  if (!channel.SetTimeout(kStepTimeoutSeconds).ok()) return false;
  absl::StatusOr<FdFrame> hello = channel.Receive(kMaxSmallFrame);
  if (!hello.ok() || !Greet(channel, *hello)) return false;
  // From here until Ready the listeners are paused: new clients wait in the
  // kernel's queues, which the successor reads.
  std::vector<int> fds;
  handover::Sockets sockets = hooks_.pause(&fds);
  absl::Status sent = channel.Send(handover::EncodeFrame(handover::Step::kSockets, sockets), fds);
  MaybeDieAt("predecessor-paused");
  absl::StatusOr<FdFrame> ready_frame =
      sent.ok() ? ReceiveReady(channel) : absl::StatusOr<FdFrame>(sent);
  std::optional<handover::Ready> ready;
  if (ready_frame.ok()) {
    ready = handover::DecodeFrame<handover::Ready>(handover::Step::kReady, ready_frame->payload);
  }
  if (!ready || !ready->ok) {
    std::string why = !ready_frame.ok() ? std::string(ready_frame.status().message())
                      : !ready          ? std::string("a malformed answer")
                                        : ready->reason;
    NFS3D_LOG_WARNING("handover failed: %s; serving on", why);
    hooks_.resume();
    return false;
  }
  // The State frame may be large; the successor reads it as it comes.
  (void)channel.SetTimeout(kStateTimeoutSeconds);
  std::vector<int> state_fds;
  handover::State state = hooks_.finish(&state_fds);
  MaybeDieAt("predecessor-finished");
  absl::Status s;
  for (size_t at = 0; s.ok() && at < state_fds.size(); at += FdChannel::kMaxFds) {
    const size_t n = std::min(FdChannel::kMaxFds, state_fds.size() - at);
    handover::Descriptors frame{static_cast<uint32_t>(n)};
    s = channel.Send(handover::EncodeFrame(handover::Step::kDescriptors, frame),
                     absl::MakeConstSpan(state_fds).subspan(at, n));
  }
  if (s.ok()) s = channel.Send(handover::EncodeFrame(handover::Step::kState, state));
  if (!s.ok()) {
    NFS3D_LOG_WARNING("handover: the state did not reach the successor: %s", s.message());
  }
  size_t unrun = 0, tls = 0;
  for (const handover::TcpConnectionEntry& c : state.tcp) {
    unrun += c.pending.size();
    tls += c.tls.size();
  }
  NFS3D_LOG_INFO(
      "handed over to the successor (%d cached replies, %d locks, %d connections (%d in kernel "
      "TLS) with %d bytes read and not run)",
      state.drc.size(), state.nlm.locks.size(), state.tcp.size(), tls, unrun);
  return true;
}

absl::StatusOr<HandoverClient> HandoverClient::Connect(const std::string& state_dir) {
  const std::string path = HandoverSocketPath(state_dir);
  absl::StatusOr<FdChannel> channel = FdChannel::Connect(path);
  if (!channel.ok()) {
    return absl::UnavailableError(absl::StrCat("no running nfs3d takes handovers at ", path, ": ",
                                               channel.status().message()));
  }
  // The predecessor is trusted with nothing less than the successor is (see
  // Serve): a process of another user listening there (in a state directory
  // others could write, or from before its owner changed) gets no Hello and
  // hands over no verifier, cache, locks or GSS contexts.
  if (const int uid = channel->PeerUid(); uid != static_cast<int>(geteuid())) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the process listening on ", path, " (pid ", channel->PeerPid(), ") runs as uid ", uid,
        ", not ", geteuid(), ": not an nfs3d of this user; nothing taken over"));
  }
  if (absl::Status s = channel->SetTimeout(kStepTimeoutSeconds); !s.ok()) return s;
  HandoverClient client(std::move(*channel));
  if (absl::Status s =
          client.channel_.Send(handover::EncodeFrame(handover::Step::kHello, MakeHello()));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<FdFrame> frame = client.channel_.Receive(kMaxSmallFrame);
  if (!frame.ok()) return frame.status();
  std::optional<handover::Answer> answer =
      handover::DecodeFrame<handover::Answer>(handover::Step::kAnswer, frame->payload);
  if (!answer || answer->magic != handover::kMagic) {
    return absl::DataLossError("the running nfs3d answered something unreadable");
  }
  if (!answer->accepted) {
    return absl::FailedPreconditionError(
        absl::StrCat("the running nfs3d refused the handover: ", answer->reason));
  }
  if (answer->format < handover::kOldestFormat || answer->format > handover::kFormat) {
    return absl::DataLossError(
        absl::StrCat("the running nfs3d hands over in format ", answer->format));
  }
  client.version_ = answer->version;
  client.format_ = answer->format;
  return client;
}

absl::StatusOr<HandoverClient::Inherited> HandoverClient::ReceiveSockets() {
  absl::StatusOr<FdFrame> frame = channel_.Receive(kMaxSmallFrame);
  if (!frame.ok()) return frame.status();
  std::optional<handover::Sockets> sockets =
      handover::DecodeFrame<handover::Sockets>(handover::Step::kSockets, frame->payload);
  if (!sockets) return absl::DataLossError("handover: malformed sockets frame");
  for (const handover::SocketEntry& e : sockets->sockets) {
    if (e.fd_index >= frame->fds.size()) {
      return absl::DataLossError("handover: a socket without its descriptor");
    }
  }
  MaybeDieAt("successor-sockets");
  return Inherited{std::move(*sockets), std::move(frame->fds), version_};
}

absl::Status HandoverClient::SendReady(const absl::Status& status) {
  handover::Ready ready;
  ready.ok = status.ok();
  ready.reason = std::string(status.message()).substr(0, handover::kMaxText);
  absl::Status sent = channel_.Send(handover::EncodeFrame(handover::Step::kReady, ready));
  if (status.ok()) MaybeDieAt("successor-ready");
  return sent;
}

absl::StatusOr<HandoverClient::FinalState> HandoverClient::ReceiveState() {
  // The predecessor finishes its running calls first.
  if (absl::Status s = channel_.SetTimeout(kStateTimeoutSeconds); !s.ok()) return s;
  FinalState out;
  for (;;) {
    absl::StatusOr<FdFrame> frame = channel_.Receive(handover::kMaxFrame);
    if (!frame.ok()) return frame.status();
    std::optional<handover::Descriptors> more =
        handover::DecodeFrame<handover::Descriptors>(handover::Step::kDescriptors, frame->payload);
    if (more) {
      if (more->count != frame->fds.size() || out.fds.size() > handover::kMaxLocks) {
        return absl::DataLossError("handover: descriptors frame without its descriptors");
      }
      for (OwnedFd& fd : frame->fds) out.fds.push_back(std::move(fd));
      continue;
    }
    std::optional<handover::State> state = handover::DecodeState(format_, frame->payload);
    if (!state) return absl::DataLossError("handover: malformed state frame");
    for (const handover::LockFdEntry& e : state->nlm.fds) {
      if (e.fd_index >= out.fds.size()) {
        return absl::DataLossError("handover: a lock without its descriptor");
      }
    }
    for (const handover::TcpConnectionEntry& e : state->tcp) {
      if (e.fd_index >= out.fds.size()) {
        return absl::DataLossError("handover: a connection without its descriptor");
      }
    }
    out.state = std::move(*state);
    return out;
  }
}

}  // namespace nfs3d::daemon
