// Remote quota protocol (RQUOTA, program 100011) as Linux's quota tools and
// rpc.rquotad speak it (quota-tools rquota.x): version 1 asks for a user's
// quota, version 2 (EXT_RQUOTAVERS) for a user's or a group's.
#ifndef NFS3D_XDR_RQUOTA_TYPES_H_
#define NFS3D_XDR_RQUOTA_TYPES_H_

#include <cstdint>
#include <string_view>

#include "xdr/nfs3_types.h"

namespace nfs3d::rquota {

inline constexpr uint32_t kProgram = 100011;
inline constexpr uint32_t kVersion1 = 1;
inline constexpr uint32_t kVersion2 = 2;
inline constexpr uint32_t kPathLen = 1024;  // RQ_PATHLEN
// rq_bsize: rpc.rquotad reports blocks of 1 KiB (RPC_DQBLK_SIZE_BITS 10).
inline constexpr uint32_t kBlockSize = 1024;

enum Proc : uint32_t {
  kNull = 0,
  kGetQuota = 1,
  kGetActiveQuota = 2,
  kSetQuota = 3,
  kSetActiveQuota = 4,
};

// gqa_type of version 2 (<sys/quota.h> USRQUOTA, GRPQUOTA).
enum QuotaType : uint32_t { kUserQuota = 0, kGroupQuota = 1 };

#define NFS3D_GQR_STATUS(X) X(Q_OK, 1) X(Q_NOQUOTA, 2) X(Q_EPERM, 3)
NFS3D_STATUS_ENUM(gqr_status, NFS3D_GQR_STATUS, "Q_(unknown)")

// getquota_args (v1: a user) and ext_getquota_args (v2: type and id).
struct GetQuotaArgs {
  std::string_view path;
  uint32_t type = kUserQuota;
  int32_t id = 0;
};

// The limits and usage of one user or group (struct rquota).
struct Rquota {
  int32_t bsize = kBlockSize;
  bool active = true;
  uint32_t bhardlimit = 0, bsoftlimit = 0, curblocks = 0;
  uint32_t fhardlimit = 0, fsoftlimit = 0, curfiles = 0;
  uint32_t btimeleft = 0, ftimeleft = 0;  // seconds of grace left, 0 if none
};

struct GetQuotaRes {
  gqr_status status = Q_NOQUOTA;
  Rquota rquota;  // Q_OK only
};

// sq_dqblk: what SETQUOTA would set.
struct SqDqblk {
  uint32_t bhardlimit = 0, bsoftlimit = 0, curblocks = 0;
  uint32_t fhardlimit = 0, fsoftlimit = 0, curfiles = 0;
  uint32_t btimeleft = 0, ftimeleft = 0;
};

// setquota_args (v1) and ext_setquota_args (v2: with the type after the id).
struct SetQuotaArgs {
  int32_t qcmd = 0;
  std::string_view path;
  int32_t id = 0;
  uint32_t type = kUserQuota;
  SqDqblk dqblk;
};

using SetQuotaRes = GetQuotaRes;

}  // namespace nfs3d::rquota

#endif  // NFS3D_XDR_RQUOTA_TYPES_H_
