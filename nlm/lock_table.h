// The byte-range lock table of nfs3d's lock manager: POSIX (fcntl) semantics
// per owner, independent of the protocol. An owner's new lock replaces
// whatever it held in that range (so upgrades, downgrades and re-sent
// requests are plain replacements), its ranges of one mode are kept merged,
// and unlocking the middle of a range splits it. Locks of different owners
// conflict when they overlap and either is exclusive.
//
// Not thread-safe: the lock manager serialises calls.
#ifndef NFS3D_NLM_LOCK_TABLE_H_
#define NFS3D_NLM_LOCK_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nfs3d::nlm {

inline constexpr uint64_t kToEnd = UINT64_MAX;  // last byte of a lock "to EOF"

// Who holds a lock: the client host (its NLM caller_name), the process id on
// it (svid) and the client's opaque owner handle.
struct LockOwner {
  std::string host;
  int32_t svid = 0;
  std::string oh;
  bool operator==(const LockOwner&) const = default;
};

struct Lock {
  LockOwner owner;
  uint64_t first = 0;  // first byte
  uint64_t last = 0;   // last byte (inclusive); kToEnd for "to EOF"
  bool exclusive = false;
  bool operator==(const Lock&) const = default;
};

// NLM offset/length (length 0 = to EOF) to an inclusive [first, last].
// Ranges running past 2^64-1 are clamped to kToEnd.
void NlmRange(uint64_t offset, uint64_t len, uint64_t* first, uint64_t* last);
// And back: length 0 for a range to the end.
void ToNlmRange(uint64_t first, uint64_t last, uint64_t* offset, uint64_t* len);

struct LockLimits {
  size_t max_total = 65536;    // lock records in the table
  size_t max_per_host = 4096;  // lock records held by one host
};

enum class LockResult {
  kGranted,   // done (also when nothing changed)
  kConflict,  // another owner holds a conflicting lock (see *conflict)
  kNoLocks,   // the change would exceed a limit; nothing changed
};

class LockTable {
 public:
  explicit LockTable(LockLimits limits = {}) : limits_(limits) {}

  // Sets owner's lock on [first, last] of `file` to `exclusive`.
  LockResult Lock(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
                  bool exclusive, nlm::Lock* conflict = nullptr);
  // The first lock of another owner that would conflict, if any.
  std::optional<nlm::Lock> Test(const std::string& file, const LockOwner& owner, uint64_t first,
                                uint64_t last, bool exclusive) const;
  // Drops owner's locks in [first, last]. kNoLocks only if splitting a range
  // would exceed a limit.
  LockResult Unlock(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last);
  // True if owner holds all of [first, last] in exactly that mode.
  bool Holds(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
             bool exclusive) const;
  // Releases every lock of `host`; returns the files that had some.
  std::vector<std::string> ReleaseHost(const std::string& host);

  std::vector<nlm::Lock> LocksOf(const std::string& file) const;
  // Every lock with its file (a successor process takes them over).
  std::vector<std::pair<std::string, nlm::Lock>> All() const;
  size_t size() const { return total_; }
  size_t CountOf(const std::string& host) const;
  std::vector<std::string> Hosts() const;

 private:
  // owner's locks after setting [first, last] to `mode` (nullopt: unlocked).
  static std::vector<nlm::Lock> Replace(const std::vector<nlm::Lock>& mine, const LockOwner& owner,
                                        uint64_t first, uint64_t last, std::optional<bool> mode);
  LockResult Change(const std::string& file, const LockOwner& owner, uint64_t first, uint64_t last,
                    std::optional<bool> mode);

  LockLimits limits_;
  std::unordered_map<std::string, std::vector<nlm::Lock>> files_;
  std::map<std::string, size_t> per_host_;
  size_t total_ = 0;
};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_LOCK_TABLE_H_
