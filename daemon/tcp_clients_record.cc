#include "daemon/tcp_clients_record.h"

#include <algorithm>
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

std::vector<TcpPeer> TcpClientsRecord::ReadPrevious() {
  absl::StatusOr<std::optional<std::string>> text = options_.files->Read(name_);
  if (!text.ok()) {
    NFS3D_LOG_WARNING("tcp clients: reading %s/%s: %s", options_.files->where(), name_,
                      text.status().message());
    return {};
  }
  return ParseTcpPeers(text->value_or(""));
}

void TcpClientsRecord::TickleRound(const std::vector<TcpPeer>& previous, int round) {
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

void TcpClientsRecord::Update(const std::vector<TcpPeer>& also) {
  std::vector<TcpPeer> peers = options_.served();
  if (!also.empty()) {
    peers.insert(peers.end(), also.begin(), also.end());
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  }
  std::string text = FormatTcpPeers(peers);
  if (text == written_) return;
  absl::Status s = options_.files->Write(name_, text);
  if (s.ok()) {
    written_ = std::move(text);
    last_error_.clear();
  } else if (std::string e(s.message()); e != last_error_) {
    NFS3D_LOG_WARNING("tcp clients: writing %s/%s: %s", options_.files->where(), name_, e);
    last_error_ = std::move(e);
  }
}

void TcpClientsRecord::Loop() {
  // The previous instance's connections, until the last tickle round.
  std::vector<TcpPeer> previous;
  if (options_.tickle_previous) previous = ReadPrevious();
  int round = 0;
  absl::Time next_round = absl::InfinitePast();
  absl::Time next_look = absl::InfinitePast();
  uint64_t admitted = Admitted();
  do {
    const absl::Time now = absl::Now();
    // Tickles first: they take no time, and must not wait for a slow write.
    if (!previous.empty() && now >= next_round) {
      TickleRound(previous, round);
      next_round = now + absl::Seconds(1);
      if (++round == kTickleRounds) {
        previous.clear();
        next_look = now;  // the record leaves them out now
      }
    }
    // Not only after the rounds: a crash meanwhile must find the record.
    if (now >= next_look || Admitted() != admitted) {
      admitted = Admitted();
      Update(previous);
      next_look = now + options_.period;
    }
  } while (Wait(std::min(options_.poll, options_.period)));
}

}  // namespace nfs3d::daemon
