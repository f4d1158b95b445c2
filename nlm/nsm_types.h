// Network Status Monitor protocol types (program 100024 version 1, X/Open
// XNFS chapter 11). nfs3d serves the side of NSM its own lock manager needs:
// it learns of client reboots through SM_NOTIFY and tells clients about its
// own restarts with SM_NOTIFY.
#ifndef NFS3D_NLM_NSM_TYPES_H_
#define NFS3D_NLM_NSM_TYPES_H_

#include <array>
#include <cstdint>
#include <string>

namespace nfs3d::nsm {

inline constexpr uint32_t kProgram = 100024;
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kMaxStrLen = 1024;  // SM_MAXSTRLEN
inline constexpr size_t kPrivSize = 16;

enum Proc : uint32_t {
  kNull = 0,
  kStat = 1,
  kMon = 2,
  kUnmon = 3,
  kUnmonAll = 4,
  kSimuCrash = 5,
  kNotify = 6,
  kNumProcs = 7,
};

enum res : uint32_t { STAT_SUCC = 0, STAT_FAIL = 1 };

struct sm_name {
  std::string mon_name;
};

struct my_id {
  std::string my_name;
  int32_t my_prog = 0;
  int32_t my_vers = 0;
  int32_t my_proc = 0;
};

struct mon_id {
  std::string mon_name;
  my_id id;
};

struct mon {
  mon_id id;
  std::array<uint8_t, kPrivSize> priv{};
};

struct stat_chge {
  std::string mon_name;
  int32_t state = 0;
};

// What a monitoring process is called back with (status of mon_name changed).
struct sm_status {
  std::string mon_name;
  int32_t state = 0;
  std::array<uint8_t, kPrivSize> priv{};
};

struct sm_stat_res {
  res res_stat = STAT_SUCC;
  int32_t state = 0;
};

struct sm_stat {
  int32_t state = 0;
};

}  // namespace nfs3d::nsm

#endif  // NFS3D_NLM_NSM_TYPES_H_
