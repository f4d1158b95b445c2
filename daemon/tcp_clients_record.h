// Keeps a clustered head's TCP clients in the cluster's files, so that the
// head's next instance, on whichever machine takes its address, can make
// them reconnect at once (daemon/tickle_ack.h) instead of after their RPC
// timeout. The record is file "tcp-clients.<node>", rewritten when the set
// of connections changed: looked at every period, and within a poll of the
// server admitting a connection, since a client that connected just before
// a crash (every client, right after a restart) is the one left waiting if
// the record misses it (issue 46). At start it sends the connections of the
// previous record a tickle ACK, kTickleRounds times a second apart (an
// answer lost, or the address still settling, gets another chance), and
// writes its own record right after the first round, not after the last;
// until the last round the record keeps the previous connections too, for
// the instance after it if this one dies meanwhile.
#ifndef NFS3D_DAEMON_TCP_CLIENTS_RECORD_H_
#define NFS3D_DAEMON_TCP_CLIENTS_RECORD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
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
    // Advanced by the server at each connection it admits
    // (RpcServerOptions::tcp_admitted_count), looked at every `poll`; null:
    // only every period.
    const std::atomic<uint64_t>* admitted = nullptr;
    absl::Duration poll = absl::Milliseconds(100);
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
  std::vector<TcpPeer> ReadPrevious();
  void TickleRound(const std::vector<TcpPeer>& previous, int round);
  // Writes what is served, and `also`, if that differs from what it wrote.
  void Update(const std::vector<TcpPeer>& also);
  uint64_t Admitted() const {
    return options_.admitted ? options_.admitted->load(std::memory_order_relaxed) : 0;
  }
  // Waits `d`; false once stopping.
  bool Wait(absl::Duration d);

  Options options_;
  const std::string name_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // Only the thread uses these.
  std::optional<std::string> written_;  // the record's text, once written
  std::string last_error_;              // logged once until it changes
  std::thread thread_;
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_TCP_CLIENTS_RECORD_H_
