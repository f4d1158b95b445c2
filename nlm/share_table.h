// DOS-style share reservations (NLM SHARE/UNSHARE): an owner opens a file
// with an access (read/write) and denies modes to others. Two reservations
// of different owners conflict when one's access meets the other's deny mode.
// Not thread-safe: the lock manager serialises calls.
#ifndef NFS3D_NLM_SHARE_TABLE_H_
#define NFS3D_NLM_SHARE_TABLE_H_

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nlm/nlm4_types.h"

namespace nfs3d::nlm {

struct ShareReservation {
  std::string host;
  std::string oh;
  fsh4_mode mode = fsm_DN;
  fsh4_access access = fsa_NONE;
};

class ShareTable {
 public:
  explicit ShareTable(size_t max_total = 4096) : max_total_(max_total) {}

  // NLM4_GRANTED, NLM4_DENIED (conflict) or NLM4_DENIED_NOLOCKS (limit). The
  // same owner sharing again replaces its reservation.
  nlm4_stats Share(const std::string& file, const ShareReservation& share);
  void Unshare(const std::string& file, const std::string& host, const std::string& oh);
  void ReleaseHost(const std::string& host);
  size_t size() const { return total_; }
  // Every reservation with its file (a successor process takes them over).
  std::vector<std::pair<std::string, ShareReservation>> All() const;

 private:
  size_t max_total_;
  size_t total_ = 0;
  std::unordered_map<std::string, std::vector<ShareReservation>> files_;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_SHARE_TABLE_H_
