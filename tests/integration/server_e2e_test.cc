// End-to-end tests of the nfs3d binary over real sockets: file handles
// survive kill -9 and a restart, forged handles are refused, read-only
// exports refuse changes, root is squashed unless no_root_squash.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "client/rpc_client.h"
#include "tests/integration/e2e_harness.h"
#include "tests/support/net.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"

namespace nfs3d {
namespace {

namespace fs = std::filesystem;
using client::RpcClient;
using client::RpcClientOptions;

using test_support::Span;

std::string Bytes(xdr::BufferChain& chain) { return chain.Flatten(); }

// Encodes a few NFSv3 argument structures by hand (the test is a client).
std::string FhArgs(const std::string& fh) {
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  e.Opaque(Span(fh));
  return Bytes(c);
}

std::string DirOpArgs(const std::string& dir, const std::string& name) {
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  e.Opaque(Span(dir));
  e.String(name);
  return Bytes(c);
}

std::string CreateArgs(const std::string& dir, const std::string& name) {
  std::string out = DirOpArgs(dir, name);
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  e.U32(nfs3::GUARDED);
  e.Bool(true);  // mode
  e.U32(0644);
  for (int i = 0; i < 3; ++i) e.Bool(false);  // uid gid size
  e.U32(0);                                   // atime DONT_CHANGE
  e.U32(0);                                   // mtime DONT_CHANGE
  return out + Bytes(c);
}

std::string WriteArgs(const std::string& fh, const std::string& data) {
  xdr::BufferChain c;
  xdr::Encoder e(&c);
  e.Opaque(Span(fh));
  e.U64(0);
  e.U32(static_cast<uint32_t>(data.size()));
  e.U32(nfs3::FILE_SYNC);
  e.Opaque(Span(data));
  return Bytes(c);
}

using e2e::DecodeFattr;
using e2e::Fattr;

class ServerE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-e2e-", getpid());
    fs::remove_all(dir_);
    for (const char* sub : {"rw", "ro", "nosquash"}) fs::create_directories(dir_ / sub);
    fs::permissions(dir_ / "rw", fs::perms::all);  // squashed root may create here
    std::ostringstream exports;
    exports << dir_ / "rw"
            << " 127.0.0.1(rw,insecure)\n"
            << dir_ / "ro"
            << " 127.0.0.1(ro,insecure)\n"
            << dir_ / "nosquash"
            << " 127.0.0.1(rw,insecure,no_root_squash)\n";
    nfsd_.Configure(dir_, exports.str());
    ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();
    port_ = nfsd_.port();
    mount_port_ = nfsd_.mount_port();
  }

  void TearDown() override {
    nfsd_.Stop();
    fs::remove_all(dir_);
  }

  std::unique_ptr<RpcClient> Client(uint16_t port, uint32_t uid) {
    RpcClientOptions o;
    o.cred.flavor = kAuthSys;
    o.cred.machine = "e2e";
    o.cred.uid = uid;
    o.cred.gid = uid;
    auto c = RpcClient::Connect("127.0.0.1", port, o);
    EXPECT_TRUE(c.ok()) << c.status();
    return std::move(*c);
  }

  std::string Mount(const fs::path& path) {
    auto c = Client(mount_port_, 0);
    xdr::BufferChain chain;
    xdr::Encoder e(&chain);
    e.String(path.string());
    auto reply = c->Call(mount3::kProgram, 3, mount3::kMnt, Span(Bytes(chain)));
    EXPECT_TRUE(reply.ok());
    xdr::Decoder d(Span(reply->results));
    EXPECT_EQ(d.U32(), 0u) << "MNT " << path;
    auto fh = d.Opaque(64);
    return std::string(reinterpret_cast<const char*>(fh.data()), fh.size());
  }

  // Calls an NFSv3 procedure, returns its nfsstat3 and leaves *d after it.
  uint32_t Nfs(uint32_t uid, uint32_t proc, const std::string& args, std::string* results) {
    auto reply = Client(port_, uid)->Call(nfs3::kProgram, 3, proc, Span(args));
    EXPECT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->accept_stat, 0u);
    *results = reply->results;
    xdr::Decoder d(Span(*results));
    return d.U32();
  }

  // CREATE as uid; returns the new file's attributes.
  Fattr Create(uint32_t uid, const std::string& dir, const std::string& name, uint32_t* status) {
    std::string res;
    *status = Nfs(uid, nfs3::kCreate, CreateArgs(dir, name), &res);
    Fattr attr{};
    if (*status != 0) return attr;
    xdr::Decoder d(Span(res));
    d.U32();
    if (d.Bool()) d.Opaque(64);
    if (d.Bool()) attr = DecodeFattr(d);
    return attr;
  }

  fs::path dir_;
  e2e::NfsdProcess nfsd_;
  uint16_t port_ = 0, mount_port_ = 0;
};

TEST_F(ServerE2eTest, HandleSurvivesKill9AndRestart) {
  std::string root = Mount(dir_ / "rw");
  uint32_t status;
  Create(1000, root, "keep", &status);
  ASSERT_EQ(status, 0u);
  std::string res;
  ASSERT_EQ(Nfs(1000, nfs3::kLookup, DirOpArgs(root, "keep"), &res), 0u);
  xdr::Decoder d(Span(res));
  d.U32();
  auto fh_span = d.Opaque(64);
  std::string fh(reinterpret_cast<const char*>(fh_span.data()), fh_span.size());
  ASSERT_EQ(Nfs(1000, nfs3::kGetattr, FhArgs(fh), &res), 0u);
  xdr::Decoder before(Span(res));
  before.U32();
  uint64_t fileid = DecodeFattr(before).fileid;

  nfsd_.Kill9();
  ASSERT_TRUE(nfsd_.Start()) << nfsd_.Log();  // same ports, state and exports

  ASSERT_EQ(Nfs(1000, nfs3::kGetattr, FhArgs(fh), &res), 0u);
  xdr::Decoder after(Span(res));
  after.U32();
  EXPECT_EQ(DecodeFattr(after).fileid, fileid);
}

TEST_F(ServerE2eTest, FlippedHandleByteIsRefused) {
  std::string root = Mount(dir_ / "rw");
  std::string res;
  ASSERT_EQ(Nfs(0, nfs3::kGetattr, FhArgs(root), &res), 0u);
  for (size_t i = 0; i < root.size(); ++i) {
    std::string forged = root;
    forged[i] ^= 0x01;
    uint32_t status = Nfs(0, nfs3::kGetattr, FhArgs(forged), &res);
    EXPECT_TRUE(status == nfs3::NFS3ERR_BADHANDLE || status == nfs3::NFS3ERR_STALE)
        << "byte " << i << " status " << status;
  }
}

TEST_F(ServerE2eTest, ReadOnlyExportRefusesChanges) {
  std::ofstream(dir_ / "ro" / "existing") << "data";
  std::string root = Mount(dir_ / "ro");
  uint32_t status;
  Create(0, root, "new", &status);
  EXPECT_EQ(status, nfs3::NFS3ERR_ROFS);
  std::string res;
  EXPECT_EQ(Nfs(0, nfs3::kRemove, DirOpArgs(root, "existing"), &res), nfs3::NFS3ERR_ROFS);
  ASSERT_EQ(Nfs(0, nfs3::kLookup, DirOpArgs(root, "existing"), &res), 0u);
  xdr::Decoder d(Span(res));
  d.U32();
  auto fh = d.Opaque(64);
  std::string file(reinterpret_cast<const char*>(fh.data()), fh.size());
  EXPECT_EQ(Nfs(0, nfs3::kWrite, WriteArgs(file, "x"), &res), nfs3::NFS3ERR_ROFS);
  EXPECT_TRUE(fs::exists(dir_ / "ro" / "existing"));
}

TEST_F(ServerE2eTest, RootIsSquashedUnlessNoRootSquash) {
  uint32_t status;
  Fattr squashed = Create(0, Mount(dir_ / "rw"), "by-root", &status);
  ASSERT_EQ(status, 0u);
  EXPECT_EQ(squashed.uid, 65534u);
  Fattr kept = Create(0, Mount(dir_ / "nosquash"), "by-root", &status);
  ASSERT_EQ(status, 0u);
  EXPECT_EQ(kept.uid, 0u);
  struct stat st;
  ASSERT_EQ(stat((dir_ / "rw" / "by-root").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
}

}  // namespace
}  // namespace nfs3d
