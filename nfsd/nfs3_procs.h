// The NFSv3 procedure bodies, one per RFC 1813 procedure, grouped in
// nfs3_proc_<family>.cc. Internal to nfsd: the only way in from outside is the
// table in nfs3_program.h, which adds decoding, encoding and the policy flags.
//
// Every body follows the same shape: Authorize (export, client, credential,
// ro), then exactly one vfs call, then the result with post-op attributes and
// wcc_data also on failure where the RFC carries them.
#ifndef NFS3D_NFSD_NFS3_PROCS_H_
#define NFS3D_NFSD_NFS3_PROCS_H_

#include "nfsd/nfs_server.h"
#include "rpc/call_context.h"
#include "rpc/program.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd::proc {

using rpc::CallContext;
namespace n3 = nfs3d::nfs3;

void Null(NfsServer& s, const CallContext& ctx, const n3::Void& args, n3::Void* res);
void Getattr(NfsServer& s, const CallContext& ctx, const n3::GETATTR3args& args,
             n3::GETATTR3res* res);
void Setattr(NfsServer& s, const CallContext& ctx, const n3::SETATTR3args& args,
             n3::SETATTR3res* res);
void Access(NfsServer& s, const CallContext& ctx, const n3::ACCESS3args& args, n3::ACCESS3res* res);
void Lookup(NfsServer& s, const CallContext& ctx, const n3::LOOKUP3args& args, n3::LOOKUP3res* res);
void Readlink(NfsServer& s, const CallContext& ctx, const n3::READLINK3args& args,
              n3::READLINK3res* res);
// READ encodes its own reply so file data is not copied (see nfs3_proc_io.cc).
rpc::ProcResult Read(void* service, const CallContext& ctx, xdr::Decoder& args,
                     xdr::Encoder& results);
void Write(NfsServer& s, const CallContext& ctx, const n3::WRITE3args& args, n3::WRITE3res* res);
void Commit(NfsServer& s, const CallContext& ctx, const n3::COMMIT3args& args, n3::COMMIT3res* res);
void Create(NfsServer& s, const CallContext& ctx, const n3::CREATE3args& args, n3::diropres3* res);
void Mkdir(NfsServer& s, const CallContext& ctx, const n3::MKDIR3args& args, n3::diropres3* res);
void Symlink(NfsServer& s, const CallContext& ctx, const n3::SYMLINK3args& args,
             n3::diropres3* res);
void Mknod(NfsServer& s, const CallContext& ctx, const n3::MKNOD3args& args, n3::diropres3* res);
void Remove(NfsServer& s, const CallContext& ctx, const n3::REMOVE3args& args, n3::REMOVE3res* res);
void Rmdir(NfsServer& s, const CallContext& ctx, const n3::RMDIR3args& args, n3::RMDIR3res* res);
void Rename(NfsServer& s, const CallContext& ctx, const n3::RENAME3args& args, n3::RENAME3res* res);
void Link(NfsServer& s, const CallContext& ctx, const n3::LINK3args& args, n3::LINK3res* res);
void Readdir(NfsServer& s, const CallContext& ctx, const n3::READDIR3args& args,
             n3::READDIR3res* res);
void Readdirplus(NfsServer& s, const CallContext& ctx, const n3::READDIRPLUS3args& args,
                 n3::READDIRPLUS3res* res);
void Fsstat(NfsServer& s, const CallContext& ctx, const n3::FSSTAT3args& args, n3::FSSTAT3res* res);
void Fsinfo(NfsServer& s, const CallContext& ctx, const n3::FSINFO3args& args, n3::FSINFO3res* res);
void Pathconf(NfsServer& s, const CallContext& ctx, const n3::PATHCONF3args& args,
              n3::PATHCONF3res* res);

}  // namespace nfs3d::nfsd::proc

#endif  // NFS3D_NFSD_NFS3_PROCS_H_
