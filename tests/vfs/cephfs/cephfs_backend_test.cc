// The CephFS backend against the real one-node cluster of the ctest fixture
// "ceph" (tests/vfs/cephfs/cephfs_test_fixture.h).
#include "vfs/cephfs/cephfs_backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "tests/support/durable_files_contract.h"
#include "tests/support/permission_contract.h"
#include "tests/vfs/cephfs/cephfs_test_fixture.h"
#include "tests/vfs/cephfs/native_client.h"
#include "vfs/cephfs/cephfs_exclusive_create.h"
#include "vfs/cephfs/cephfs_impl.h"
#include "vfs/file_handle_codec.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

constexpr uint32_t kExport = 7;
const Cred kRoot = kCephRoot;
const Cred kUser{1000, 1000, {}};

class CephfsBackendTest : public CephfsTestBase {
 protected:
  CephfsBackendTest() : CephfsTestBase("nfs3d-cephfs-test", kExport, /*session_check_seconds=*/1) {}

  FileHandle CreateFile(const std::string& name, const Cred& cred = kRoot) {
    Wcc wcc;
    SetAttributes attrs;
    attrs.mode = 0644;
    auto created = backend_->Create(cred, dir_, name, CreateMode::kGuarded, attrs, {}, &wcc);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->handle : FileHandle{};
  }
};

TEST_F(CephfsBackendTest, WriteCommitReadRoundTrip) {
  FileHandle fh = CreateFile("data");
  std::vector<uint8_t> data(1 << 20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  Wcc wcc;
  ASSERT_OK_AND_ASSIGN(w, backend_->Write(kRoot, fh, 4096, data, StableHow::kUnstable, &wcc));
  EXPECT_EQ(w.count, data.size());
  EXPECT_EQ(w.committed, StableHow::kUnstable);
  ASSERT_TRUE(wcc.before.has_value());
  EXPECT_EQ(wcc.before->size, 0u);
  ASSERT_TRUE(wcc.after.has_value());
  EXPECT_EQ(wcc.after->size, 4096 + data.size());
  ASSERT_OK_AND_ASSIGN(verf, backend_->Commit(kRoot, fh, 0, 0, &wcc));
  EXPECT_EQ(verf, w.verifier);
  EXPECT_EQ(verf, backend_->WriteVerifier());
  ASSERT_OK_AND_ASSIGN(
      sync, backend_->Write(kRoot, fh, 0, {data.data(), 10}, StableHow::kFileSync, &wcc));
  EXPECT_EQ(sync.committed, StableHow::kFileSync);

  std::vector<uint8_t> back(data.size());
  ASSERT_OK_AND_ASSIGN(r, backend_->Read(kRoot, fh, 4096, back.size(), back.data()));
  EXPECT_EQ(r.count, back.size());
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(back, data);
}

TEST_F(CephfsBackendTest, ExclusiveCreateKeepsTheVerifier) {
  Wcc wcc;
  const Verifier v1{1, 2, 3, 4, 5, 6, 7, 8}, v2{8, 7, 6, 5, 4, 3, 2, 1};
  ASSERT_OK_AND_ASSIGN(first,
                       backend_->Create(kRoot, dir_, "x", CreateMode::kExclusive, {}, v1, &wcc));
  ASSERT_OK_AND_ASSIGN(again,
                       backend_->Create(kRoot, dir_, "x", CreateMode::kExclusive, {}, v1, &wcc));
  EXPECT_EQ(first.handle, again.handle);
  auto other = backend_->Create(kRoot, dir_, "x", CreateMode::kExclusive, {}, v2, &wcc);
  EXPECT_EQ(ErrnoOf(other.status()), EEXIST);
  auto guarded = backend_->Create(kRoot, dir_, "x", CreateMode::kGuarded, {}, v1, &wcc);
  EXPECT_EQ(ErrnoOf(guarded.status()), EEXIST);
}

// A head cut inside an exclusive create (bench/powercut.sh --cephfs found a
// cut between the create and its verifier, after which the client's
// retransmission got NFS3ERR_EXIST): what each cut leaves behind, made here
// with a second client, and the retransmission that must find its own file.
TEST_F(CephfsBackendTest, ExclusiveCreateRetransmittedAfterACutFindsItsFile) {
  ASSERT_OK_AND_ASSIGN(native, ::nfs3d::test_support::NativeClient::Mount(ClusterDir()));
  const Verifier v1{1, 2, 3, 4, 5, 6, 7, 8};
  const auto temp_of = [&](const std::string& name) {
    return dir_path_ + "/" + ExclusiveCreateTempName(name, v1);
  };
  Wcc wcc;
  // Cut after the temporary file was made, before its verifier was stored.
  ASSERT_TRUE(native->WriteFile(temp_of("y"), "cut").ok());
  ASSERT_OK_AND_ASSIGN(y, backend_->Create(kRoot, dir_, "y", CreateMode::kExclusive, {}, v1, &wcc));
  ASSERT_OK_AND_ASSIGN(found, backend_->Lookup(kRoot, dir_, "y", nullptr));
  EXPECT_EQ(found.handle, y.handle);
  ASSERT_OK_AND_ASSIGN(stored, native->GetXattr(dir_path_ + "/y", kVerifierXattr));
  EXPECT_EQ(stored, std::string(v1.begin(), v1.end()));
  const std::string y_temp = ExclusiveCreateTempName("y", v1);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, dir_, y_temp, nullptr).status()), ENOENT);

  // Cut after the link, before the temporary name was removed (here a
  // stand-in file under it): the retransmission answers with the same file.
  ASSERT_OK_AND_ASSIGN(z, backend_->Create(kRoot, dir_, "z", CreateMode::kExclusive, {}, v1, &wcc));
  ASSERT_TRUE(native->WriteFile(temp_of("z"), "cut").ok());
  ASSERT_OK_AND_ASSIGN(again,
                       backend_->Create(kRoot, dir_, "z", CreateMode::kExclusive, {}, v1, &wcc));
  EXPECT_EQ(again.handle, z.handle);
  const std::string z_temp = ExclusiveCreateTempName("z", v1);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, dir_, z_temp, nullptr).status()), ENOENT);

  // Another user's file put under the temporary name beforehand (the
  // verifier crosses the wire in clear) is not taken for the caller's.
  ASSERT_TRUE(native->WriteFile(dir_path_ + "/planted", "x").ok());
  ASSERT_OK_AND_ASSIGN(planted, backend_->Lookup(kRoot, dir_, "planted", nullptr));
  SetAttributes chown;
  chown.uid = kUser.uid;
  ASSERT_TRUE(backend_->SetAttr(kRoot, planted.handle, chown, std::nullopt, &wcc).ok());
  ASSERT_TRUE(
      backend_->Rename(kRoot, dir_, "planted", dir_, ExclusiveCreateTempName("p", v1), &wcc, &wcc)
          .ok());
  auto taken = backend_->Create(kRoot, dir_, "p", CreateMode::kExclusive, {}, v1, &wcc);
  EXPECT_EQ(ErrnoOf(taken.status()), EEXIST);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, dir_, "p", nullptr).status()), ENOENT);

  // Another client's file under the name: EXIST, and nothing left behind.
  ASSERT_TRUE(native->WriteFile(dir_path_ + "/w", "theirs").ok());
  auto theirs = backend_->Create(kRoot, dir_, "w", CreateMode::kExclusive, {}, v1, &wcc);
  EXPECT_EQ(ErrnoOf(theirs.status()), EEXIST);
  const std::string w_temp = ExclusiveCreateTempName("w", v1);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, dir_, w_temp, nullptr).status()), ENOENT);
}

TEST_F(CephfsBackendTest, ReadDirResumesFromCookies) {
  std::set<std::string> want = {".", ".."};
  for (int i = 0; i < 40; ++i) {
    CreateFile("f" + std::to_string(i));
    want.insert("f" + std::to_string(i));
  }
  std::multiset<std::string> seen;
  uint64_t cookie = 0;
  Verifier verf{};
  bool eof = false;
  while (!eof) {
    int taken = 0;
    ASSERT_TRUE(backend_
                    ->ReadDir(
                        kRoot, dir_, cookie, &verf,
                        [&](const DirEntry& e) {
                          if (taken == 7) return false;
                          ++taken;
                          seen.insert(std::string(e.name));
                          cookie = e.cookie;
                          return true;
                        },
                        &eof, nullptr)
                    .ok());
  }
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), want);
  EXPECT_EQ(seen.size(), want.size());  // nothing twice
}

TEST_F(CephfsBackendTest, NamespaceOperations) {
  Wcc wcc;
  ASSERT_OK_AND_ASSIGN(sub, backend_->Mkdir(kRoot, dir_, "sub", {}, &wcc));
  EXPECT_TRUE(wcc.before.has_value());
  EXPECT_TRUE(wcc.after.has_value());
  EXPECT_EQ(sub.attributes->type, FileType::kDirectory);
  ASSERT_OK_AND_ASSIGN(link, backend_->Symlink(kRoot, dir_, "ln", "sub/target", {}, &wcc));
  ASSERT_OK_AND_ASSIGN(target, backend_->Readlink(kRoot, link.handle, nullptr));
  EXPECT_EQ(target, "sub/target");
  ASSERT_OK_AND_ASSIGN(fifo, backend_->Mknod(kRoot, dir_, "fifo", FileType::kFifo, 0, 0, {}, &wcc));
  EXPECT_EQ(fifo.attributes->type, FileType::kFifo);
  ASSERT_OK_AND_ASSIGN(chr, backend_->Mknod(kRoot, dir_, "chr", FileType::kChar, 1, 3, {}, &wcc));
  EXPECT_EQ(chr.attributes->rdev_major, 1u);
  EXPECT_EQ(chr.attributes->rdev_minor, 3u);

  FileHandle f = CreateFile("f");
  std::optional<Attributes> fattrs;
  ASSERT_TRUE(backend_->Link(kRoot, f, sub.handle, "hard", &fattrs, &wcc).ok());
  ASSERT_TRUE(fattrs.has_value());
  EXPECT_EQ(fattrs->nlink, 2u);
  Wcc from, to;
  ASSERT_TRUE(backend_->Rename(kRoot, dir_, "f", sub.handle, "moved", &from, &to).ok());
  ASSERT_OK_AND_ASSIGN(moved, backend_->Lookup(kRoot, sub.handle, "moved", nullptr));
  EXPECT_EQ(moved.handle, f);
  ASSERT_OK_AND_ASSIGN(up, backend_->Lookup(kRoot, sub.handle, "..", nullptr));
  EXPECT_EQ(up.handle, dir_);
  EXPECT_EQ(ErrnoOf(backend_->Rmdir(kRoot, dir_, "sub", &wcc)), ENOTEMPTY);
  EXPECT_EQ(ErrnoOf(backend_->Remove(kRoot, dir_, "sub", &wcc)), EISDIR);
  ASSERT_TRUE(backend_->Remove(kRoot, sub.handle, "moved", &wcc).ok());
  ASSERT_TRUE(backend_->Remove(kRoot, sub.handle, "hard", &wcc).ok());
  ASSERT_TRUE(backend_->Rmdir(kRoot, dir_, "sub", &wcc).ok());
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, f).status()), ESTALE);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, dir_, "sub", nullptr).status()), ENOENT);
}

TEST_F(CephfsBackendTest, GuardedSetAttrAndTruncate) {
  FileHandle fh = CreateFile("g");
  ASSERT_OK_AND_ASSIGN(a, backend_->GetAttr(kRoot, fh));
  SetAttributes size;
  size.size = 12345;
  Wcc wcc;
  Time wrong = a.ctime;
  wrong.seconds -= 1;
  EXPECT_EQ(ErrnoOf(backend_->SetAttr(kRoot, fh, size, wrong, &wcc)), kErrNotSync);
  ASSERT_TRUE(backend_->SetAttr(kRoot, fh, size, a.ctime, &wcc).ok());
  ASSERT_TRUE(wcc.after.has_value());
  EXPECT_EQ(wcc.after->size, 12345u);
  SetAttributes mode;
  mode.mode = 0600;
  ASSERT_TRUE(backend_->SetAttr(kRoot, fh, mode, std::nullopt, &wcc).ok());
  EXPECT_EQ(wcc.after->mode, 0600u);
}

TEST_F(CephfsBackendTest, CallerCredentialsAreChecked) {
  Wcc wcc;
  SetAttributes closed;
  closed.mode = 0755;
  ASSERT_OK_AND_ASSIGN(rootdir, backend_->Mkdir(kRoot, dir_, "rootonly", closed, &wcc));
  auto denied = backend_->Create(kUser, rootdir.handle, "x", CreateMode::kGuarded, {}, {}, &wcc);
  EXPECT_EQ(ErrnoOf(denied.status()), EACCES);
  // The user's own file in the world-writable test directory.
  FileHandle mine = CreateFile("mine", kUser);
  ASSERT_OK_AND_ASSIGN(attrs, backend_->GetAttr(kRoot, mine));
  EXPECT_EQ(attrs.uid, 1000u);
  FileHandle roots = CreateFile("roots");
  const uint8_t byte = 1;
  EXPECT_EQ(
      ErrnoOf(backend_->Write(kUser, roots, 0, {&byte, 1}, StableHow::kUnstable, &wcc).status()),
      EACCES);
  ASSERT_OK_AND_ASSIGN(access, backend_->Access(kUser, roots, 0x3f, nullptr));
  EXPECT_EQ(access.granted, 0x01u);  // read only
}

TEST_F(CephfsBackendTest, HandlesSurviveARestart) {
  FileHandle fh = CreateFile("keep");
  const std::string text = "survives";
  Wcc wcc;
  ASSERT_TRUE(backend_
                  ->Write(kRoot, fh, 0,
                          {reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                          StableHow::kFileSync, &wcc)
                  .ok());
  backend_.reset();  // unmounts: the new instance has no cached inodes
  backend_ = Open();
  ASSERT_NE(backend_, nullptr);
  char buf[16];
  ASSERT_OK_AND_ASSIGN(r,
                       backend_->Read(kRoot, fh, 0, sizeof(buf), reinterpret_cast<uint8_t*>(buf)));
  EXPECT_EQ(std::string(buf, r.count), text);
  ASSERT_OK_AND_ASSIGN(again, backend_->Lookup(kRoot, dir_, "keep", nullptr));
  EXPECT_EQ(again.handle, fh);
}

TEST_F(CephfsBackendTest, ForgedHandlesAndFsStat) {
  FileHandle fh = CreateFile("h");
  FileHandle forged = fh;
  forged.data[forged.len - 1] ^= 1;
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, forged).status()), kErrBadHandle);
  ASSERT_OK_AND_ASSIGN(exp, backend_->ExportOf(fh));
  EXPECT_EQ(exp, kExport);
  ASSERT_OK_AND_ASSIGN(st, backend_->StatFs(kRoot, fh, nullptr));
  // The test cluster has no manager, which is what fills in usage: the
  // figures may be 0, but are consistent.
  EXPECT_LE(st.free_bytes, st.total_bytes);
  EXPECT_LE(st.avail_bytes, st.free_bytes);
}

TEST_F(CephfsBackendTest, LocksAreCephfsLocksSeenByOtherClients) {
  FileHandle fh = CreateFile("locked");
  // A second libcephfs client: another gateway or a kernel cephfs mount.
  // (Its own state directory: its own session, and the same handle key.)
  const std::string other_state = state_.string() + "/other";
  std::filesystem::create_directories(other_state);
  std::filesystem::copy_file(StateDirPath() + "/handle.key", other_state + "/handle.key");
  std::unique_ptr<CephfsBackend> other = Open(other_state);
  ASSERT_NE(other, nullptr);
  constexpr short kWrite = F_WRLCK, kUnlock = F_UNLCK;
  ASSERT_OK_AND_ASSIGN(set, backend_->SetLock(fh, 1, 0, 99, kWrite));
  EXPECT_TRUE(set);
  ASSERT_OK_AND_ASSIGN(held, other->TestLock(fh, 1, 50, 60, false));
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(held->exclusive);
  EXPECT_EQ(held->first, 0u);
  EXPECT_EQ(held->last, 99u);
  ASSERT_OK_AND_ASSIGN(refused, other->SetLock(fh, 1, 10, 10, kWrite));
  EXPECT_FALSE(refused);
  ASSERT_OK_AND_ASSIGN(beside, other->SetLock(fh, 1, 100, UINT64_MAX, kWrite));
  EXPECT_TRUE(beside);  // no overlap
  // The same client, another owner: conflicts too (owners are distinct).
  ASSERT_OK_AND_ASSIGN(owner2, backend_->SetLock(fh, 2, 0, 0, kWrite));
  EXPECT_FALSE(owner2);
  ASSERT_OK_AND_ASSIGN(unlocked, backend_->SetLock(fh, 1, 0, UINT64_MAX, kUnlock));
  EXPECT_TRUE(unlocked);
  ASSERT_OK_AND_ASSIGN(now, other->SetLock(fh, 1, 10, 10, kWrite));
  EXPECT_TRUE(now);
  other.reset();
  std::filesystem::remove_all(other_state);
}

// A WRITE or READ of no bytes is legal NFS (and libcephfs 16.2 aborts the
// process on a zero-length write): it succeeds and changes nothing.
TEST_F(CephfsBackendTest, ZeroLengthWriteAndReadChangeNothing) {
  const FileHandle fh = CreateFile("zero");
  Wcc wcc;
  for (StableHow stable : {StableHow::kUnstable, StableHow::kFileSync}) {
    ASSERT_OK_AND_ASSIGN(w, backend_->Write(kRoot, fh, 100, {}, stable, &wcc));
    EXPECT_EQ(w.count, 0u);
  }
  ASSERT_OK_AND_ASSIGN(a, backend_->GetAttr(kRoot, fh));
  EXPECT_EQ(a.size, 0u);
  uint8_t buf[1];
  ASSERT_OK_AND_ASSIGN(r, backend_->Read(kRoot, fh, 0, 0, buf));
  EXPECT_EQ(r.count, 0u);
}

// The [cluster] state of the heads (grace periods, status monitors) as
// files in the file system: what a local directory does, also on CephFS.
TEST_F(CephfsBackendTest, SharedFilesKeepTheDurableFilesContract) {
  CephfsOptions options = TestClusterOptions(state_.string() + "/clustered", 0);
  options.node_id = "files-test";
  options.cluster_name = "test" + std::to_string(getpid());
  options.shared_dir = "/.nfs3d-files-" + std::to_string(getpid());
  auto clustered = CephfsBackend::Create(options);
  ASSERT_TRUE(clustered.ok()) << clustered.status();
  // Run directly (the daemon passes DeadlineBackend::Run).
  auto files = (*clustered)->SharedFiles([](std::function<absl::Status()> call) { return call(); });
  ASSERT_TRUE(files.ok()) << files.status();
  absl::StatusOr<std::unique_ptr<DurableFiles>> empty = (*files)->Sub("contract");
  ASSERT_TRUE(empty.ok()) << empty.status();
  test_support::CheckDurableFilesContract(**empty);
  // A head without a node id has no shared files.
  EXPECT_EQ(backend_->SharedFiles([](std::function<absl::Status()> call) { return call(); })
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  std::filesystem::remove_all(options.state_dir);
}

uint32_t ModeOf(Backend& backend, const FileHandle& fh) {
  auto a = backend.GetAttr(kRoot, fh);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? a->mode : 0;
}

// Writing or truncating a file clears its setuid bit, and its setgid bit
// when group-exec is set or the writer is not in its group, unless root
// writes (the kernel's rule for writers without CAP_FSETID).
TEST_F(CephfsBackendTest, WriteAndTruncateBySomeoneElseClearSetuidSetgid) {
  const Cred other{2000, 2000, {}};
  const Cred group_member{2001, 3000, {}};
  const uint8_t byte = 'x';
  struct Case {
    uint32_t mode;
    Cred writer;
    bool truncate;
    uint32_t after;
  };
  const Case cases[] = {
      {04777, other, false, 0777},  {02777, other, false, 0777},
      {06777, other, false, 0777},  {06777, other, true, 0777},
      {04777, kRoot, false, 04777}, {02767, group_member, false, 02767},
      {02767, other, false, 0767},  {04777, kUser, false, 0777},
      {02767, other, true, 0767},   {04777, kUser, true, 0777},
      {06777, kRoot, true, 06777},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "mode " << std::oct << c.mode << " uid " << std::dec
                                    << c.writer.uid << (c.truncate ? " truncate" : " write"));
    FileHandle fh = CreateFile("priv" + std::to_string(i++), kUser);
    SetAttributes set;
    set.mode = c.mode;
    set.gid = 3000;
    Wcc wcc;
    ASSERT_TRUE(backend_->SetAttr(kRoot, fh, set, std::nullopt, &wcc).ok());
    ASSERT_EQ(ModeOf(*backend_, fh), c.mode);
    if (c.truncate) {
      SetAttributes size;
      size.size = 0;
      ASSERT_TRUE(backend_->SetAttr(c.writer, fh, size, std::nullopt, &wcc).ok());
    } else {
      auto w = backend_->Write(c.writer, fh, 0, {&byte, 1}, StableHow::kUnstable, &wcc);
      ASSERT_TRUE(w.ok()) << w.status();
    }
    ASSERT_TRUE(wcc.after.has_value());
    EXPECT_EQ(wcc.after->mode, c.after);
    EXPECT_EQ(ModeOf(*backend_, fh), c.after);
  }
}

// chown or chgrp of a regular file clears setuid, and setgid with
// group-execute, also when root does it (Linux's chown_common).
TEST_F(CephfsBackendTest, ChownClearsSetuidSetgid) {
  struct Case {
    uint32_t mode;
    bool uid;
    uint32_t after;
  };
  const Case cases[] = {
      {06755, true, 0755}, {06755, false, 0755}, {02745, true, 02745}, {04700, false, 0700}};
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << "mode " << std::oct << c.mode << (c.uid ? " chown" : " chgrp"));
    FileHandle fh = CreateFile("chown" + std::to_string(i++));
    SetAttributes set;
    set.mode = c.mode;
    Wcc wcc;
    ASSERT_TRUE(backend_->SetAttr(kRoot, fh, set, std::nullopt, &wcc).ok());
    SetAttributes owner;
    if (c.uid)
      owner.uid = 1234;
    else
      owner.gid = 1234;
    ASSERT_TRUE(backend_->SetAttr(kRoot, fh, owner, std::nullopt, &wcc).ok());
    EXPECT_EQ(ModeOf(*backend_, fh), c.after);
  }
}

// The caller's supplementary groups count as its own: for chgrp of its
// files and for access through a file's or directory's group bits.
TEST_F(CephfsBackendTest, SupplementaryGroupsCount) {
  const Cred user{1000, 1000, {1000, 3000, 3001}};
  FileHandle mine = CreateFile("mine", user);
  SetAttributes chgrp;
  chgrp.gid = 3001;
  Wcc wcc;
  absl::Status st = backend_->SetAttr(user, mine, chgrp, std::nullopt, &wcc);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_OK_AND_ASSIGN(a, backend_->GetAttr(kRoot, mine));
  EXPECT_EQ(a.gid, 3001u);
  // Not a group of the caller's.
  chgrp.gid = 3002;
  EXPECT_EQ(ErrnoOf(backend_->SetAttr(user, mine, chgrp, std::nullopt, &wcc)), EPERM);

  FileHandle roots = CreateFile("group-rw");
  SetAttributes group_only;
  group_only.mode = 0060;
  group_only.gid = 3000;
  ASSERT_TRUE(backend_->SetAttr(kRoot, roots, group_only, std::nullopt, &wcc).ok());
  const uint8_t byte = 'g';
  ASSERT_TRUE(backend_->Write(user, roots, 0, {&byte, 1}, StableHow::kUnstable, &wcc).ok());
  uint8_t back = 0;
  ASSERT_OK_AND_ASSIGN(r, backend_->Read(user, roots, 0, 1, &back));
  EXPECT_EQ(r.count, 1u);
  ASSERT_OK_AND_ASSIGN(access, backend_->Access(user, roots, 0x3f, nullptr));
  EXPECT_EQ(access.granted, 0x01u | 0x04u | 0x08u);

  SetAttributes dir_attrs;
  dir_attrs.mode = 0070;
  ASSERT_OK_AND_ASSIGN(gdir, backend_->Mkdir(kRoot, dir_, "group-dir", dir_attrs, &wcc));
  SetAttributes dir_group;
  dir_group.gid = 3001;
  ASSERT_TRUE(backend_->SetAttr(kRoot, gdir.handle, dir_group, std::nullopt, &wcc).ok());
  auto created =
      backend_->Create(user, gdir.handle, "in-group-dir", CreateMode::kGuarded, {}, {}, &wcc);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE(backend_->Lookup(user, gdir.handle, "in-group-dir", nullptr).ok());
}

// A directory moved to another parent takes its ".." link along: the old
// parent's link count drops at once, in the reply and in later GETATTRs.
TEST_F(CephfsBackendTest, RenamedDirectoryUpdatesBothParentsLinkCounts) {
  Wcc wcc;
  ASSERT_OK_AND_ASSIGN(a, backend_->Mkdir(kRoot, dir_, "a", {}, &wcc));
  ASSERT_OK_AND_ASSIGN(b, backend_->Mkdir(kRoot, dir_, "b", {}, &wcc));
  ASSERT_TRUE(backend_->Mkdir(kRoot, a.handle, "c", {}, &wcc).ok());
  ASSERT_OK_AND_ASSIGN(a_before, backend_->GetAttr(kRoot, a.handle));
  ASSERT_OK_AND_ASSIGN(b_before, backend_->GetAttr(kRoot, b.handle));
  EXPECT_EQ(a_before.nlink, 3u);
  EXPECT_EQ(b_before.nlink, 2u);
  Wcc from, to;
  ASSERT_TRUE(backend_->Rename(kRoot, a.handle, "c", b.handle, "c", &from, &to).ok());
  ASSERT_TRUE(from.after.has_value());
  ASSERT_TRUE(to.after.has_value());
  EXPECT_EQ(from.after->nlink, 2u);
  EXPECT_EQ(to.after->nlink, 3u);
  ASSERT_OK_AND_ASSIGN(a_after, backend_->GetAttr(kRoot, a.handle));
  ASSERT_OK_AND_ASSIGN(b_after, backend_->GetAttr(kRoot, b.handle));
  EXPECT_EQ(a_after.nlink, 2u);
  EXPECT_EQ(b_after.nlink, 3u);
  // MKDIR and RMDIR change the parent's link count too.
  ASSERT_TRUE(backend_->Mkdir(kRoot, a.handle, "d2", {}, &wcc).ok());
  ASSERT_TRUE(wcc.after.has_value());
  EXPECT_EQ(wcc.after->nlink, 3u);
  ASSERT_OK_AND_ASSIGN(a_mkdir, backend_->GetAttr(kRoot, a.handle));
  EXPECT_EQ(a_mkdir.nlink, 3u);
  ASSERT_TRUE(backend_->Rmdir(kRoot, a.handle, "d2", &wcc).ok());
  EXPECT_EQ(wcc.after->nlink, 2u);
  ASSERT_OK_AND_ASSIGN(a_rmdir, backend_->GetAttr(kRoot, a.handle));
  EXPECT_EQ(a_rmdir.nlink, 2u);
  // And back, through the same cached inodes.
  ASSERT_TRUE(backend_->Rename(kRoot, b.handle, "c", a.handle, "c", &from, &to).ok());
  EXPECT_EQ(from.after->nlink, 2u);
  EXPECT_EQ(to.after->nlink, 3u);
}

std::string ReadAll(Backend& backend, const FileHandle& fh) {
  uint8_t buf[256];
  auto r = backend.Read(kRoot, fh, 0, sizeof(buf), buf);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::string(reinterpret_cast<char*>(buf), r->count) : "";
}

std::set<std::string> List(Backend& backend, const FileHandle& dir) {
  std::set<std::string> names;
  Verifier verf{};
  bool eof = false;
  absl::Status st = backend.ReadDir(
      kRoot, dir, 0, &verf,
      [&](const DirEntry& e) {
        names.insert(std::string(e.name));
        return true;
      },
      &eof, nullptr);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_TRUE(eof);
  return names;
}

// Snapshots (.snap/<name>) are readable through the export, refuse every
// change, and their handles work after a restart and on another head.
TEST_F(CephfsBackendTest, SnapshotsAreReadOnlyAndTheirHandlesLast) {
  ASSERT_OK_AND_ASSIGN(native, ::nfs3d::test_support::NativeClient::Mount(ClusterDir()));
  ASSERT_TRUE(native->WriteFile(dir_path_ + "/f", "old").ok());
  Wcc wcc;
  ASSERT_TRUE(backend_->Mkdir(kRoot, dir_, "sub", {}, &wcc).ok());
  ASSERT_TRUE(native->WriteFile(dir_path_ + "/sub/g", "in sub").ok());
  absl::Status snapped = native->MakeSnapshot(dir_path_, "s1");
  ASSERT_TRUE(snapped.ok()) << snapped;
  ASSERT_TRUE(native->WriteFile(dir_path_ + "/f", "new!").ok());

  ASSERT_OK_AND_ASSIGN(snapdir, backend_->Lookup(kRoot, dir_, ".snap", nullptr));
  EXPECT_EQ(snapdir.attributes.type, FileType::kDirectory);
  EXPECT_NE(snapdir.handle, dir_);
  EXPECT_EQ(List(*backend_, snapdir.handle), (std::set<std::string>{".", "..", "s1"}));
  ASSERT_OK_AND_ASSIGN(s1, backend_->Lookup(kRoot, snapdir.handle, "s1", nullptr));
  EXPECT_EQ(List(*backend_, s1.handle), (std::set<std::string>{".", "..", "f", "sub"}));
  ASSERT_OK_AND_ASSIGN(old_f, backend_->Lookup(kRoot, s1.handle, "f", nullptr));
  ASSERT_OK_AND_ASSIGN(live_f, backend_->Lookup(kRoot, dir_, "f", nullptr));
  EXPECT_NE(old_f.handle, live_f.handle);
  EXPECT_EQ(ReadAll(*backend_, old_f.handle), "old");
  EXPECT_EQ(ReadAll(*backend_, live_f.handle), "new!");
  ASSERT_OK_AND_ASSIGN(old_sub, backend_->Lookup(kRoot, s1.handle, "sub", nullptr));
  ASSERT_OK_AND_ASSIGN(old_g, backend_->Lookup(kRoot, old_sub.handle, "g", nullptr));
  EXPECT_EQ(ReadAll(*backend_, old_g.handle), "in sub");
  ASSERT_OK_AND_ASSIGN(up, backend_->Lookup(kRoot, old_sub.handle, "..", nullptr));
  EXPECT_EQ(up.handle, s1.handle);
  // Each snapshot, and the .snap directory, is a file system of its own for
  // the client (its objects keep the live inode numbers).
  ASSERT_OK_AND_ASSIGN(dir_attrs, backend_->GetAttr(kRoot, dir_));
  EXPECT_EQ(live_f.attributes.fsid, dir_attrs.fsid);
  EXPECT_NE(snapdir.attributes.fsid, dir_attrs.fsid);
  EXPECT_NE(s1.attributes.fsid, dir_attrs.fsid);
  EXPECT_NE(s1.attributes.fsid, snapdir.attributes.fsid);
  EXPECT_EQ(old_f.attributes.fsid, s1.attributes.fsid);
  EXPECT_EQ(old_g.attributes.fsid, s1.attributes.fsid);
  EXPECT_EQ(old_f.attributes.fileid, live_f.attributes.fileid);
  ASSERT_OK_AND_ASSIGN(up_s1, backend_->Lookup(kRoot, s1.handle, "..", nullptr));
  EXPECT_EQ(up_s1.handle, snapdir.handle);
  ASSERT_OK_AND_ASSIGN(up_snapdir, backend_->Lookup(kRoot, snapdir.handle, "..", nullptr));
  EXPECT_EQ(up_snapdir.handle, dir_);

  // Read-only: every change is refused with EROFS.
  const uint8_t byte = 'x';
  EXPECT_EQ(
      ErrnoOf(
          backend_->Write(kRoot, old_f.handle, 0, {&byte, 1}, StableHow::kFileSync, &wcc).status()),
      EROFS);
  SetAttributes mode;
  mode.mode = 0600;
  EXPECT_EQ(ErrnoOf(backend_->SetAttr(kRoot, old_f.handle, mode, std::nullopt, &wcc)), EROFS);
  EXPECT_EQ(
      ErrnoOf(backend_->Create(kRoot, s1.handle, "n", CreateMode::kGuarded, {}, {}, &wcc).status()),
      EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Mkdir(kRoot, snapdir.handle, "s2", {}, &wcc).status()), EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Mkdir(kRoot, s1.handle, "d", {}, &wcc).status()), EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Symlink(kRoot, s1.handle, "l", "f", {}, &wcc).status()), EROFS);
  EXPECT_EQ(
      ErrnoOf(backend_->Mknod(kRoot, s1.handle, "p", FileType::kFifo, 0, 0, {}, &wcc).status()),
      EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Remove(kRoot, s1.handle, "f", &wcc)), EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Rmdir(kRoot, s1.handle, "sub", &wcc)), EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Rmdir(kRoot, snapdir.handle, "s1", &wcc)), EROFS);
  Wcc to;
  EXPECT_EQ(ErrnoOf(backend_->Rename(kRoot, s1.handle, "f", s1.handle, "f2", &wcc, &to)), EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Rename(kRoot, s1.handle, "f", dir_, "f2", &wcc, &to)), EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Link(kRoot, live_f.handle, s1.handle, "h", nullptr, &wcc)), EROFS);
  EXPECT_EQ(ErrnoOf(backend_->Link(kRoot, old_f.handle, dir_, "h", nullptr, &wcc)), EROFS);
  ASSERT_OK_AND_ASSIGN(access, backend_->Access(kRoot, old_f.handle, 0x3f, nullptr));
  EXPECT_EQ(access.granted & (0x04u | 0x08u), 0u);  // no MODIFY, EXTEND
  EXPECT_EQ(ReadAll(*backend_, old_f.handle), "old");

  // A restarted head (a new session, nothing cached) and another head.
  backend_.reset();
  backend_ = Open();
  ASSERT_NE(backend_, nullptr);
  EXPECT_EQ(ReadAll(*backend_, old_g.handle), "in sub");
  EXPECT_EQ(ReadAll(*backend_, old_f.handle), "old");
  EXPECT_EQ(List(*backend_, s1.handle), (std::set<std::string>{".", "..", "f", "sub"}));
  EXPECT_EQ(List(*backend_, snapdir.handle), (std::set<std::string>{".", "..", "s1"}));
  const std::string other_state = state_.string() + "/other";
  std::filesystem::create_directories(other_state);
  std::filesystem::copy_file(StateDirPath() + "/handle.key", other_state + "/handle.key");
  {
    std::unique_ptr<CephfsBackend> other = Open(other_state);
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(ReadAll(*other, old_f.handle), "old");
    ASSERT_OK_AND_ASSIGN(attrs, other->GetAttr(kRoot, snapdir.handle));
    EXPECT_EQ(attrs.type, FileType::kDirectory);
    EXPECT_EQ(attrs.fsid, snapdir.attributes.fsid);
  }
  std::filesystem::remove_all(other_state);
  ASSERT_TRUE(native->RemoveSnapshot(dir_path_, "s1").ok());
  EXPECT_EQ(List(*backend_, snapdir.handle), (std::set<std::string>{".", ".."}));
}

// A CephFS directory quota on the exported directory, or on the nearest
// directory above the object within the export, is what FSSTAT reports: df
// on a client shows the quota, not the cluster.
TEST_F(CephfsBackendTest, FsStatReportsTheNearestDirectoryQuota) {
  ASSERT_OK_AND_ASSIGN(native, ::nfs3d::test_support::NativeClient::Mount(ClusterDir()));
  ASSERT_OK_AND_ASSIGN(cluster, backend_->StatFs(kRoot, dir_, nullptr));
  Wcc wcc;
  ASSERT_OK_AND_ASSIGN(sub, backend_->Mkdir(kRoot, dir_, "sub", {}, &wcc));
  ASSERT_OK_AND_ASSIGN(deeper, backend_->Mkdir(kRoot, sub.handle, "deeper", {}, &wcc));
  constexpr uint64_t kMaxBytes = 64 << 20, kMaxFiles = 1000;
  ASSERT_TRUE(native->SetXattr(dir_path_, "ceph.quota.max_bytes", std::to_string(kMaxBytes)).ok());
  ASSERT_TRUE(native->SetXattr(dir_path_, "ceph.quota.max_files", std::to_string(kMaxFiles)).ok());
  FileHandle f = CreateFile("data");
  std::vector<uint8_t> data(1 << 20, 'q');
  ASSERT_TRUE(backend_->Write(kRoot, f, 0, data, StableHow::kFileSync, &wcc).ok());

  // Recursive statistics reach the quota directory a moment later.
  FsStat st;
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK_AND_ASSIGN(now, backend_->StatFs(kRoot, deeper.handle, nullptr));
    st = now;
    if (st.total_bytes - st.free_bytes >= data.size()) break;
    usleep(100 * 1000);
  }
  EXPECT_EQ(st.total_bytes, kMaxBytes);
  EXPECT_EQ(st.total_bytes - st.free_bytes, data.size());
  EXPECT_EQ(st.avail_bytes, st.free_bytes);
  EXPECT_EQ(st.total_files, kMaxFiles);
  // data, sub, deeper (and the directory itself, as CephFS counts).
  EXPECT_GE(kMaxFiles - st.free_files, 3u);
  EXPECT_LE(kMaxFiles - st.free_files, 4u);
  EXPECT_EQ(st.avail_files, st.free_files);
  for (const FileHandle& fh : {dir_, sub.handle}) {
    ASSERT_OK_AND_ASSIGN(same, backend_->StatFs(kRoot, fh, nullptr));
    EXPECT_EQ(same.total_bytes, kMaxBytes);
    EXPECT_EQ(same.total_files, kMaxFiles);
  }
  // Each limit from the nearest directory that sets it.
  ASSERT_TRUE(native->SetXattr(dir_path_ + "/sub", "ceph.quota.max_bytes", "8388608").ok());
  ASSERT_OK_AND_ASSIGN(nearer, backend_->StatFs(kRoot, deeper.handle, nullptr));
  EXPECT_EQ(nearer.total_bytes, 8388608u);
  EXPECT_EQ(nearer.total_files, kMaxFiles);

  // A sub-directory export whose root has the quota.
  ASSERT_TRUE(backend_->AddExport(kExport + 1, dir_path_).ok());
  ASSERT_OK_AND_ASSIGN(sub_root, backend_->RootHandle(kExport + 1));
  ASSERT_OK_AND_ASSIGN(exported, backend_->StatFs(kRoot, sub_root, nullptr));
  EXPECT_EQ(exported.total_bytes, kMaxBytes);
  // A file's figures are its export root's (libcephfs knows no file's parent).
  ASSERT_OK_AND_ASSIGN(file_in_sub, backend_->Lookup(kRoot, sub_root, "data", nullptr));
  ASSERT_OK_AND_ASSIGN(of_file, backend_->StatFs(kRoot, file_in_sub.handle, nullptr));
  EXPECT_EQ(of_file.total_bytes, kMaxBytes);
  // Above the quota: the whole cluster.
  ASSERT_OK_AND_ASSIGN(root, backend_->RootHandle(kExport));
  ASSERT_OK_AND_ASSIGN(whole, backend_->StatFs(kRoot, root, nullptr));
  EXPECT_EQ(whole.total_bytes, cluster.total_bytes);
  // No quota left: the cluster's figures again.
  ASSERT_TRUE(native->SetXattr(dir_path_ + "/sub", "ceph.quota.max_bytes", "0").ok());
  ASSERT_TRUE(native->SetXattr(dir_path_, "ceph.quota.max_bytes", "0").ok());
  ASSERT_TRUE(native->SetXattr(dir_path_, "ceph.quota.max_files", "0").ok());
  ASSERT_OK_AND_ASSIGN(none, backend_->StatFs(kRoot, deeper.handle, nullptr));
  EXPECT_EQ(none.total_bytes, cluster.total_bytes);
  EXPECT_NE(none.total_files, kMaxFiles);
}

// READ and WRITE by the mode bits as knfsd applies them: owner override,
// group through supplementary groups, write-only files, read-if-execute.
TEST_F(CephfsBackendTest, ModeBitsDecideReadAndWrite) {
  const Cred owner = kUser;
  const Cred member{2003, 2003, {3000}};
  const Cred other{2004, 2004, {}};
  struct Case {
    uint32_t mode;
    Cred who;
    bool read, write;
  };
  const Case cases[] = {
      {0000, owner, true, true},    {0000, kRoot, true, true},    {0000, member, false, false},
      {0002, other, false, true},   {0002, member, false, false}, {0020, member, false, true},
      {0020, other, false, false},  {0040, member, true, false},  {0004, other, true, false},
      {0001, other, true, false},   {0010, member, true, false},  {0400, member, false, false},
      {0604, member, false, false}, {0060, member, true, true},   {0006, member, false, false},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << "mode " << std::oct << c.mode << " uid " << std::dec << c.who.uid);
    FileHandle fh = CreateFile("m" + std::to_string(i++), owner);
    SetAttributes set;
    set.mode = c.mode;
    set.gid = 3000;
    Wcc wcc;
    ASSERT_TRUE(backend_->SetAttr(kRoot, fh, set, std::nullopt, &wcc).ok());
    uint8_t buf[1] = {'m'};
    EXPECT_EQ(backend_->Read(c.who, fh, 0, 1, buf).ok(), c.read);
    EXPECT_EQ(backend_->Write(c.who, fh, 0, {buf, 1}, StableHow::kUnstable, &wcc).ok(), c.write);
  }
}

bool HasNamedUser(const Acl& acl, uint32_t uid) {
  for (const AclEntry& e : acl) {
    if (e.tag == kAclUser && e.id == uid) return true;
  }
  return false;
}

// POSIX ACLs through NFSACL, and READ/WRITE/ACCESS decided by them.
TEST_F(CephfsBackendTest, PosixAclsAreKeptAndChecked) {
  const Cred named{2000, 2000, {}};
  const Cred named_group_member{2002, 2002, {4000}};
  const Cred stranger{2001, 2001, {}};
  FileHandle fh = CreateFile("acl", kUser);
  SetAttributes mode;
  mode.mode = 0640;
  Wcc wcc;
  ASSERT_TRUE(backend_->SetAttr(kUser, fh, mode, std::nullopt, &wcc).ok());
  std::optional<Attributes> attrs;
  ASSERT_OK_AND_ASSIGN(plain, backend_->GetAcl(kRoot, fh, &attrs));
  EXPECT_EQ(plain.access, AclFromMode(0640));
  EXPECT_TRUE(plain.default_acl.empty());
  ASSERT_TRUE(attrs.has_value());

  const Acl acl = {{kAclUserObj, kAclUndefinedId, 6},  {kAclUser, 2000, 6},
                   {kAclGroupObj, kAclUndefinedId, 4}, {kAclGroup, 4000, 2},
                   {kAclMask, kAclUndefinedId, 6},     {kAclOther, kAclUndefinedId, 0}};
  EXPECT_EQ(ErrnoOf(backend_->SetAcl(named, fh, &acl, nullptr, &attrs)), EPERM);
  absl::Status set = backend_->SetAcl(kUser, fh, &acl, nullptr, &attrs);
  ASSERT_TRUE(set.ok()) << set;
  ASSERT_TRUE(attrs.has_value());
  EXPECT_EQ(attrs->mode, 0660u);  // the group class shows the mask
  ASSERT_OK_AND_ASSIGN(back, backend_->GetAcl(kRoot, fh, nullptr));
  EXPECT_EQ(back.access, acl);

  const uint8_t byte = 'a';
  uint8_t buf[4];
  ASSERT_TRUE(backend_->Write(named, fh, 0, {&byte, 1}, StableHow::kUnstable, &wcc).ok());
  ASSERT_TRUE(backend_->Read(named, fh, 0, 1, buf).ok());
  ASSERT_OK_AND_ASSIGN(named_access, backend_->Access(named, fh, 0x3f, nullptr));
  EXPECT_EQ(named_access.granted, 0x01u | 0x04u | 0x08u);
  // group:4000:-w-: write-only through the named group.
  ASSERT_TRUE(
      backend_->Write(named_group_member, fh, 0, {&byte, 1}, StableHow::kUnstable, &wcc).ok());
  EXPECT_EQ(ErrnoOf(backend_->Read(named_group_member, fh, 0, 1, buf).status()), EACCES);
  ASSERT_OK_AND_ASSIGN(group_access, backend_->Access(named_group_member, fh, 0x3f, nullptr));
  EXPECT_EQ(group_access.granted, 0x04u | 0x08u);
  EXPECT_EQ(ErrnoOf(backend_->Read(stranger, fh, 0, 1, buf).status()), EACCES);
  EXPECT_EQ(
      ErrnoOf(backend_->Write(stranger, fh, 0, {&byte, 1}, StableHow::kUnstable, &wcc).status()),
      EACCES);
  ASSERT_OK_AND_ASSIGN(stranger_access, backend_->Access(stranger, fh, 0x3f, nullptr));
  EXPECT_EQ(stranger_access.granted, 0u);

  // chmod narrows the mask: the named user loses write.
  mode.mode = 0640;
  ASSERT_TRUE(backend_->SetAttr(kUser, fh, mode, std::nullopt, &wcc).ok());
  EXPECT_EQ(ErrnoOf(backend_->Write(named, fh, 0, {&byte, 1}, StableHow::kUnstable, &wcc).status()),
            EACCES);
  ASSERT_TRUE(backend_->Read(named, fh, 0, 1, buf).ok());

  // Default ACLs: directories only, inherited by new objects.
  const Acl inherit = {{kAclUserObj, kAclUndefinedId, 7},
                       {kAclUser, 2000, 5},
                       {kAclGroupObj, kAclUndefinedId, 5},
                       {kAclMask, kAclUndefinedId, 5},
                       {kAclOther, kAclUndefinedId, 0}};
  EXPECT_EQ(ErrnoOf(backend_->SetAcl(kUser, fh, nullptr, &inherit, nullptr)), EACCES);
  SetAttributes dir_mode;
  dir_mode.mode = 0750;
  ASSERT_OK_AND_ASSIGN(d, backend_->Mkdir(kUser, dir_, "inherits", dir_mode, &wcc));
  ASSERT_TRUE(backend_->SetAcl(kUser, d.handle, &inherit, &inherit, nullptr).ok());
  ASSERT_OK_AND_ASSIGN(dir_acls, backend_->GetAcl(kRoot, d.handle, nullptr));
  EXPECT_EQ(dir_acls.default_acl, inherit);
  SetAttributes file_mode;
  file_mode.mode = 0644;
  ASSERT_OK_AND_ASSIGN(
      child, backend_->Create(kUser, d.handle, "child", CreateMode::kGuarded, file_mode, {}, &wcc));
  ASSERT_OK_AND_ASSIGN(child_acls, backend_->GetAcl(kRoot, child.handle, nullptr));
  EXPECT_TRUE(HasNamedUser(child_acls.access, 2000));
  ASSERT_TRUE(backend_->Read(named, child.handle, 0, 1, buf).ok());
  EXPECT_EQ(ErrnoOf(backend_->Read(stranger, child.handle, 0, 1, buf).status()), EACCES);
  // The named user may look into the directory, the stranger may not.
  EXPECT_TRUE(backend_->Lookup(named, d.handle, "child", nullptr).ok());
  EXPECT_EQ(ErrnoOf(backend_->Lookup(stranger, d.handle, "child", nullptr).status()), EACCES);

  // An empty ACL removes it: the mode bits alone again.
  const Acl none;
  ASSERT_TRUE(backend_->SetAcl(kUser, fh, &none, nullptr, nullptr).ok());
  ASSERT_OK_AND_ASSIGN(removed, backend_->GetAcl(kRoot, fh, &attrs));
  EXPECT_EQ(removed.access, AclFromMode(attrs->mode));
  EXPECT_EQ(ErrnoOf(backend_->Read(named, fh, 0, 1, buf).status()), EACCES);
}

// The backend-independent permission contract, as on the POSIX backend.
TEST_F(CephfsBackendTest, PermissionContractModeBitsMatrix) {
  ::nfs3d::test_support::CheckModeBitsMatrix(*backend_, dir_);
}

TEST_F(CephfsBackendTest, PermissionContractAclMatrix) {
  ::nfs3d::test_support::CheckAclMatrix(*backend_, dir_);
}

TEST_F(CephfsBackendTest, PermissionContractSetgidInheritance) {
  ::nfs3d::test_support::CheckSetgidInheritance(*backend_, dir_);
}

TEST_F(CephfsBackendTest, PermissionContractWriteClearsSetuid) {
  ::nfs3d::test_support::CheckWriteClearsSetuid(*backend_, dir_);
}

TEST_F(CephfsBackendTest, PermissionContractChownToOwnGroups) {
  ::nfs3d::test_support::CheckChownToOwnGroups(*backend_, dir_);
}

TEST_F(CephfsBackendTest, PermissionContractCreateOfExistingFile) {
  ::nfs3d::test_support::CheckCreateOfExistingFile(*backend_, dir_);
}

TEST_F(CephfsBackendTest, PermissionContractRenameMovesDirectoryLinks) {
  ::nfs3d::test_support::CheckRenameMovesDirectoryLinks(*backend_, dir_);
}

// The MDS evicts this head's session (as after a pause past the session
// timeout, or `session evict`): every call of that mount fails from then
// on. The head makes a new session by itself and serves the same handles.
TEST_F(CephfsBackendTest, EvictedSessionIsReplacedByANewOne) {
  FileHandle fh = CreateFile("kept");
  const std::string text = "before eviction";
  Wcc wcc;
  ASSERT_TRUE(backend_
                  ->Write(kRoot, fh, 0,
                          {reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                          StableHow::kFileSync, &wcc)
                  .ok());
  const uint64_t evicted = backend_->session_id();
  ASSERT_EQ(EvictSession(evicted), 0) << "ceph tell mds.a session evict id=" << evicted;
  // Served again within a few probes, from a new session.
  bool served = false;
  for (int i = 0; i < 300 && !served; ++i) {
    served =
        backend_
            ->Create(kRoot, dir_, "after" + std::to_string(i), CreateMode::kGuarded, {}, {}, &wcc)
            .ok();
    if (!served) usleep(100 * 1000);
  }
  ASSERT_TRUE(served);
  EXPECT_NE(backend_->session_id(), evicted);
  EXPECT_EQ(ReadAll(*backend_, fh), text);
  ASSERT_OK_AND_ASSIGN(again, backend_->Lookup(kRoot, dir_, "kept", nullptr));
  EXPECT_EQ(again.handle, fh);
}

// A SETATTR is in the MDS when it returns: libcephfs would keep a mode
// change under the capabilities it holds (Ax) and tell the MDS later, and
// this head's crash before then lost acknowledged chmods in the power-cut
// matrix (docs/durability.md). Eviction drops what the session had not
// sent, as the crash does.
TEST_F(CephfsBackendTest, SetAttrReachesTheMdsBeforeItReturns) {
  FileHandle fh = CreateFile("chmodded");
  SetAttributes mode;
  mode.mode = 0604;
  Wcc wcc;
  ASSERT_TRUE(backend_->SetAttr(kRoot, fh, mode, std::nullopt, &wcc).ok());
  const uint64_t evicted = backend_->session_id();
  ASSERT_EQ(EvictSession(evicted), 0) << "ceph tell mds.a session evict id=" << evicted;
  bool served = false;
  for (int i = 0; i < 300 && !served; ++i) {
    served = backend_->session_id() != evicted && backend_->GetAttr(kRoot, fh).ok();
    if (!served) usleep(100 * 1000);
  }
  ASSERT_TRUE(served);
  ASSERT_OK_AND_ASSIGN(a, backend_->GetAttr(kRoot, fh));
  EXPECT_EQ(a.mode & 07777, 0604u);
}

TEST(CephfsConnectTest, UnreachableClusterNamesClusterAndStep) {
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("nfs3d-cephfs-unreachable-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    // A monitor address nothing listens on (port 1 on loopback).
    std::FILE* f = std::fopen((dir + "/ceph.conf").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("[global]\nmon host = v2:127.0.0.1:1\nauth client required = none\n", f);
    std::fclose(f);
  }
  CephfsOptions options;
  options.state_dir = dir + "/state";
  options.conf_path = dir + "/ceph.conf";
  options.client_id = "nobody";
  options.timeout_seconds = 2;
  auto backend = CephfsBackend::Create(options);
  ASSERT_FALSE(backend.ok());
  const std::string message(backend.status().message());
  EXPECT_NE(message.find(options.conf_path), std::string::npos) << message;
  EXPECT_NE(message.find("client.nobody"), std::string::npos) << message;
  EXPECT_NE(message.find("failed"), std::string::npos) << message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nfs3d::vfs
