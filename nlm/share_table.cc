#include "nlm/share_table.h"

#include <algorithm>

namespace nfs3d::nlm {

nlm4_stats ShareTable::Share(const std::string& file, const ShareReservation& share) {
  std::vector<ShareReservation>& list = files_[file];
  ShareReservation* mine = nullptr;
  for (ShareReservation& s : list) {
    if (s.host == share.host && s.oh == share.oh) {
      mine = &s;
      continue;
    }
    if ((uint32_t{share.access} & uint32_t{s.mode}) != 0 ||
        (uint32_t{share.mode} & uint32_t{s.access}) != 0) {
      if (list.empty()) files_.erase(file);
      return NLM4_DENIED;
    }
  }
  if (mine != nullptr) {
    *mine = share;
    return NLM4_GRANTED;
  }
  if (total_ >= max_total_) {
    if (list.empty()) files_.erase(file);
    return NLM4_DENIED_NOLOCKS;
  }
  list.push_back(share);
  ++total_;
  return NLM4_GRANTED;
}

void ShareTable::Unshare(const std::string& file, const std::string& host, const std::string& oh) {
  auto it = files_.find(file);
  if (it == files_.end()) return;
  std::vector<ShareReservation>& list = it->second;
  size_t before = list.size();
  list.erase(
      std::remove_if(list.begin(), list.end(),
                     [&](const ShareReservation& s) { return s.host == host && s.oh == oh; }),
      list.end());
  total_ -= before - list.size();
  if (list.empty()) files_.erase(it);
}

void ShareTable::ReleaseHost(const std::string& host) {
  for (auto it = files_.begin(); it != files_.end();) {
    std::vector<ShareReservation>& list = it->second;
    size_t before = list.size();
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const ShareReservation& s) { return s.host == host; }),
               list.end());
    total_ -= before - list.size();
    it = list.empty() ? files_.erase(it) : std::next(it);
  }
}

std::vector<std::pair<std::string, ShareReservation>> ShareTable::All() const {
  std::vector<std::pair<std::string, ShareReservation>> all;
  for (const auto& [file, list] : files_) {
    for (const ShareReservation& s : list) all.emplace_back(file, s);
  }
  return all;
}

}  // namespace nfs3d::nlm
