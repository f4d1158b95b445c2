#include "daemon/tcp_clients_record.h"

#include <optional>
#include <utility>

#include "common/log.h"
#include "daemon/tickle_ack.h"

namespace nfs3d::daemon {

TcpClientsRecord::TcpClientsRecord(Options options)
    : options_(std::move(options)), name_(FileName(options_.node_id)) {
  if (!options_.tickle) options_.tickle = SendTickleAck;
  thread_ = std::thread([this] { Loop(); });
}

TcpClientsRecord::~TcpClientsRecord() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

bool TcpClientsRecord::Wait(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  return !mu_.AwaitWithTimeout(absl::Condition(&stop_), d);
}

void TcpClientsRecord::TicklePrevious() {
  absl::StatusOr<std::optional<std::string>> text = options_.files->Read(name_);
  if (!text.ok()) {
    NFS3D_LOG_WARNING("tcp clients: reading %s/%s: %s", options_.files->where(), name_,
                      text.status().message());
    return;
  }
  const std::vector<TcpPeer> previous = ParseTcpPeers(text->value_or(""));
  if (previous.empty()) return;
  for (int round = 0; round < kTickleRounds; ++round) {
    if (round > 0 && !Wait(absl::Seconds(1))) return;
    size_t sent = 0;
    absl::Status failed;
    for (const TcpPeer& p : previous) {
      absl::Status s = options_.tickle(p);
      if (s.ok()) {
        ++sent;
      } else if (failed.ok()) {
        failed = s;
      }
    }
    if (round == 0) {
      NFS3D_LOG_INFO(
          "tcp clients: the previous instance of %s left %d connections; tickle ACKs sent to %d "
          "so their clients reconnect now%s%s",
          options_.node_id, previous.size(), sent,
          failed.ok() ? "" : "; not sent: ", failed.ok() ? "" : failed.message());
    }
  }
}

void TcpClientsRecord::Loop() {
  if (options_.tickle_previous) TicklePrevious();
  std::optional<std::string> written;  // the record's text, once written
  std::string last_error;              // logged once until it changes
  do {
    std::string text = FormatTcpPeers(options_.served());
    if (text == written) continue;
    absl::Status s = options_.files->Write(name_, text);
    if (s.ok()) {
      written = std::move(text);
      last_error.clear();
    } else if (std::string e(s.message()); e != last_error) {
      NFS3D_LOG_WARNING("tcp clients: writing %s/%s: %s", options_.files->where(), name_, e);
      last_error = std::move(e);
    }
  } while (Wait(options_.period));
}

}  // namespace nfs3d::daemon
