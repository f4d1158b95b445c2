// Test driver for the NFSv3 table: encodes arguments with xdr::Encoder the way
// a client does, runs the real row through its ProcFn with a CallContext, and
// decodes the reply bytes back into the nfs3 result structs. Result decoding
// lives here because the server side never needs it.
#ifndef NFS3D_TESTS_NFSD_NFS3_TEST_CLIENT_H_
#define NFS3D_TESTS_NFSD_NFS3_TEST_CLIENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/call_context.h"
#include "rpc/program.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::nfsd::testing {

namespace n3 = nfs3d::nfs3;

struct ReadReply {
  n3::nfsstat3 status = n3::NFS3_OK;
  n3::post_op_attr file_attributes;
  uint32_t count = 0;
  bool eof = false;
  std::string data;
};

// Who calls and over what.
struct Caller {
  rpc::Transport transport = rpc::Transport::kTcp;
  uint16_t port = 800;  // privileged by default
  uint32_t flavor = kAuthSys;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> gids;
  uint32_t mtu = 0;
};

class Nfs3TestClient {
 public:
  explicit Nfs3TestClient(const rpc::Program& program) : program_(program) {}

  Caller caller;

  // Raw access: runs procedure `proc` on encoded args; returns the reply bytes
  // and checks the reply against the row's max_reply.
  rpc::ProcResult Run(uint32_t proc, const std::function<void(xdr::Encoder&)>& args,
                      std::string* reply);
  // Size of the last reply in bytes.
  size_t last_reply_size() const { return last_reply_size_; }

  n3::GETATTR3res Getattr(const n3::nfs_fh3& fh);
  n3::SETATTR3res Setattr(const n3::nfs_fh3& fh, const n3::sattr3& attrs,
                          std::optional<n3::nfstime3> guard = std::nullopt);
  n3::LOOKUP3res Lookup(const n3::nfs_fh3& dir, std::string_view name);
  n3::ACCESS3res Access(const n3::nfs_fh3& fh, uint32_t access);
  n3::READLINK3res Readlink(const n3::nfs_fh3& fh);
  ReadReply Read(const n3::nfs_fh3& fh, uint64_t offset, uint32_t count);
  n3::WRITE3res Write(const n3::nfs_fh3& fh, uint64_t offset, std::string_view data,
                      n3::stable_how stable, std::optional<uint32_t> count = std::nullopt);
  n3::diropres3 Create(const n3::nfs_fh3& dir, std::string_view name, n3::createmode3 mode,
                       const n3::sattr3& attrs = {}, uint64_t verf = 0);
  n3::diropres3 Mkdir(const n3::nfs_fh3& dir, std::string_view name, const n3::sattr3& attrs = {});
  n3::diropres3 Symlink(const n3::nfs_fh3& dir, std::string_view name, std::string_view target);
  n3::diropres3 Mknod(const n3::nfs_fh3& dir, std::string_view name, n3::ftype3 type,
                      const n3::sattr3& attrs = {}, n3::specdata3 spec = {});
  n3::REMOVE3res Remove(const n3::nfs_fh3& dir, std::string_view name);
  n3::REMOVE3res Rmdir(const n3::nfs_fh3& dir, std::string_view name);
  n3::RENAME3res Rename(const n3::nfs_fh3& from_dir, std::string_view from_name,
                        const n3::nfs_fh3& to_dir, std::string_view to_name);
  n3::LINK3res Link(const n3::nfs_fh3& file, const n3::nfs_fh3& dir, std::string_view name);
  n3::READDIR3res Readdir(const n3::nfs_fh3& dir, uint64_t cookie, const uint8_t* verf,
                          uint32_t count);
  n3::READDIRPLUS3res Readdirplus(const n3::nfs_fh3& dir, uint64_t cookie, const uint8_t* verf,
                                  uint32_t dircount, uint32_t maxcount);
  n3::FSSTAT3res Fsstat(const n3::nfs_fh3& fh);
  n3::FSINFO3res Fsinfo(const n3::nfs_fh3& fh);
  n3::PATHCONF3res Pathconf(const n3::nfs_fh3& fh);
  n3::COMMIT3res Commit(const n3::nfs_fh3& fh, uint64_t offset, uint32_t count);

 private:
  // Runs and returns a decoder positioned at the start of the reply; the
  // bytes live in reply_.
  xdr::Decoder Call(uint32_t proc, const std::function<void(xdr::Encoder&)>& args);

  const rpc::Program& program_;
  std::string reply_;
  size_t last_reply_size_ = 0;
};

// Wire helpers, exposed for tests that build or check bytes themselves.
void EncodeFh(xdr::Encoder& e, const n3::nfs_fh3& fh);
void EncodeSattr(xdr::Encoder& e, const n3::sattr3& s);
n3::fattr3 DecodeFattr(xdr::Decoder& d);
n3::post_op_attr DecodePostOpAttr(xdr::Decoder& d);
n3::wcc_data DecodeWcc(xdr::Decoder& d);

}  // namespace nfs3d::nfsd::testing

#endif  // NFS3D_TESTS_NFSD_NFS3_TEST_CLIENT_H_
