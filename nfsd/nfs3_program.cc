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

constexpr rpc::Procedure kProcedures[] = {
    // number, name, run, idempotent, modifies, max_reply
    {n3::kNull, "NULL", Typed<n3::Void, n3::Void, proc::Null>(), true, false, 0},
    {n3::kGetattr, "GETATTR", Typed<n3::GETATTR3args, n3::GETATTR3res, proc::Getattr>(), true,
     false, 4 + kFattr},
    {n3::kSetattr, "SETATTR", Typed<n3::SETATTR3args, n3::SETATTR3res, proc::Setattr>(), false,
     true, 4 + kWcc},
    {n3::kLookup, "LOOKUP", Typed<n3::LOOKUP3args, n3::LOOKUP3res, proc::Lookup>(), true, false,
     4 + 4 + n3::kFhSize + 2 * kPostOpAttr},
    {n3::kAccess, "ACCESS", Typed<n3::ACCESS3args, n3::ACCESS3res, proc::Access>(), true, false,
     4 + kPostOpAttr + 4},
    {n3::kReadlink, "READLINK", Typed<n3::READLINK3args, n3::READLINK3res, proc::Readlink>(), true,
     false, 4 + kPostOpAttr + 4 + n3::kMaxPathLen},
    {n3::kRead, "READ", &proc::Read, true, false, 4 + kPostOpAttr + 4 + 4 + 4 + kBulk},
    {n3::kWrite, "WRITE", Typed<n3::WRITE3args, n3::WRITE3res, proc::Write>(), false, true,
     4 + kWcc + 4 + 4 + n3::kWriteVerfSize},
    {n3::kCreate, "CREATE", Typed<n3::CREATE3args, n3::diropres3, proc::Create>(), false, true,
     kDirop},
    {n3::kMkdir, "MKDIR", Typed<n3::MKDIR3args, n3::diropres3, proc::Mkdir>(), false, true, kDirop},
    {n3::kSymlink, "SYMLINK", Typed<n3::SYMLINK3args, n3::diropres3, proc::Symlink>(), false, true,
     kDirop},
    {n3::kMknod, "MKNOD", Typed<n3::MKNOD3args, n3::diropres3, proc::Mknod>(), false, true, kDirop},
    {n3::kRemove, "REMOVE", Typed<n3::REMOVE3args, n3::REMOVE3res, proc::Remove>(), false, true,
     4 + kWcc},
    {n3::kRmdir, "RMDIR", Typed<n3::RMDIR3args, n3::RMDIR3res, proc::Rmdir>(), false, true,
     4 + kWcc},
    {n3::kRename, "RENAME", Typed<n3::RENAME3args, n3::RENAME3res, proc::Rename>(), false, true,
     4 + 2 * kWcc},
    {n3::kLink, "LINK", Typed<n3::LINK3args, n3::LINK3res, proc::Link>(), false, true,
     4 + kPostOpAttr + kWcc},
    {n3::kReaddir, "READDIR", Typed<n3::READDIR3args, n3::READDIR3res, proc::Readdir>(), true,
     false, kBulk},
    {n3::kReaddirplus, "READDIRPLUS",
     Typed<n3::READDIRPLUS3args, n3::READDIRPLUS3res, proc::Readdirplus>(), true, false, kBulk},
    {n3::kFsstat, "FSSTAT", Typed<n3::FSSTAT3args, n3::FSSTAT3res, proc::Fsstat>(), true, false,
     4 + kPostOpAttr + 6 * 8 + 4},
    {n3::kFsinfo, "FSINFO", Typed<n3::FSINFO3args, n3::FSINFO3res, proc::Fsinfo>(), true, false,
     4 + kPostOpAttr + 7 * 4 + 8 + 8 + 4},
    {n3::kPathconf, "PATHCONF", Typed<n3::PATHCONF3args, n3::PATHCONF3res, proc::Pathconf>(), true,
     false, 4 + kPostOpAttr + 6 * 4},
    {n3::kCommit, "COMMIT", Typed<n3::COMMIT3args, n3::COMMIT3res, proc::Commit>(), true, false,
     4 + kWcc + n3::kWriteVerfSize},
};

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
      (header.proc != n3::kGetattr && header.proc != n3::kLookup && header.proc != n3::kAccess)) {
    return std::nullopt;
  }
  // The arguments of all three begin with the object's (or directory's) handle.
  absl::Span<const uint8_t> fh = d.Opaque(vfs::kMaxHandleSize);
  if (!d.ok()) return std::nullopt;
  return vfs::FileHandle::FromBytes(fh);
}

}  // namespace nfs3d::nfsd
