#include "nfsd/nfs3_program.h"

#include "nfsd/nfs3_procs.h"
#include "nfsd/transfer_sizes.h"
#include "rpc/rpc_message.h"
#include "xdr/decoder.h"
#include "xdr/nfs3_codec.h"

namespace nfs3d::nfsd {
namespace {

namespace n3 = nfs3d::nfs3;

template <typename Args, typename Res,
          void (*Fn)(NfsServer&, const rpc::CallContext&, const Args&, Res*)>
constexpr rpc::ProcFn Typed() {
  return &rpc::TypedProc<NfsServer, Args, Res, Fn>;
}

// Encoded sizes of the reply pieces, for max_reply (RFC 1813 XDR).
constexpr uint32_t kFattr = 84;
constexpr uint32_t kPostOpAttr = 4 + kFattr;
constexpr uint32_t kWcc = (4 + 24) + kPostOpAttr;
constexpr uint32_t kPostOpFh = 4 + 4 + n3::kFhSize;
constexpr uint32_t kDirop = 4 + kPostOpFh + kPostOpAttr + kWcc;
constexpr uint32_t kBulk = kMaxTransfer;  // READ data / READDIR entries are clamped to this

// A row per procedure; clang-format would give each field a line of its own.
// clang-format off
constexpr rpc::Procedure kProcedures[] = {
    {.number = n3::kNull, .name = "NULL", .run = Typed<n3::Void, n3::Void, proc::Null>()},
    {.number = n3::kGetattr, .name = "GETATTR",
     .run = Typed<n3::GETATTR3args, n3::GETATTR3res, proc::Getattr>(), .max_reply = 4 + kFattr},
    {.number = n3::kSetattr, .name = "SETATTR",
     .run = Typed<n3::SETATTR3args, n3::SETATTR3res, proc::Setattr>(), .idempotent = false,
     .modifies = true, .max_reply = 4 + kWcc},
    {.number = n3::kLookup, .name = "LOOKUP",
     .run = Typed<n3::LOOKUP3args, n3::LOOKUP3res, proc::Lookup>(),
     .max_reply = 4 + 4 + n3::kFhSize + 2 * kPostOpAttr},
    {.number = n3::kAccess, .name = "ACCESS",
     .run = Typed<n3::ACCESS3args, n3::ACCESS3res, proc::Access>(),
     .max_reply = 4 + kPostOpAttr + 4},
    {.number = n3::kReadlink, .name = "READLINK",
     .run = Typed<n3::READLINK3args, n3::READLINK3res, proc::Readlink>(),
     .max_reply = 4 + kPostOpAttr + 4 + n3::kMaxPathLen},
    {.number = n3::kRead, .name = "READ", .run = &proc::Read,
     .max_reply = 4 + kPostOpAttr + 4 + 4 + 4 + kBulk},
    {.number = n3::kWrite, .name = "WRITE",
     .run = Typed<n3::WRITE3args, n3::WRITE3res, proc::Write>(), .idempotent = false,
     .modifies = true, .max_reply = 4 + kWcc + 4 + 4 + n3::kWriteVerfSize},
    {.number = n3::kCreate, .name = "CREATE",
     .run = Typed<n3::CREATE3args, n3::diropres3, proc::Create>(), .idempotent = false,
     .modifies = true, .max_reply = kDirop},
    {.number = n3::kMkdir, .name = "MKDIR",
     .run = Typed<n3::MKDIR3args, n3::diropres3, proc::Mkdir>(), .idempotent = false,
     .modifies = true, .max_reply = kDirop},
    {.number = n3::kSymlink, .name = "SYMLINK",
     .run = Typed<n3::SYMLINK3args, n3::diropres3, proc::Symlink>(), .idempotent = false,
     .modifies = true, .max_reply = kDirop},
    {.number = n3::kMknod, .name = "MKNOD",
     .run = Typed<n3::MKNOD3args, n3::diropres3, proc::Mknod>(), .idempotent = false,
     .modifies = true, .max_reply = kDirop},
    {.number = n3::kRemove, .name = "REMOVE",
     .run = Typed<n3::REMOVE3args, n3::REMOVE3res, proc::Remove>(), .idempotent = false,
     .modifies = true, .max_reply = 4 + kWcc},
    {.number = n3::kRmdir, .name = "RMDIR",
     .run = Typed<n3::RMDIR3args, n3::RMDIR3res, proc::Rmdir>(), .idempotent = false,
     .modifies = true, .max_reply = 4 + kWcc},
    {.number = n3::kRename, .name = "RENAME",
     .run = Typed<n3::RENAME3args, n3::RENAME3res, proc::Rename>(), .idempotent = false,
     .modifies = true, .max_reply = 4 + 2 * kWcc},
    {.number = n3::kLink, .name = "LINK", .run = Typed<n3::LINK3args, n3::LINK3res, proc::Link>(),
     .idempotent = false, .modifies = true, .max_reply = 4 + kPostOpAttr + kWcc},
    {.number = n3::kReaddir, .name = "READDIR",
     .run = Typed<n3::READDIR3args, n3::READDIR3res, proc::Readdir>(), .max_reply = kBulk},
    {.number = n3::kReaddirplus, .name = "READDIRPLUS",
     .run = Typed<n3::READDIRPLUS3args, n3::READDIRPLUS3res, proc::Readdirplus>(),
     .max_reply = kBulk},
    {.number = n3::kFsstat, .name = "FSSTAT",
     .run = Typed<n3::FSSTAT3args, n3::FSSTAT3res, proc::Fsstat>(),
     .max_reply = 4 + kPostOpAttr + 6 * 8 + 4},
    {.number = n3::kFsinfo, .name = "FSINFO",
     .run = Typed<n3::FSINFO3args, n3::FSINFO3res, proc::Fsinfo>(),
     .max_reply = 4 + kPostOpAttr + 7 * 4 + 8 + 8 + 4},
    {.number = n3::kPathconf, .name = "PATHCONF",
     .run = Typed<n3::PATHCONF3args, n3::PATHCONF3res, proc::Pathconf>(),
     .max_reply = 4 + kPostOpAttr + 6 * 4},
    {.number = n3::kCommit, .name = "COMMIT",
     .run = Typed<n3::COMMIT3args, n3::COMMIT3res, proc::Commit>(),
     .max_reply = 4 + kWcc + n3::kWriteVerfSize},
};
// clang-format on

static_assert(std::size(kProcedures) == n3::kNumProcs);
constexpr bool RowsInOrder() {
  for (uint32_t i = 0; i < std::size(kProcedures); ++i) {
    if (kProcedures[i].number != i) return false;
  }
  return true;
}
static_assert(RowsInOrder(), "row i must be procedure i");

}  // namespace

absl::Span<const rpc::Procedure> Nfs3Procedures() { return kProcedures; }

rpc::Program Nfs3Program(NfsServer* server) {
  return rpc::SingleVersionProgram(n3::kProgram, "nfs", n3::kVersion, kProcedures, server);
}

std::optional<vfs::FileHandle> InlineCallHandle(absl::Span<const uint8_t> call) {
  xdr::Decoder d(call);
  rpc::CallHeader header;
  if (rpc::DecodeCallHeader(d, &header) != rpc::HeaderDisposition::kOk ||
      header.prog != n3::kProgram || header.vers != n3::kVersion ||
      (header.proc != n3::kGetattr && header.proc != n3::kLookup && header.proc != n3::kAccess &&
       header.proc != n3::kRead && header.proc != n3::kWrite)) {
    return std::nullopt;
  }
  // The arguments of all five begin with the object's (or directory's) handle.
  absl::Span<const uint8_t> fh = d.Opaque(vfs::kMaxHandleSize);
  if (!d.ok()) return std::nullopt;
  return vfs::FileHandle::FromBytes(fh);
}

}  // namespace nfs3d::nfsd
