// Network Lock Manager protocol types, version 4 (RFC 1813 appendix II and
// the X/Open XNFS spec), plus the 32-bit v1/v3 flavor. Names follow the
// spec. Decoded values are owned copies (netobjs are small), so a request can
// outlive the call message, e.g. a blocked LOCK waiting for a GRANTED
// callback.
#ifndef NFS3D_NLM_NLM4_TYPES_H_
#define NFS3D_NLM_NLM4_TYPES_H_

#include <cstdint>
#include <string>

namespace nfs3d::nlm {

inline constexpr uint32_t kProgram = 100021;
inline constexpr uint32_t kVersion1 = 1;
inline constexpr uint32_t kVersion3 = 3;
inline constexpr uint32_t kVersion4 = 4;
inline constexpr uint32_t kMaxNetobj = 1024;   // MAXNETOBJ_SZ
inline constexpr uint32_t kMaxStrLen = 1024;   // LM_MAXSTRLEN
inline constexpr uint32_t kMaxNameLen = 1025;  // MAXNAMELEN (nlm4_notify.name)

enum Proc : uint32_t {
  kNull = 0,
  kTest = 1,
  kLock = 2,
  kCancel = 3,
  kUnlock = 4,
  kGranted = 5,
  kTestMsg = 6,
  kLockMsg = 7,
  kCancelMsg = 8,
  kUnlockMsg = 9,
  kGrantedMsg = 10,
  kTestRes = 11,
  kLockRes = 12,
  kCancelRes = 13,
  kUnlockRes = 14,
  kGrantedRes = 15,
  // 16..19 are unused by the protocol (Linux uses 16 privately for statd).
  kShare = 20,
  kUnshare = 21,
  kNmLock = 22,
  kFreeAll = 23,
  kNumProcs = 24,
};

enum nlm4_stats : uint32_t {
  NLM4_GRANTED = 0,
  NLM4_DENIED = 1,
  NLM4_DENIED_NOLOCKS = 2,
  NLM4_BLOCKED = 3,
  NLM4_DENIED_GRACE_PERIOD = 4,
  NLM4_DEADLCK = 5,
  NLM4_ROFS = 6,
  NLM4_STALE_FH = 7,
  NLM4_FBIG = 8,
  NLM4_FAILED = 9,
};

enum fsh4_mode : uint32_t { fsm_DN = 0, fsm_DR = 1, fsm_DW = 2, fsm_DRW = 3 };
enum fsh4_access : uint32_t { fsa_NONE = 0, fsa_R = 1, fsa_W = 2, fsa_RW = 3 };

// netobj: opaque<MAXNETOBJ_SZ>, kept as bytes in a string.
using netobj = std::string;

struct nlm4_holder {
  bool exclusive = false;
  int32_t svid = 0;
  netobj oh;
  uint64_t l_offset = 0;
  uint64_t l_len = 0;
};

struct nlm4_lock {
  std::string caller_name;
  netobj fh;
  netobj oh;
  int32_t svid = 0;
  uint64_t l_offset = 0;
  uint64_t l_len = 0;  // 0: to the end of the file
};

struct nlm4_testargs {
  netobj cookie;
  bool exclusive = false;
  nlm4_lock alock;
};

struct nlm4_lockargs {
  netobj cookie;
  bool block = false;
  bool exclusive = false;
  nlm4_lock alock;
  bool reclaim = false;
  int32_t state = 0;  // the client's NSM state
};

struct nlm4_cancargs {
  netobj cookie;
  bool block = false;
  bool exclusive = false;
  nlm4_lock alock;
};

struct nlm4_unlockargs {
  netobj cookie;
  nlm4_lock alock;
};

struct nlm4_share {
  std::string caller_name;
  netobj fh;
  netobj oh;
  fsh4_mode mode = fsm_DN;
  fsh4_access access = fsa_NONE;
};

struct nlm4_shareargs {
  netobj cookie;
  nlm4_share share;
  bool reclaim = false;
};

struct nlm4_notify {
  std::string name;
  int32_t state = 0;
};

struct nlm4_res {
  netobj cookie;
  nlm4_stats stat = NLM4_GRANTED;
};

struct nlm4_testres {
  netobj cookie;
  nlm4_stats stat = NLM4_GRANTED;
  nlm4_holder holder;  // when stat == NLM4_DENIED
};

struct nlm4_shareres {
  netobj cookie;
  nlm4_stats stat = NLM4_GRANTED;
  int32_t sequence = 0;
};

// Versions 1 and 3: distinct types select the 32-bit descriptions in the
// procedure table; the handlers are the v4 ones.
struct nlm_testargs : nlm4_testargs {};
struct nlm_lockargs : nlm4_lockargs {};
struct nlm_cancargs : nlm4_cancargs {};
struct nlm_unlockargs : nlm4_unlockargs {};
struct nlm_res : nlm4_res {};
struct nlm_testres : nlm4_testres {};
struct nlm_shareres : nlm4_shareres {};

struct Void {};

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NLM4_TYPES_H_
