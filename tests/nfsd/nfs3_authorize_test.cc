// The generic per-call checks and the table's policy flags.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <set>

#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

TEST(Nfs3ProgramTest, TableShape) {
  absl::Span<const rpc::Procedure> rows = Nfs3Procedures();
  ASSERT_EQ(rows.size(), 22u);
  const std::set<uint32_t> cached = {n3::kSetattr, n3::kWrite, n3::kCreate, n3::kMkdir,
                                     n3::kSymlink, n3::kMknod, n3::kRemove, n3::kRmdir,
                                     n3::kRename,  n3::kLink};
  for (uint32_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].number, i);
    EXPECT_NE(rows[i].run, nullptr) << rows[i].name;
    EXPECT_EQ(rows[i].idempotent, !cached.count(i)) << rows[i].name;
    EXPECT_EQ(rows[i].modifies, cached.count(i) == 1) << rows[i].name;
  }
  EXPECT_STREQ(rows[n3::kReaddirplus].name, "READDIRPLUS");
  rpc::Program p = Nfs3Program(nullptr);
  EXPECT_EQ(p.number, 100003u);
  ASSERT_EQ(p.versions.size(), 1u);
  EXPECT_EQ(p.versions[0].version, 3u);
}

// A call's transport from 127.0.0.1:port.
rpc::TransportInfo FromLoopback(uint16_t port) {
  rpc::TransportInfo transport;
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(port);
  peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::memcpy(&transport.peer, &peer, sizeof(peer));
  transport.peer_len = sizeof(peer);
  return transport;
}

TEST_F(Nfs3Test, FlippedHandleIsBadhandle) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  fh.data[fh.len - 1] ^= 0x01;
  EXPECT_EQ(client().Getattr(fh).status, n3::NFS3ERR_BADHANDLE);
  n3::nfs_fh3 empty;
  EXPECT_EQ(client().Getattr(empty).status, n3::NFS3ERR_BADHANDLE);
  ReadReply r = client().Read(fh, 0, 10);
  EXPECT_EQ(r.status, n3::NFS3ERR_BADHANDLE);
  EXPECT_FALSE(r.file_attributes);
}

TEST_F(Nfs3Test, RemovedExportIsStale) {
  n3::nfs_fh3 fh = MakeFile(Root(kRwId), "f");
  ASSERT_EQ(client().Getattr(fh).status, n3::NFS3_OK);
  auto table = std::make_shared<conf::ExportTable>(*server_->exports());
  std::erase_if(table->exports, [](const conf::Export& e) { return e.export_id == kRwId; });
  server_->SetExports(table);
  EXPECT_EQ(client().Getattr(fh).status, n3::NFS3ERR_STALE);
  EXPECT_EQ(client().Getattr(Root(kRwId)).status, n3::NFS3ERR_STALE);
  EXPECT_EQ(client().Getattr(Root(kSquashId)).status, n3::NFS3_OK);
}

TEST_F(Nfs3Test, NordirplusAndInsecureLocksApplyPerExport) {
  auto table = std::make_shared<conf::ExportTable>(*server_->exports());
  for (conf::Export& e : table->exports) {
    if (e.export_id != kRwId) continue;
    for (conf::ExportClient& c : e.clients) {
      c.options.readdirplus = false;  // nordirplus
      c.options.auth_nlm = false;     // insecure_locks
    }
  }
  server_->SetExports(table);
  const uint8_t verf[8] = {};
  EXPECT_EQ(client().Readdirplus(Root(kRwId), 0, verf, 4096, 8192).status, n3::NFS3ERR_NOTSUPP);
  EXPECT_EQ(client().Readdirplus(Root(kSquashId), 0, verf, 4096, 8192).status, n3::NFS3_OK);
  // From an unprivileged port: lock requests (NLM) pass, NFS calls do not.
  const rpc::TransportInfo transport = FromLoopback(40000);
  rpc::CallContext ctx;
  ctx.transport = &transport;
  ctx.cred.flavor = kAuthSys;
  CallAuth auth;
  EXPECT_EQ(server_->Authorize(ctx, Root(kRwId), &auth, /*lock_request=*/true), n3::NFS3_OK);
  EXPECT_EQ(server_->Authorize(ctx, Root(kRwId), &auth, /*lock_request=*/false), n3::NFS3ERR_PERM);
}

TEST_F(Nfs3Test, SecListDecidesTheFlavorsAccepted) {
  auto table = conf::ParseExports(Path("rw") + " 127.0.0.1(rw,no_root_squash,fsid=1,sec=sys)\n" +
                                      Path("squash") + " *(rw,fsid=3,sec=none)\n",
                                  "test");
  ASSERT_TRUE(table.ok()) << table.status();
  server_->SetExports(std::make_shared<const conf::ExportTable>(std::move(*table)));
  EXPECT_EQ(client().Getattr(Root(kRwId)).status, n3::NFS3_OK);
  EXPECT_EQ(client().Getattr(Root(kSquashId)).status, n3::NFS3ERR_PERM);  // AUTH_SYS
  client().caller.flavor = kAuthNone;
  EXPECT_EQ(client().Getattr(Root(kRwId)).status, n3::NFS3ERR_PERM);
  EXPECT_EQ(client().Getattr(Root(kSquashId)).status, n3::NFS3_OK);
}

TEST_F(Nfs3Test, KerberosFlavorsFollowTheSecList) {
  auto table = conf::ParseExports(Path("rw") + " 127.0.0.1(rw,fsid=1,sec=krb5p,anonuid=77)\n" +
                                      Path("squash") + " *(rw,fsid=3)\n",
                                  "test");
  ASSERT_TRUE(table.ok()) << table.status();
  server_->SetExports(std::make_shared<const conf::ExportTable>(std::move(*table)));
  const rpc::TransportInfo transport = FromLoopback(700);
  rpc::CallContext ctx;
  ctx.transport = &transport;
  CallAuth auth;
  ctx.cred.flavor = kKrb5i;  // not listed
  EXPECT_EQ(server_->Authorize(ctx, Root(kRwId), &auth), n3::NFS3ERR_PERM);
  EXPECT_EQ(ctx.reject_auth, NfsServer::kAuthTooWeak);
  ctx.reject_auth = 0;
  ctx.cred.flavor = kKrb5p;  // a mapped user
  ctx.cred.uid = 1000;
  ctx.cred.gid = 100;
  ctx.cred.gids = {100, 27};
  ASSERT_EQ(server_->Authorize(ctx, Root(kRwId), &auth), n3::NFS3_OK);
  EXPECT_EQ(auth.cred.uid, 1000u);
  EXPECT_EQ(auth.cred.groups, (std::vector<uint32_t>{100, 27}));
  ctx.cred.anonymous = true;  // a principal with no local user
  ASSERT_EQ(server_->Authorize(ctx, Root(kRwId), &auth), n3::NFS3_OK);
  EXPECT_EQ(auth.cred.uid, 77u);
  // No sec=: sys and none only.
  EXPECT_EQ(server_->Authorize(ctx, Root(kSquashId), &auth), n3::NFS3ERR_PERM);
  // NLM speaks AUTH_SYS for Kerberos mounts: lock requests pass.
  ctx.cred = rpc::Credential{.flavor = kAuthSys};
  EXPECT_EQ(server_->Authorize(ctx, Root(kRwId), &auth, /*lock_request=*/true), n3::NFS3_OK);
  EXPECT_EQ(server_->Authorize(ctx, Root(kRwId), &auth), n3::NFS3ERR_PERM);
}

// manage_gids: an AUTH_SYS caller runs with the groups the server's name
// service gives its uid (root: uid 0 exists everywhere), not the list it sent;
// its primary gid stays. Off: the list as sent.
TEST_F(Nfs3Test, ManageGidsReplacesTheAuthSysGroupList) {
  rpc::TransportInfo transport = FromLoopback(700);
  rpc::CallContext ctx;
  ctx.transport = &transport;
  ctx.cred = rpc::Credential{.flavor = kAuthSys, .uid = 0, .gid = 5, .gids = {5, 1234}};
  CallAuth auth;
  ASSERT_EQ(server_->Authorize(ctx, Root(kRwId), &auth), n3::NFS3_OK);
  EXPECT_EQ(auth.cred.groups, (std::vector<uint32_t>{5, 1234}));
  server_->managed_gids().Configure({.enabled = true});
  ASSERT_EQ(server_->Authorize(ctx, Root(kRwId), &auth), n3::NFS3_OK);
  EXPECT_EQ(auth.cred.gid, 5u);
  const std::vector<uint32_t> root_groups = auth.cred.groups;
  EXPECT_FALSE(root_groups.empty());
  EXPECT_EQ(std::count(root_groups.begin(), root_groups.end(), 1234u), 0);
  EXPECT_EQ(std::count(root_groups.begin(), root_groups.end(), 0u), 1);  // root's group
  // A uid nobody knows runs with no supplementary groups.
  ctx.cred.uid = 3999999;
  ASSERT_EQ(server_->Authorize(ctx, Root(kRwId), &auth), n3::NFS3_OK);
  EXPECT_TRUE(auth.cred.groups.empty());
  server_->managed_gids().Configure({.enabled = false});
}

TEST_F(Nfs3Test, UnlistedClientIsAcces) {
  EXPECT_EQ(client().Getattr(Root(kOtherId)).status, n3::NFS3ERR_ACCES);
  EXPECT_EQ(client().Lookup(Root(kOtherId), "x").status, n3::NFS3ERR_ACCES);
}

TEST_F(Nfs3Test, SecureExportNeedsPrivilegedPort) {
  client().caller.port = 40000;
  EXPECT_EQ(client().Getattr(Root(kRwId)).status, n3::NFS3ERR_PERM);
  client().caller.port = 1023;
  EXPECT_EQ(client().Getattr(Root(kRwId)).status, n3::NFS3_OK);
}

TEST_F(Nfs3Test, EveryModifyingProcedureIsRofsOnReadOnlyExport) {
  const n3::nfs_fh3 ro = Root(kRoId);
  EXPECT_EQ(client().Setattr(ro, Mode(0777)).status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Write(ro, 0, "x", n3::UNSTABLE).status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Create(ro, "a", n3::UNCHECKED).status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Mkdir(ro, "a").status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Symlink(ro, "a", "b").status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Mknod(ro, "a", n3::NF3FIFO).status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Remove(ro, "a").status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Rmdir(ro, "a").status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Rename(ro, "a", ro, "b").status, n3::NFS3ERR_ROFS);
  EXPECT_EQ(client().Link(ro, ro, "b").status, n3::NFS3ERR_ROFS);
  // Reads still work.
  EXPECT_EQ(client().Getattr(ro).status, n3::NFS3_OK);
  EXPECT_EQ(client().Readdir(ro, 0, nullptr, 4096).status, n3::NFS3_OK);
  EXPECT_EQ(client().Fsinfo(ro).status, n3::NFS3_OK);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
