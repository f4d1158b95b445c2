// Keeps a clustered head's TCP clients in the cluster's files, so that the
// head's next instance, on whichever machine takes its address, can make
// them reconnect at once (daemon/tickle_ack.h) instead of after their RPC
// timeout. The record is file "tcp-clients.<node>", rewritten when the set
// of connections changed (looked at every period). At start, before its
// first look, it sends the connections of the previous record a tickle ACK,
// kTickleRounds times a second apart (an answer lost, or the address still
// settling, gets another chance).
#ifndef NFS3D_DAEMON_TCP_CLIENTS_RECORD_H_
#define NFS3D_DAEMON_TCP_CLIENTS_RECORD_H_

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "common/durable_files.h"
#include "daemon/tcp_peers.h"

namespace nfs3d::daemon {

class TcpClientsRecord {
 public:
  static constexpr int kTickleRounds = 3;

  struct Options {
    DurableFiles* files = nullptr;  // outlives this
    std::string node_id;
    absl::Duration period = absl::Seconds(2);
    bool tickle_previous = true;  // false after a handover: the connections crossed
    // What the record holds and how a tickle goes out (tests replace them).
    std::function<std::vector<TcpPeer>()> served = ServedTcpPeers;
    std::function<absl::Status(const TcpPeer&)> tickle;  // default: SendTickleAck
  };

  explicit TcpClientsRecord(Options options);
  ~TcpClientsRecord();  // stops and joins the thread; the record stays
  TcpClientsRecord(const TcpClientsRecord&) = delete;
  TcpClientsRecord& operator=(const TcpClientsRecord&) = delete;

  static std::string FileName(const std::string& node_id) { return "tcp-clients." + node_id; }

 private:
  void Loop();
  void TicklePrevious();
  // Waits `d`; false once stopping.
  bool Wait(absl::Duration d);

  Options options_;
  const std::string name_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_TCP_CLIENTS_RECORD_H_
