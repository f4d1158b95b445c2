#include "nlm/lock_table.h"

#include <algorithm>

namespace nfs3d::nlm {
namespace {

bool Overlaps(const nlm::Lock& l, uint64_t first, uint64_t last) {
  return l.first <= last && first <= l.last;
}

}  // namespace

void NlmRange(uint64_t offset, uint64_t len, uint64_t* first, uint64_t* last) {
  *first = offset;
  if (len == 0 || len - 1 > kToEnd - offset) {
    *last = kToEnd;
  } else {
    *last = offset + (len - 1);
  }
}

void ToNlmRange(uint64_t first, uint64_t last, uint64_t* offset, uint64_t* len) {
  *offset = first;
  *len = last == kToEnd ? 0 : last - first + 1;
}

std::vector<nlm::Lock> LockTable::Replace(const std::vector<nlm::Lock>& mine,
                                          const LockOwner& owner, uint64_t first, uint64_t last,
                                          std::optional<bool> mode) {
  std::vector<nlm::Lock> out;
  // Cut [first, last] out of every range of the owner.
  for (const nlm::Lock& l : mine) {
    if (!Overlaps(l, first, last)) {
      out.push_back(l);
      continue;
    }
    if (l.first < first) out.push_back({owner, l.first, first - 1, l.exclusive});
    if (l.last > last) out.push_back({owner, last + 1, l.last, l.exclusive});
  }
  if (mode) out.push_back({owner, first, last, *mode});
  // Merge overlapping or adjacent ranges of the same mode.
  std::sort(out.begin(), out.end(), [](const nlm::Lock& a, const nlm::Lock& b) {
    return a.exclusive != b.exclusive ? a.exclusive < b.exclusive : a.first < b.first;
  });
  std::vector<nlm::Lock> merged;
  for (const nlm::Lock& l : out) {
    if (!merged.empty()) {
      nlm::Lock& prev = merged.back();
      if (prev.exclusive == l.exclusive && (prev.last == kToEnd || l.first <= prev.last + 1)) {
        prev.last = std::max(prev.last, l.last);
        continue;
      }
    }
    merged.push_back(l);
  }
  return merged;
}

LockResult LockTable::Change(const std::string& file, const LockOwner& owner, uint64_t first,
                             uint64_t last, std::optional<bool> mode) {
  auto it = files_.find(file);
  if (it == files_.end() && !mode) return LockResult::kGranted;
  std::vector<nlm::Lock> others, mine;
  if (it != files_.end()) {
    for (const nlm::Lock& l : it->second) (l.owner == owner ? mine : others).push_back(l);
  }
  std::vector<nlm::Lock> updated = Replace(mine, owner, first, last, mode);
  if (updated.size() > mine.size()) {
    size_t grow = updated.size() - mine.size();
    auto host = per_host_.find(owner.host);
    size_t host_count = host == per_host_.end() ? 0 : host->second;
    if (total_ + grow > limits_.max_total || host_count + grow > limits_.max_per_host) {
      return LockResult::kNoLocks;
    }
  }
  total_ = total_ - mine.size() + updated.size();
  size_t& host_count = per_host_[owner.host];
  host_count = host_count - mine.size() + updated.size();
  if (host_count == 0) per_host_.erase(owner.host);
  others.insert(others.end(), updated.begin(), updated.end());
  if (others.empty()) {
    if (it != files_.end()) files_.erase(it);
  } else {
    files_[file] = std::move(others);
  }
  return LockResult::kGranted;
}

LockResult LockTable::Lock(const std::string& file, const LockOwner& owner, uint64_t first,
                           uint64_t last, bool exclusive, nlm::Lock* conflict) {
  if (std::optional<nlm::Lock> c = Test(file, owner, first, last, exclusive)) {
    if (conflict != nullptr) *conflict = *c;
    return LockResult::kConflict;
  }
  return Change(file, owner, first, last, exclusive);
}

std::optional<nlm::Lock> LockTable::Test(const std::string& file, const LockOwner& owner,
                                         uint64_t first, uint64_t last, bool exclusive) const {
  auto it = files_.find(file);
  if (it == files_.end()) return std::nullopt;
  for (const nlm::Lock& l : it->second) {
    if (l.owner == owner || !Overlaps(l, first, last)) continue;
    if (exclusive || l.exclusive) return l;
  }
  return std::nullopt;
}

LockResult LockTable::Unlock(const std::string& file, const LockOwner& owner, uint64_t first,
                             uint64_t last) {
  return Change(file, owner, first, last, std::nullopt);
}

bool LockTable::Holds(const std::string& file, const LockOwner& owner, uint64_t first,
                      uint64_t last, bool exclusive) const {
  auto it = files_.find(file);
  if (it == files_.end()) return false;
  // Ranges of one owner and mode are merged, so one of them covers it all.
  for (const nlm::Lock& l : it->second) {
    if (l.owner == owner && l.exclusive == exclusive && l.first <= first && last <= l.last) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> LockTable::ReleaseHost(const std::string& host) {
  std::vector<std::string> touched;
  for (auto it = files_.begin(); it != files_.end();) {
    std::vector<nlm::Lock>& locks = it->second;
    size_t before = locks.size();
    locks.erase(std::remove_if(locks.begin(), locks.end(),
                               [&](const nlm::Lock& l) { return l.owner.host == host; }),
                locks.end());
    if (locks.size() != before) {
      touched.push_back(it->first);
      total_ -= before - locks.size();
    }
    it = locks.empty() ? files_.erase(it) : std::next(it);
  }
  per_host_.erase(host);
  return touched;
}

std::vector<nlm::Lock> LockTable::LocksOf(const std::string& file) const {
  auto it = files_.find(file);
  return it == files_.end() ? std::vector<nlm::Lock>{} : it->second;
}

size_t LockTable::CountOf(const std::string& host) const {
  auto it = per_host_.find(host);
  return it == per_host_.end() ? 0 : it->second;
}

std::vector<std::string> LockTable::Hosts() const {
  std::vector<std::string> out;
  for (const auto& [host, count] : per_host_) out.push_back(host);
  return out;
}

std::vector<std::pair<std::string, nlm::Lock>> LockTable::All() const {
  std::vector<std::pair<std::string, nlm::Lock>> all;
  for (const auto& [file, locks] : files_) {
    for (const nlm::Lock& l : locks) all.emplace_back(file, l);
  }
  return all;
}

}  // namespace nfs3d::nlm
