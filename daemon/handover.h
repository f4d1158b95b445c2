// The handover of a running nfs3d to its successor (nfs3d --takeover), both
// sides of the exchange on <state_dir>/handover.sock (docs/handover.md):
//
//   successor                          predecessor (serving)
//   Hello (formats it reads) ------->  refuses (format) and serves on, or
//                            <-------  Answer; pauses its listeners
//                            <-------  Sockets + descriptors (SCM_RIGHTS)
//   binds/adopts, Ready ------------>  failure, or none in 5 s: resumes serving
//                            <-------  stops (running calls answered),
//                                      Descriptors..., State
//   serves                             exits
//
// Until Ready arrives the predecessor can take everything back; after it,
// the successor serves even if State never comes (then as after a restart).
#ifndef NFS3D_DAEMON_HANDOVER_H_
#define NFS3D_DAEMON_HANDOVER_H_

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "common/fd_channel.h"
#include "daemon/handover_format.h"

namespace nfs3d::daemon {

// <state_dir>/handover.sock
std::string HandoverSocketPath(const std::string& state_dir);

// What the serving daemon does at each step of a handover.
struct PredecessorHooks {
  // Stops reading from the listeners; the sockets to pass (descriptors the
  // daemon keeps owning go to *fds, entries index them).
  std::function<handover::Sockets(std::vector<int>* fds)> pause;
  // The successor failed before it was ready: serve as before.
  std::function<void()> resume;
  // The successor serves: stop (running calls finish and are answered) and
  // give the state to hand over; descriptors it refers to go to *fds (the
  // daemon keeps owning them).
  std::function<handover::State(std::vector<int>* fds)> finish;
  // Everything is handed over: the process should exit.
  std::function<void()> handed_over;
};

// The predecessor's side: a thread that takes successors on the handover
// socket, one at a time.
class HandoverServer {
 public:
  HandoverServer(OwnedFd listener, PredecessorHooks hooks);
  ~HandoverServer();  // joins the thread
  HandoverServer(const HandoverServer&) = delete;
  HandoverServer& operator=(const HandoverServer&) = delete;

  int listener_fd() const { return listener_.get(); }

 private:
  void Run();
  // One successor; true once everything was handed over.
  bool Serve(FdChannel channel);
  // Answers the Hello in `frame`; false when the handover ends there.
  bool Greet(FdChannel& channel, const FdFrame& frame);

  OwnedFd listener_;
  PredecessorHooks hooks_;
  OwnedFd wake_;  // an eventfd: the destructor stops Run
  std::thread thread_;
};

// The successor's side.
class HandoverClient {
 public:
  // Connects and says Hello; an error when nobody serves there or the
  // predecessor refused (the reason is in the message).
  static absl::StatusOr<HandoverClient> Connect(const std::string& state_dir);

  struct Inherited {
    handover::Sockets sockets;
    std::vector<OwnedFd> fds;
    std::string predecessor_version;
  };
  absl::StatusOr<Inherited> ReceiveSockets();
  // Ready (ok) or the reason the successor gives up.
  absl::Status SendReady(const absl::Status& status);
  struct FinalState {
    handover::State state;
    std::vector<OwnedFd> fds;  // what State's fd_index fields point into
  };
  absl::StatusOr<FinalState> ReceiveState();

  const std::string& predecessor_version() const { return version_; }
  int predecessor_pid() const { return channel_.PeerPid(); }

 private:
  explicit HandoverClient(FdChannel channel) : channel_(std::move(channel)) {}
  FdChannel channel_;
  std::string version_;
  uint32_t format_ = handover::kFormat;  // the predecessor writes in it
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_HANDOVER_H_
