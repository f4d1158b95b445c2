#include "vfs/posix/posix_backend.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "gtest/gtest.h"

#include "tests/support/status_macros.h"
#include "vfs/file_handle_codec.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

constexpr uint32_t kExport = 1;
const Cred kRoot{0, 0, {}};
const Cred kUser{1000, 1000, {}};

class PosixBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    char tmpl[] = "/tmp/nfs3d_backend_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    chmod(tmp_.c_str(), 0755);
    export_path_ = tmp_ + "/export";
    ASSERT_EQ(mkdir(export_path_.c_str(), 0755), 0);
    NewBackend();
    ASSERT_OK_AND_ASSIGN(root, backend_->RootHandle(kExport));
    root_ = root;
  }
  void TearDown() override {
    backend_.reset();
    if (!tmp_.empty()) std::filesystem::remove_all(tmp_);
  }

  void NewBackend() {
    auto b = PosixBackend::Create(PosixBackendOptions{tmp_ + "/state"});
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = std::move(*b);
    ASSERT_TRUE(backend_->AddExport(kExport, export_path_).ok());
  }

  SetAttributes Mode(uint32_t mode) {
    SetAttributes a;
    a.mode = mode;
    return a;
  }

  FileHandle MakeFile(const FileHandle& dir, const std::string& name, uint32_t mode = 0644,
                      const Cred& cred = kRoot) {
    auto r = backend_->Create(cred, dir, name, CreateMode::kGuarded, Mode(mode), {}, nullptr);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->handle : FileHandle{};
  }

  FileHandle MakeDir(const FileHandle& dir, const std::string& name, uint32_t mode = 0755,
                     const Cred& cred = kRoot) {
    auto r = backend_->Mkdir(cred, dir, name, Mode(mode), nullptr);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->handle : FileHandle{};
  }

  absl::Status WriteString(const FileHandle& fh, uint64_t offset, const std::string& s,
                           const Cred& cred = kRoot, Wcc* wcc = nullptr) {
    auto r = backend_->Write(
        cred, fh, offset, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size()),
        StableHow::kUnstable, wcc);
    if (!r.ok()) return r.status();
    EXPECT_EQ(r->count, s.size());
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> ReadString(const FileHandle& fh, uint64_t offset, uint32_t count,
                                         const Cred& cred = kRoot, bool* eof = nullptr) {
    std::string buf(count, '\0');
    auto r = backend_->Read(cred, fh, offset, count, reinterpret_cast<uint8_t*>(buf.data()));
    if (!r.ok()) return r.status();
    buf.resize(r->count);
    if (eof) *eof = r->eof;
    return buf;
  }

  std::string tmp_, export_path_;
  std::unique_ptr<PosixBackend> backend_;
  FileHandle root_;
};

TEST_F(PosixBackendTest, RootHandleAndAttributes) {
  EXPECT_LE(root_.len, kMaxHandleSize);
  ASSERT_OK_AND_ASSIGN(attrs, backend_->GetAttr(kRoot, root_));
  struct stat st;
  ASSERT_EQ(stat(export_path_.c_str(), &st), 0);
  EXPECT_EQ(attrs.type, FileType::kDirectory);
  EXPECT_EQ(attrs.fileid, st.st_ino);
  EXPECT_EQ(attrs.mode, 0755u);
  EXPECT_GE(attrs.nlink, 2u);
  EXPECT_EQ(attrs.mtime.nseconds, static_cast<uint32_t>(st.st_mtim.tv_nsec));
  EXPECT_EQ(*backend_->ExportOf(root_), kExport);
  EXPECT_EQ(ErrnoOf(backend_->RootHandle(99).status()), ENOENT);
  EXPECT_FALSE(backend_->AddExport(kExport, export_path_).ok());
}

TEST_F(PosixBackendTest, CreateLookupGetAttr) {
  Wcc wcc;
  ASSERT_OK_AND_ASSIGN(
      created, backend_->Create(kRoot, root_, "f", CreateMode::kUnchecked, Mode(0640), {}, &wcc));
  ASSERT_TRUE(created.attributes.has_value());
  EXPECT_EQ(created.attributes->mode, 0640u);
  EXPECT_EQ(created.attributes->type, FileType::kRegular);
  ASSERT_TRUE(wcc.before && wcc.after);
  std::optional<Attributes> dir_attrs;
  ASSERT_OK_AND_ASSIGN(found, backend_->Lookup(kRoot, root_, "f", &dir_attrs));
  EXPECT_TRUE(found.handle == created.handle);
  EXPECT_EQ(found.attributes.fileid, created.attributes->fileid);
  ASSERT_TRUE(dir_attrs.has_value());
  EXPECT_EQ(dir_attrs->type, FileType::kDirectory);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, root_, "missing", nullptr).status()), ENOENT);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, found.handle, "x", nullptr).status()), ENOTDIR);
}

// RFC 1813's CREATE, REMOVE, SETATTR, ... are durable when answered:
// each change is committed (CommitMetadata), with an fsync wherever one
// means something. tmpfs's fsync does nothing, so none is made there.
TEST_F(PosixBackendTest, MetadataChangesAreSyncedExceptOnTmpfs) {
  struct statfs sfs;
  ASSERT_EQ(statfs(export_path_.c_str(), &sfs), 0);
  const bool test_dir_in_memory = sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC;
  SyncStats before = backend_->sync_stats();
  MakeFile(root_, "on_disk");
  SyncStats after = backend_->sync_stats();
  const uint64_t commits = after.metadata_commits - before.metadata_commits;
  EXPECT_EQ(commits, 2u);  // the file and its directory
  EXPECT_EQ(after.metadata_syncs - before.metadata_syncs, test_dir_in_memory ? 0 : commits);

  const std::string mem = tmp_ + "/mem";
  ASSERT_EQ(mkdir(mem.c_str(), 0755), 0);
  ASSERT_EQ(mount("tmpfs", mem.c_str(), "tmpfs", 0, "size=1m"), 0) << strerror(errno);
  // Unmounted however the test ends, so that TearDown can remove the tree.
  absl::Cleanup unmount = [this, &mem] {
    backend_.reset();
    umount2(mem.c_str(), MNT_DETACH);
  };
  constexpr uint32_t kTmpfsExport = 2;
  ASSERT_TRUE(backend_->AddExport(kTmpfsExport, mem).ok());
  ASSERT_OK_AND_ASSIGN(mem_root, backend_->RootHandle(kTmpfsExport));
  before = backend_->sync_stats();
  FileHandle file = MakeFile(mem_root, "in_memory");
  EXPECT_TRUE(backend_->SetAttr(kRoot, file, Mode(0600), std::nullopt, nullptr).ok());
  EXPECT_TRUE(backend_->Remove(kRoot, mem_root, "in_memory", nullptr).ok());
  after = backend_->sync_stats();
  EXPECT_GE(after.metadata_commits - before.metadata_commits, 4u);
  EXPECT_EQ(after.metadata_syncs, before.metadata_syncs);
}

// A name looked up again (the kernel client's revalidation) answers from a
// fresh stat of the name, and a name now naming another object gets that
// object's handle, never the cached one's.
TEST_F(PosixBackendTest, LookupAgainSeesChangesAndReplacements) {
  std::optional<Attributes> dir_attrs;
  FileHandle first = MakeFile(root_, "f", 0640);
  ASSERT_OK_AND_ASSIGN(a, backend_->Lookup(kRoot, root_, "f", &dir_attrs));
  EXPECT_TRUE(a.handle == first);
  ASSERT_EQ(chmod((export_path_ + "/f").c_str(), 0600), 0);  // a local change
  ASSERT_OK_AND_ASSIGN(b, backend_->Lookup(kRoot, root_, "f", &dir_attrs));
  EXPECT_TRUE(b.handle == first);
  EXPECT_EQ(b.attributes.mode, 0600u);
  // Replaced locally by another file (and another kind of object).
  ASSERT_EQ(unlink((export_path_ + "/f").c_str()), 0);
  ASSERT_EQ(mkdir((export_path_ + "/f").c_str(), 0755), 0);
  ASSERT_OK_AND_ASSIGN(c, backend_->Lookup(kRoot, root_, "f", &dir_attrs));
  EXPECT_FALSE(c.handle == first);
  EXPECT_EQ(c.attributes.type, FileType::kDirectory);
  ASSERT_OK_AND_ASSIGN(d, backend_->Lookup(kRoot, root_, "f", &dir_attrs));
  EXPECT_TRUE(d.handle == c.handle);
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, first).status()), ESTALE);
}

TEST_F(PosixBackendTest, OpenForLockingGivesANewDescriptionOfARegularFile) {
  const FileHandle f = MakeFile(root_, "lockme");
  ASSERT_OK_AND_ASSIGN(fd1, backend_->OpenForLocking(f));
  ASSERT_OK_AND_ASSIGN(fd2, backend_->OpenForLocking(f));
  EXPECT_EQ(fcntl(fd1, F_GETFL) & O_ACCMODE, O_RDWR);
  // Two open file descriptions: their OFD locks conflict.
  struct flock fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  ASSERT_EQ(fcntl(fd1, F_OFD_SETLK, &fl), 0);
  EXPECT_NE(fcntl(fd2, F_OFD_SETLK, &fl), 0);
  close(fd1);
  close(fd2);
  EXPECT_EQ(ErrnoOf(backend_->OpenForLocking(root_).status()), EINVAL);  // a directory
}

TEST_F(PosixBackendTest, HandlesSurviveRestart) {
  FileHandle dir = MakeDir(root_, "d");
  FileHandle file = MakeFile(dir, "f");
  ASSERT_TRUE(WriteString(file, 0, "persist").ok());
  ASSERT_OK_AND_ASSIGN(before, backend_->GetAttr(kRoot, file));
  NewBackend();  // same state dir: same secret
  ASSERT_OK_AND_ASSIGN(root_again, backend_->RootHandle(kExport));
  EXPECT_TRUE(root_again == root_);
  ASSERT_OK_AND_ASSIGN(after, backend_->GetAttr(kRoot, file));
  EXPECT_EQ(after.fileid, before.fileid);
  EXPECT_EQ(*ReadString(file, 0, 100), "persist");
  ASSERT_OK_AND_ASSIGN(found, backend_->Lookup(kRoot, dir, "f", nullptr));
  EXPECT_TRUE(found.handle == file);
}

TEST_F(PosixBackendTest, TamperedHandlesAreBadHandles) {
  FileHandle file = MakeFile(root_, "f");
  for (size_t i = 0; i < file.len; ++i) {
    FileHandle bad = file;
    bad.data[i] ^= 0x01;
    EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, bad).status()), kErrBadHandle) << i;
    bad = file;
    bad.data[i] ^= 0x80;
    EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, bad).status()), kErrBadHandle) << i;
  }
  FileHandle shorter = file;
  shorter.len--;
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, shorter).status()), kErrBadHandle);
  EXPECT_EQ(ErrnoOf(backend_->ExportOf(FileHandle{}).status()), kErrBadHandle);
}

TEST_F(PosixBackendTest, HandleOfOneExportIsRejectedByAnother) {
  std::string other = tmp_ + "/other";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  ASSERT_TRUE(backend_->AddExport(2, other).ok());
  FileHandle dir = MakeDir(root_, "d");
  FileHandle file = MakeFile(root_, "f");
  // Relabelling the export id without the secret: MAC mismatch.
  FileHandle relabelled = dir;
  relabelled.data[4] = 2;
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, relabelled).status()), kErrBadHandle);
  // Even a correctly MACed handle naming export 2 for a directory of export 1
  // is refused: the directory is not below export 2's root.
  ASSERT_OK_AND_ASSIGN(secret, backend_->state_dir().LoadOrCreateSecret());
  HandleCodec codec(secret);
  ASSERT_OK_AND_ASSIGN(decoded, codec.Decode(dir));
  ASSERT_OK_AND_ASSIGN(forged, codec.Encode(2, decoded.handle_type, decoded.kernel_bytes()));
  NewBackend();  // cold caches
  ASSERT_TRUE(backend_->AddExport(2, other).ok());
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, forged).status()), ESTALE);
  // An unknown export id is stale.
  ASSERT_OK_AND_ASSIGN(unknown, codec.Encode(77, decoded.handle_type, decoded.kernel_bytes()));
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, unknown).status()), ESTALE);
  // Linking across exports is refused.
  ASSERT_OK_AND_ASSIGN(other_root, backend_->RootHandle(2));
  EXPECT_EQ(ErrnoOf(backend_->Link(kRoot, file, other_root, "l", nullptr, nullptr)), EXDEV);
}

TEST_F(PosixBackendTest, DotAndDotDot) {
  ASSERT_OK_AND_ASSIGN(up, backend_->Lookup(kRoot, root_, "..", nullptr));
  EXPECT_TRUE(up.handle == root_);
  ASSERT_OK_AND_ASSIGN(self, backend_->Lookup(kRoot, root_, ".", nullptr));
  EXPECT_TRUE(self.handle == root_);
  FileHandle sub = MakeDir(root_, "sub");
  FileHandle subsub = MakeDir(sub, "subsub");
  ASSERT_OK_AND_ASSIGN(parent, backend_->Lookup(kRoot, sub, "..", nullptr));
  EXPECT_TRUE(parent.handle == root_);
  ASSERT_OK_AND_ASSIGN(parent2, backend_->Lookup(kRoot, subsub, "..", nullptr));
  EXPECT_TRUE(parent2.handle == sub);
}

TEST_F(PosixBackendTest, NameChecks) {
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, root_, "", nullptr).status()), EACCES);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, root_, "a/b", nullptr).status()), EACCES);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, root_, std::string("a\0b", 3), nullptr).status()),
            EACCES);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, root_, std::string(256, 'x'), nullptr).status()),
            ENAMETOOLONG);
  auto create = [&](const std::string& name) {
    return backend_->Create(kRoot, root_, name, CreateMode::kUnchecked, {}, {}, nullptr).status();
  };
  EXPECT_EQ(ErrnoOf(create(".")), EEXIST);
  EXPECT_EQ(ErrnoOf(create("..")), EEXIST);
  EXPECT_EQ(ErrnoOf(backend_->Mkdir(kRoot, root_, "..", {}, nullptr).status()), EEXIST);
  EXPECT_EQ(ErrnoOf(backend_->Remove(kRoot, root_, ".", nullptr)), EACCES);
  EXPECT_EQ(ErrnoOf(backend_->Rmdir(kRoot, root_, ".", nullptr)), EINVAL);
  EXPECT_EQ(ErrnoOf(backend_->Rmdir(kRoot, root_, "..", nullptr)), ENOTEMPTY);
  MakeFile(root_, "f");
  EXPECT_EQ(ErrnoOf(backend_->Rename(kRoot, root_, "f", root_, "..", nullptr, nullptr)), EINVAL);
  ASSERT_TRUE(create(std::string(255, 'y')).ok());
}

TEST_F(PosixBackendTest, CreateModes) {
  FileHandle f = MakeFile(root_, "f");
  ASSERT_TRUE(WriteString(f, 0, "hello").ok());
  EXPECT_EQ(
      ErrnoOf(backend_->Create(kRoot, root_, "f", CreateMode::kGuarded, {}, {}, nullptr).status()),
      EEXIST);
  // UNCHECKED on an existing file succeeds and applies the size.
  SetAttributes truncate;
  truncate.size = 0;
  ASSERT_OK_AND_ASSIGN(
      again, backend_->Create(kRoot, root_, "f", CreateMode::kUnchecked, truncate, {}, nullptr));
  EXPECT_TRUE(again.handle == f);
  EXPECT_EQ(again.attributes->size, 0u);
  MakeDir(root_, "d");
  EXPECT_EQ(
      ErrnoOf(
          backend_->Create(kRoot, root_, "d", CreateMode::kUnchecked, {}, {}, nullptr).status()),
      EEXIST);
}

TEST_F(PosixBackendTest, ExclusiveCreateRetransmitInUserDir) {
  FileHandle dir = MakeDir(root_, "u", 0777);
  Verifier v1 = {1, 2, 3, 4, 0xf5, 6, 7, 0xf8};
  Verifier v2 = {1, 2, 3, 4, 0xf5, 6, 7, 0xf9};
  ASSERT_OK_AND_ASSIGN(first,
                       backend_->Create(kUser, dir, "x", CreateMode::kExclusive, {}, v1, nullptr));
  EXPECT_EQ(first.attributes->uid, 1000u);
  ASSERT_OK_AND_ASSIGN(retry,
                       backend_->Create(kUser, dir, "x", CreateMode::kExclusive, {}, v1, nullptr));
  EXPECT_TRUE(retry.handle == first.handle);
  EXPECT_EQ(
      ErrnoOf(backend_->Create(kUser, dir, "x", CreateMode::kExclusive, {}, v2, nullptr).status()),
      EEXIST);
  // The times carry the verifier too (knfsd style).
  EXPECT_EQ(first.attributes->atime.seconds, 0x01020304u);
  EXPECT_EQ(first.attributes->mtime.seconds, 0xf50607f8u);
  // After the client's SETATTR of the times the xattr still matches.
  SetAttributes times;
  times.atime_how = SetTime::kServerTime;
  times.mtime_how = SetTime::kServerTime;
  ASSERT_TRUE(backend_->SetAttr(kUser, first.handle, times, std::nullopt, nullptr).ok());
  EXPECT_TRUE(backend_->Create(kUser, dir, "x", CreateMode::kExclusive, {}, v1, nullptr).ok());
}

TEST_F(PosixBackendTest, WriteReadAndWcc) {
  FileHandle f = MakeFile(root_, "f");
  Wcc wcc;
  ASSERT_TRUE(WriteString(f, 0, "0123456789", kRoot, &wcc).ok());
  ASSERT_TRUE(wcc.before && wcc.after);
  EXPECT_EQ(wcc.before->size, 0u);
  EXPECT_EQ(wcc.after->size, 10u);
  Wcc wcc2;
  ASSERT_TRUE(WriteString(f, 10, std::string(20, 'z'), kRoot, &wcc2).ok());
  EXPECT_EQ(wcc2.before->size, 10u);
  EXPECT_EQ(wcc2.after->size, 30u);
  EXPECT_EQ(wcc2.before->mtime.seconds, wcc.after->mtime.seconds);
  EXPECT_EQ(wcc2.before->mtime.nseconds, wcc.after->mtime.nseconds);
  bool eof = false;
  EXPECT_EQ(*ReadString(f, 0, 10, kRoot, &eof), "0123456789");
  EXPECT_FALSE(eof);
  EXPECT_EQ(*ReadString(f, 25, 100, kRoot, &eof), "zzzzz");
  EXPECT_TRUE(eof);
  EXPECT_EQ(*ReadString(f, 100, 10, kRoot, &eof), "");
  EXPECT_TRUE(eof);
  EXPECT_EQ(ErrnoOf(ReadString(root_, 0, 10).status()), EISDIR);
  EXPECT_EQ(ErrnoOf(WriteString(root_, 0, "x")), EISDIR);
}

// ReadSlice answers like Read, without reading: the count is clipped at end
// of file and the descriptor reads the same bytes.
TEST_F(PosixBackendTest, ReadSliceMatchesRead) {
  FileHandle f = MakeFile(root_, "f");
  ASSERT_TRUE(WriteString(f, 0, "0123456789").ok());
  ASSERT_OK_AND_ASSIGN(mid, backend_->ReadSlice(kRoot, f, 2, 4));
  EXPECT_EQ(mid.count, 4u);
  EXPECT_FALSE(mid.eof);
  ASSERT_TRUE(mid.attributes);
  EXPECT_EQ(mid.attributes->size, 10u);
  ASSERT_NE(mid.owner, nullptr);
  char buf[4];
  ASSERT_EQ(pread(mid.fd, buf, sizeof(buf), 2), 4);
  EXPECT_EQ(std::string(buf, 4), "2345");
  ASSERT_OK_AND_ASSIGN(tail, backend_->ReadSlice(kRoot, f, 7, 100));
  EXPECT_EQ(tail.count, 3u);
  EXPECT_TRUE(tail.eof);
  ASSERT_OK_AND_ASSIGN(past, backend_->ReadSlice(kRoot, f, 100, 10));
  EXPECT_EQ(past.count, 0u);
  EXPECT_TRUE(past.eof);
  EXPECT_EQ(ErrnoOf(backend_->ReadSlice(kRoot, root_, 0, 10).status()), EISDIR);
  FileHandle secret = MakeFile(root_, "secret", 0600);
  EXPECT_EQ(ErrnoOf(backend_->ReadSlice(kUser, secret, 0, 10).status()), EACCES);
}

// WRITE data partly in a pipe: head from memory, the piped bytes by splice,
// tail from memory; the same results as Write, and the pipe emptied.
TEST_F(PosixBackendTest, WriteSplicedTakesTheMiddleFromAPipe) {
  FileHandle f = MakeFile(root_, "spliced");
  std::string data(300000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 23);
  std::string memory = data;
  const size_t begin = 1000, size = 250000;
  std::fill(memory.begin() + begin, memory.begin() + begin + size, '#');  // not in memory
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  ASSERT_EQ(write(fds[1], data.data() + begin, size), static_cast<ssize_t>(size));
  PipedBytes piped;
  piped.offset = begin;
  piped.size = size;
  piped.pipe_fd = fds[0];
  piped.memory = reinterpret_cast<uint8_t*>(memory.data()) + begin;
  Wcc wcc;
  auto span = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(memory.data()), memory.size());
  ASSERT_OK_AND_ASSIGN(
      w, backend_->WriteSpliced(kRoot, f, 4096, span, piped, StableHow::kFileSync, &wcc));
  EXPECT_EQ(w.count, data.size());
  EXPECT_EQ(w.committed, StableHow::kFileSync);
  EXPECT_EQ(w.verifier, backend_->WriteVerifier());
  ASSERT_TRUE(wcc.before.has_value());
  EXPECT_EQ(wcc.before->size, 0u);
  ASSERT_TRUE(wcc.after.has_value());
  EXPECT_EQ(wcc.after->size, 4096 + data.size());
  ASSERT_OK_AND_ASSIGN(back, ReadString(f, 4096, static_cast<uint32_t>(data.size())));
  EXPECT_TRUE(back == data);
  int left = -1;
  ASSERT_EQ(ioctl(fds[0], FIONREAD, &left), 0);
  EXPECT_EQ(left, 0);
  // Refused before any byte moved: the pipe keeps its bytes for the caller.
  ASSERT_EQ(write(fds[1], data.data(), 5000), 5000);
  piped.offset = 0;
  piped.size = 5000;
  EXPECT_EQ(ErrnoOf(backend_
                        ->WriteSpliced(kRoot, root_, 0, span.first(5000), piped,
                                       StableHow::kUnstable, nullptr)
                        .status()),
            EISDIR);
  ASSERT_EQ(ioctl(fds[0], FIONREAD, &left), 0);
  EXPECT_EQ(left, 5000);
  close(fds[0]);
  close(fds[1]);
}

// Backends without descriptors (CephFS): the default reads the piped bytes
// into memory and calls Write.
TEST_F(PosixBackendTest, DefaultWriteSplicedFillsMemory) {
  FileHandle f = MakeFile(root_, "filled");
  std::string data(100000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('A' + i % 19);
  std::string memory = data;
  std::fill(memory.begin() + 600, memory.begin() + 90000, '#');
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  ASSERT_EQ(write(fds[1], data.data() + 600, 89400), 89400);
  PipedBytes piped{600, 89400, fds[0], reinterpret_cast<uint8_t*>(memory.data()) + 600};
  auto span = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(memory.data()), memory.size());
  ASSERT_OK_AND_ASSIGN(
      w, backend_->Backend::WriteSpliced(kRoot, f, 0, span, piped, StableHow::kUnstable, nullptr));
  EXPECT_EQ(w.count, data.size());
  EXPECT_TRUE(memory == data);
  ASSERT_OK_AND_ASSIGN(back, ReadString(f, 0, static_cast<uint32_t>(data.size())));
  EXPECT_TRUE(back == data);
  close(fds[0]);
  close(fds[1]);
}

TEST_F(PosixBackendTest, StableWritesAndCommit) {
  FileHandle f = MakeFile(root_, "f");
  std::string data(8192, 'd');
  auto span = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  ASSERT_OK_AND_ASSIGN(unstable, backend_->Write(kRoot, f, 0, span, StableHow::kUnstable, nullptr));
  EXPECT_EQ(unstable.committed, StableHow::kUnstable);
  EXPECT_EQ(unstable.verifier, backend_->WriteVerifier());
  ASSERT_OK_AND_ASSIGN(synced, backend_->Write(kRoot, f, 0, span, StableHow::kFileSync, nullptr));
  EXPECT_EQ(synced.committed, StableHow::kFileSync);
  ASSERT_OK_AND_ASSIGN(dsync, backend_->Write(kRoot, f, 0, span, StableHow::kDataSync, nullptr));
  EXPECT_EQ(dsync.committed, StableHow::kFileSync);  // a full fsync was done
  Wcc wcc;
  ASSERT_OK_AND_ASSIGN(verf, backend_->Commit(kRoot, f, 0, 0, &wcc));
  EXPECT_EQ(verf, backend_->WriteVerifier());
  EXPECT_TRUE(wcc.after.has_value());
  EXPECT_EQ(ErrnoOf(backend_->Commit(kRoot, root_, 0, 0, nullptr).status()), EISDIR);
  // Concurrent stable writes and commits share syncs and all succeed.
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto w =
            backend_->Write(kRoot, f, 8192 * (t * 10 + i), span, StableHow::kFileSync, nullptr);
        if (!w.ok() || w->count != span.size()) ++failures;
        if (!backend_->Commit(kRoot, f, 0, 0, nullptr).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(size_attrs, backend_->GetAttr(kRoot, f));
  EXPECT_EQ(size_attrs.size, 8192u * 40);
  // A new server instance has a new verifier.
  Verifier old = backend_->WriteVerifier();
  NewBackend();
  EXPECT_NE(backend_->WriteVerifier(), old);
}

TEST_F(PosixBackendTest, PermissionsAsUnprivilegedUser) {
  FileHandle secret = MakeFile(root_, "secret", 0600);
  ASSERT_TRUE(WriteString(secret, 0, "top").ok());
  EXPECT_EQ(ErrnoOf(ReadString(secret, 0, 10, kUser).status()), EACCES);
  EXPECT_EQ(ErrnoOf(WriteString(secret, 0, "x", kUser)), EACCES);
  ASSERT_OK_AND_ASSIGN(access, backend_->Access(kUser, secret, 0x3f, nullptr));
  EXPECT_EQ(access.granted, 0u);
  FileHandle pub = MakeFile(root_, "pub", 0644);
  ASSERT_OK_AND_ASSIGN(access2, backend_->Access(kUser, pub, 0x3f, nullptr));
  EXPECT_EQ(access2.granted, 0x01u);  // READ only
  ASSERT_OK_AND_ASSIGN(access_root, backend_->Access(kRoot, pub, 0x3f, nullptr));
  EXPECT_EQ(access_root.granted, 0x01u | 0x04u | 0x08u);  // no EXECUTE: no x bit
  // Directory bits: root-owned 0755 gives READ|LOOKUP to others.
  ASSERT_OK_AND_ASSIGN(dir_access, backend_->Access(kUser, root_, 0x3f, nullptr));
  EXPECT_EQ(dir_access.granted, 0x01u | 0x02u);
  ASSERT_OK_AND_ASSIGN(dir_root, backend_->Access(kRoot, root_, 0x3f, nullptr));
  EXPECT_EQ(dir_root.granted, 0x01u | 0x02u | 0x04u | 0x08u | 0x10u);
  // Creating in a root-owned 0755 directory is denied.
  EXPECT_EQ(
      ErrnoOf(
          backend_->Create(kUser, root_, "mine", CreateMode::kGuarded, {}, {}, nullptr).status()),
      EACCES);
  EXPECT_EQ(ErrnoOf(backend_->Mkdir(kUser, root_, "mine", {}, nullptr).status()), EACCES);
  EXPECT_EQ(ErrnoOf(backend_->Remove(kUser, root_, "pub", nullptr)), EACCES);
  // A non-owner can't chmod.
  EXPECT_EQ(ErrnoOf(backend_->SetAttr(kUser, pub, Mode(0777), std::nullopt, nullptr)), EPERM);
  // A private directory can't be listed or searched.
  FileHandle priv = MakeDir(root_, "priv", 0700);
  MakeFile(priv, "inside");
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kUser, priv, "inside", nullptr).status()), EACCES);
  bool eof;
  EXPECT_EQ(ErrnoOf(backend_->ReadDir(
                kUser, priv, 0, nullptr, [](const DirEntry&) { return true; }, &eof, nullptr)),
            EACCES);
}

TEST_F(PosixBackendTest, OwnerOverrideAndCachedDescriptorsDontLeak) {
  FileHandle dir = MakeDir(root_, "u", 0777);
  // The owner may write a file it created read-only (knfsd semantics).
  FileHandle ro = MakeFile(dir, "ro", 0444, kUser);
  EXPECT_TRUE(WriteString(ro, 0, "mine", kUser).ok());
  EXPECT_EQ(*ReadString(ro, 0, 10, kUser), "mine");
  // The owner reads a file whose mode grants nobody anything (the owner is
  // tested before any access check, as knfsd does); once the file belongs to
  // someone else, the mode bits decide again.
  FileHandle none = MakeFile(dir, "none", 0644, kUser);
  ASSERT_TRUE(WriteString(none, 0, "own", kUser).ok());
  ASSERT_TRUE(backend_->SetAttr(kUser, none, Mode(0000), std::nullopt, nullptr).ok());
  EXPECT_EQ(*ReadString(none, 0, 3, kUser), "own");
  SetAttributes to_root;
  to_root.uid = 0;
  ASSERT_TRUE(backend_->SetAttr(kRoot, none, to_root, std::nullopt, nullptr).ok());
  EXPECT_EQ(ErrnoOf(ReadString(none, 0, 3, kUser).status()), EACCES);
  // Root writes a 0600 root file (caching a read-write descriptor); the user
  // must still be refused.
  FileHandle secret = MakeFile(dir, "secret", 0600);
  ASSERT_TRUE(WriteString(secret, 0, "top").ok());
  EXPECT_EQ(ErrnoOf(WriteString(secret, 0, "x", kUser)), EACCES);
  EXPECT_EQ(ErrnoOf(ReadString(secret, 0, 3, kUser).status()), EACCES);
  // Permission changes take effect at once despite the cached descriptor.
  ASSERT_TRUE(backend_->SetAttr(kRoot, secret, Mode(0666), std::nullopt, nullptr).ok());
  EXPECT_EQ(*ReadString(secret, 0, 3, kUser), "top");
  ASSERT_TRUE(backend_->SetAttr(kRoot, secret, Mode(0600), std::nullopt, nullptr).ok());
  EXPECT_EQ(ErrnoOf(ReadString(secret, 0, 3, kUser).status()), EACCES);
  // Execute-only files can be read (READ-if-EXEC).
  FileHandle exe = MakeFile(dir, "exe", 0711);
  ASSERT_TRUE(WriteString(exe, 0, "bin").ok());
  EXPECT_EQ(*ReadString(exe, 0, 3, kUser), "bin");
}

TEST_F(PosixBackendTest, SetAttr) {
  FileHandle f = MakeFile(root_, "f");
  ASSERT_TRUE(WriteString(f, 0, "0123456789").ok());
  ASSERT_OK_AND_ASSIGN(attrs, backend_->GetAttr(kRoot, f));
  SetAttributes change;
  change.size = 4;
  change.mode = 04755;
  change.uid = 1000;
  change.gid = 1000;
  change.atime_how = SetTime::kClientTime;
  change.atime = Time{1000000, 5};
  change.mtime_how = SetTime::kClientTime;
  change.mtime = Time{2000000, 7};
  Wcc wcc;
  ASSERT_TRUE(backend_->SetAttr(kRoot, f, change, attrs.ctime, &wcc).ok());
  ASSERT_TRUE(wcc.before && wcc.after);
  EXPECT_EQ(wcc.before->size, 10u);
  EXPECT_EQ(wcc.after->size, 4u);
  EXPECT_EQ(wcc.after->mode, 04755u);  // explicit mode wins over chown's suid clearing
  EXPECT_EQ(wcc.after->uid, 1000u);
  EXPECT_EQ(wcc.after->gid, 1000u);
  EXPECT_EQ(wcc.after->atime.seconds, 1000000u);
  EXPECT_EQ(wcc.after->atime.nseconds, 5u);
  EXPECT_EQ(wcc.after->mtime.seconds, 2000000u);
  // Stale guard.
  Wcc wcc2;
  EXPECT_EQ(ErrnoOf(backend_->SetAttr(kRoot, f, Mode(0600), attrs.ctime, &wcc2)), kErrNotSync);
  EXPECT_TRUE(wcc2.after.has_value());
  EXPECT_EQ(wcc2.after->mode, 04755u);
  // Size on a directory.
  SetAttributes size;
  size.size = 0;
  EXPECT_EQ(ErrnoOf(backend_->SetAttr(kRoot, root_, size, std::nullopt, nullptr)), EISDIR);
  // The owner (now uid 1000) may set server time and truncate.
  SetAttributes now;
  now.mtime_how = SetTime::kServerTime;
  now.size = 0;
  EXPECT_TRUE(backend_->SetAttr(kUser, f, now, std::nullopt, nullptr).ok());
  // Others may not set times to client values.
  FileHandle g = MakeFile(root_, "g", 0666);
  SetAttributes client_time;
  client_time.mtime_how = SetTime::kClientTime;
  client_time.mtime = Time{5, 0};
  EXPECT_EQ(ErrnoOf(backend_->SetAttr(kUser, g, client_time, std::nullopt, nullptr)), EPERM);
}

TEST_F(PosixBackendTest, RemoveRmdirRenameLink) {
  FileHandle d = MakeDir(root_, "d");
  FileHandle f = MakeFile(d, "f");
  EXPECT_EQ(ErrnoOf(backend_->Rmdir(kRoot, root_, "d", nullptr)), ENOTEMPTY);
  EXPECT_EQ(ErrnoOf(backend_->Rmdir(kRoot, d, "f", nullptr)), ENOTDIR);
  EXPECT_EQ(ErrnoOf(backend_->Remove(kRoot, root_, "d", nullptr)), EISDIR);
  EXPECT_EQ(ErrnoOf(backend_->Remove(kRoot, root_, "nope", nullptr)), ENOENT);

  // Link.
  std::optional<Attributes> fattrs;
  Wcc link_wcc;
  ASSERT_TRUE(backend_->Link(kRoot, f, root_, "hard", &fattrs, &link_wcc).ok());
  ASSERT_TRUE(fattrs.has_value());
  EXPECT_EQ(fattrs->nlink, 2u);
  EXPECT_TRUE(link_wcc.before && link_wcc.after);
  EXPECT_EQ(ErrnoOf(backend_->Link(kRoot, f, root_, "hard", nullptr, nullptr)), EEXIST);
  EXPECT_EQ(ErrnoOf(backend_->Link(kRoot, d, root_, "dirlink", nullptr, nullptr)), EPERM);

  // Rename across directories with wcc on both.
  Wcc from, to;
  ASSERT_TRUE(backend_->Rename(kRoot, d, "f", root_, "moved", &from, &to).ok());
  ASSERT_TRUE(from.before && from.after && to.before && to.after);
  ASSERT_OK_AND_ASSIGN(moved, backend_->Lookup(kRoot, root_, "moved", nullptr));
  EXPECT_TRUE(moved.handle == f);
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, d, "f", nullptr).status()), ENOENT);
  EXPECT_EQ(ErrnoOf(backend_->Rename(kRoot, d, "f", root_, "x", nullptr, nullptr)), ENOENT);
  // Rename over an existing file.
  FileHandle other = MakeFile(root_, "other");
  ASSERT_TRUE(backend_->Rename(kRoot, root_, "moved", root_, "other", nullptr, nullptr).ok());
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, other).status()), ESTALE);
  // Directory over non-empty directory.
  FileHandle d2 = MakeDir(root_, "d2");
  MakeFile(d2, "x");
  MakeDir(root_, "d3");
  EXPECT_EQ(ErrnoOf(backend_->Rename(kRoot, root_, "d3", root_, "d2", nullptr, nullptr)),
            ENOTEMPTY);

  // Remove both names: the handle goes stale.
  Wcc rm_wcc;
  ASSERT_TRUE(backend_->Remove(kRoot, root_, "other", &rm_wcc).ok());
  EXPECT_TRUE(rm_wcc.before && rm_wcc.after);
  ASSERT_TRUE(backend_->GetAttr(kRoot, f).ok());  // "hard" still links it
  ASSERT_TRUE(backend_->Remove(kRoot, root_, "hard", nullptr).ok());
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, f).status()), ESTALE);
  ASSERT_TRUE(backend_->Rmdir(kRoot, root_, "d", nullptr).ok());
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, d).status()), ESTALE);
}

// RENAME runs as its caller (who may not write a directory of root's) and,
// on a sync export, commits both directories once the rename is done.
TEST_F(PosixBackendTest, RenameRunsAsTheCallerAndCommitsBothDirectories) {
  FileHandle theirs = MakeDir(root_, "theirs", 0755);
  MakeFile(theirs, "f");
  FileHandle mine = MakeDir(root_, "mine", 0755);
  ASSERT_EQ(chown((export_path_ + "/mine").c_str(), kUser.uid, kUser.gid), 0);
  MakeFile(mine, "g", 0644, kUser);
  EXPECT_EQ(ErrnoOf(backend_->Rename(kUser, theirs, "f", mine, "f", nullptr, nullptr)), EACCES);
  EXPECT_EQ(ErrnoOf(backend_->Rename(kUser, mine, "g", theirs, "g", nullptr, nullptr)), EACCES);
  const SyncStats before = backend_->sync_stats();
  Wcc from, to;
  ASSERT_TRUE(backend_->Rename(kUser, mine, "g", mine, "h", &from, &to).ok());
  EXPECT_TRUE(from.before && from.after && to.before && to.after);
  ASSERT_TRUE(backend_->Rename(kRoot, theirs, "f", mine, "f", nullptr, nullptr).ok());
  const SyncStats after = backend_->sync_stats();
  EXPECT_EQ(after.metadata_commits - before.metadata_commits, 3u);  // one, then both
}

// Descriptors this process holds open on `path` after it was unlinked (the
// kernel names them "<path> (deleted)").
int OpenDeletedDescriptors(const std::string& path) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    std::filesystem::path target = std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string() == path + " (deleted)") ++n;
  }
  return n;
}

// A removed file's cached descriptors (handle and I/O) are closed at once, so
// its space is freed; one with another name left keeps them.
TEST_F(PosixBackendTest, RemovedFilesCachedDescriptorsAreClosed) {
  for (const std::string how : {"remove", "rename over"}) {
    SCOPED_TRACE(how);
    FileHandle f = MakeFile(root_, "big");
    ASSERT_TRUE(WriteString(f, 0, std::string(1 << 20, 'b')).ok());  // a read-write fd
    ASSERT_TRUE(ReadString(f, 0, 10).ok());
    if (how == "remove") {
      ASSERT_TRUE(backend_->Remove(kRoot, root_, "big", nullptr).ok());
    } else {
      MakeFile(root_, "new");
      ASSERT_TRUE(backend_->Rename(kRoot, root_, "new", root_, "big", nullptr, nullptr).ok());
      ASSERT_TRUE(backend_->Remove(kRoot, root_, "big", nullptr).ok());
    }
    EXPECT_EQ(OpenDeletedDescriptors(export_path_ + "/big"), 0);
    EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, f).status()), ESTALE);
  }
  // Still linked elsewhere: the handle keeps working.
  FileHandle f = MakeFile(root_, "one");
  ASSERT_TRUE(WriteString(f, 0, "data").ok());
  ASSERT_TRUE(backend_->Link(kRoot, f, root_, "two", nullptr, nullptr).ok());
  ASSERT_TRUE(backend_->Remove(kRoot, root_, "one", nullptr).ok());
  EXPECT_EQ(*ReadString(f, 0, 4), "data");
}

TEST_F(PosixBackendTest, SymlinksAreNotFollowed) {
  ASSERT_OK_AND_ASSIGN(link, backend_->Symlink(kRoot, root_, "escape", "/etc", {}, nullptr));
  EXPECT_EQ(link.attributes->type, FileType::kSymlink);
  ASSERT_OK_AND_ASSIGN(found, backend_->Lookup(kRoot, root_, "escape", nullptr));
  EXPECT_TRUE(found.handle == link.handle);
  EXPECT_EQ(found.attributes.type, FileType::kSymlink);
  EXPECT_EQ(*backend_->Readlink(kRoot, found.handle, nullptr), "/etc");
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, found.handle, "passwd", nullptr).status()), ENOTDIR);
  EXPECT_EQ(ErrnoOf(backend_->Readlink(kRoot, root_, nullptr).status()), EINVAL);
  EXPECT_EQ(ErrnoOf(ReadString(found.handle, 0, 10).status()), EINVAL);
  EXPECT_EQ(ErrnoOf(backend_->Symlink(kRoot, root_, "escape", "x", {}, nullptr).status()), EEXIST);
}

TEST_F(PosixBackendTest, Mknod) {
  ASSERT_OK_AND_ASSIGN(
      fifo, backend_->Mknod(kRoot, root_, "fifo", FileType::kFifo, 0, 0, Mode(0640), nullptr));
  EXPECT_EQ(fifo.attributes->type, FileType::kFifo);
  EXPECT_EQ(fifo.attributes->mode, 0640u);
  ASSERT_OK_AND_ASSIGN(sock,
                       backend_->Mknod(kRoot, root_, "sock", FileType::kSocket, 0, 0, {}, nullptr));
  EXPECT_EQ(sock.attributes->type, FileType::kSocket);
  ASSERT_OK_AND_ASSIGN(
      chr, backend_->Mknod(kRoot, root_, "null", FileType::kChar, 1, 3, Mode(0666), nullptr));
  EXPECT_EQ(chr.attributes->type, FileType::kChar);
  EXPECT_EQ(chr.attributes->rdev_major, 1u);
  EXPECT_EQ(chr.attributes->rdev_minor, 3u);
  // Reading a device through the server never opens it.
  EXPECT_EQ(ErrnoOf(ReadString(chr.handle, 0, 10).status()), EINVAL);
  EXPECT_EQ(ErrnoOf(ReadString(fifo.handle, 0, 10).status()), EINVAL);
  EXPECT_EQ(
      ErrnoOf(
          backend_->Mknod(kRoot, root_, "dir", FileType::kDirectory, 0, 0, {}, nullptr).status()),
      kErrBadType);
  FileHandle dir = MakeDir(root_, "u", 0777);
  EXPECT_EQ(ErrnoOf(backend_->Mknod(kUser, dir, "c", FileType::kChar, 1, 3, {}, nullptr).status()),
            EPERM);
}

TEST_F(PosixBackendTest, ReadDirPagesWithoutGapsOrDuplicates) {
  FileHandle d = MakeDir(root_, "big");
  constexpr int kFiles = 1000;
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_TRUE(
        backend_
            ->Create(kRoot, d, "file" + std::to_string(i), CreateMode::kUnchecked, {}, {}, nullptr)
            .ok());
  }
  std::multiset<std::string> seen;
  uint64_t cookie = 0;
  Verifier verf{};
  bool eof = false;
  int calls = 0;
  while (!eof && calls < 1000) {
    ++calls;
    int emitted = 0;
    std::optional<Attributes> dir_attrs;
    absl::Status st = backend_->ReadDir(
        kRoot, d, cookie, &verf,
        [&](const DirEntry& e) {
          if (emitted == 7) return false;
          ++emitted;
          seen.insert(std::string(e.name));
          cookie = e.cookie;
          EXPECT_NE(e.fileid, 0u);
          return true;
        },
        &eof, &dir_attrs);
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_TRUE(dir_attrs.has_value());
  }
  EXPECT_TRUE(eof);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kFiles + 2));
  std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size());
  EXPECT_TRUE(unique.count("."));
  EXPECT_TRUE(unique.count(".."));
  EXPECT_TRUE(unique.count("file999"));
  // A stale verifier is accepted; the verifier stays constant.
  Verifier junk = {9, 9, 9, 9, 9, 9, 9, 9};
  bool eof2;
  EXPECT_TRUE(backend_
                  ->ReadDir(
                      kRoot, d, cookie, &junk, [](const DirEntry&) { return true; }, &eof2, nullptr)
                  .ok());
  EXPECT_EQ(junk, Verifier{});
  EXPECT_EQ(ErrnoOf(backend_->ReadDir(
                kRoot, MakeFile(root_, "plain"), 0, nullptr, [](const DirEntry&) { return true; },
                &eof2, nullptr)),
            ENOTDIR);
}

TEST_F(PosixBackendTest, ReadDirAtRootReportsRootForDotDot) {
  ASSERT_OK_AND_ASSIGN(attrs, backend_->GetAttr(kRoot, root_));
  bool eof;
  uint64_t dotdot = 0;
  ASSERT_TRUE(backend_
                  ->ReadDir(
                      kRoot, root_, 0, nullptr,
                      [&](const DirEntry& e) {
                        if (e.name == "..") dotdot = e.fileid;
                        return true;
                      },
                      &eof, nullptr)
                  .ok());
  EXPECT_TRUE(eof);
  EXPECT_EQ(dotdot, attrs.fileid);
}

TEST_F(PosixBackendTest, StatFsAndPathConf) {
  ASSERT_OK_AND_ASSIGN(fs, backend_->StatFs(kRoot, root_, nullptr));
  EXPECT_GT(fs.total_bytes, 0u);
  EXPECT_GE(fs.total_bytes, fs.free_bytes);
  EXPECT_GE(fs.free_bytes, fs.avail_bytes);
  std::optional<Attributes> attrs;
  ASSERT_OK_AND_ASSIGN(pc, backend_->GetPathConf(kRoot, root_, &attrs));
  EXPECT_EQ(pc.name_max, 255u);
  EXPECT_GT(pc.link_max, 1u);
  EXPECT_TRUE(attrs.has_value());
}

TEST_F(PosixBackendTest, SubtreeExportDoesNotEscape) {
  // Export a sub-directory; a handle for its parent (same file system) issued
  // under the sub-export's id must not resolve.
  std::string inner = export_path_ + "/inner";
  ASSERT_EQ(mkdir(inner.c_str(), 0755), 0);
  ASSERT_TRUE(backend_->AddExport(3, inner).ok());
  ASSERT_OK_AND_ASSIGN(inner_root, backend_->RootHandle(3));
  ASSERT_OK_AND_ASSIGN(up, backend_->Lookup(kRoot, inner_root, "..", nullptr));
  EXPECT_TRUE(up.handle == inner_root);
  ASSERT_OK_AND_ASSIGN(secret, backend_->state_dir().LoadOrCreateSecret());
  HandleCodec codec(secret);
  ASSERT_OK_AND_ASSIGN(decoded, codec.Decode(root_));
  ASSERT_OK_AND_ASSIGN(forged, codec.Encode(3, decoded.handle_type, decoded.kernel_bytes()));
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, forged).status()), ESTALE);
  // A directory inside resolves cold (walk succeeds).
  FileHandle deep = MakeDir(MakeDir(inner_root, "a"), "b");
  NewBackend();
  ASSERT_TRUE(backend_->AddExport(3, inner).ok());
  EXPECT_TRUE(backend_->GetAttr(kRoot, deep).ok());
}

TEST_F(PosixBackendTest, ConcurrentCallersKeepTheirOwnCredentials) {
  FileHandle dir = MakeDir(root_, "shared", 0777);
  FileHandle secret = MakeFile(root_, "secret", 0600);
  constexpr int kThreads = 4, kRounds = 50;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Cred cred = t % 2 == 0 ? kRoot : Cred{1000u + t, 1000u + t, {}};
      for (int i = 0; i < kRounds; ++i) {
        std::string name = "t" + std::to_string(t) + "_" + std::to_string(i);
        auto r = backend_->Create(cred, dir, name, CreateMode::kGuarded, Mode(0644), {}, nullptr);
        if (!r.ok() || r->attributes->uid != cred.uid) ++failures;
        std::string buf(4, '\0');
        auto read = backend_->Read(cred, secret, 0, 4, reinterpret_cast<uint8_t*>(buf.data()));
        if (read.ok() != (cred.uid == 0)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(PosixBackendTest, SmallCachesEvictCorrectly) {
  PosixBackendOptions options{tmp_ + "/state"};
  options.handle_cache_size = 8;
  options.io_cache_size = 2;
  auto b = PosixBackend::Create(options);
  ASSERT_TRUE(b.ok());
  backend_ = std::move(*b);
  ASSERT_TRUE(backend_->AddExport(kExport, export_path_).ok());
  std::vector<FileHandle> files;
  for (int i = 0; i < 40; ++i) {
    files.push_back(MakeFile(root_, "f" + std::to_string(i)));
    ASSERT_TRUE(WriteString(files.back(), 0, std::to_string(i)).ok());
  }
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(*ReadString(files[i], 0, 10), std::to_string(i));
    ASSERT_TRUE(WriteString(files[i], 0, "w" + std::to_string(i)).ok());
  }
  for (int i = 39; i >= 0; --i) EXPECT_EQ(*ReadString(files[i], 0, 10), "w" + std::to_string(i));
}

// The same basics on tmpfs (kernel handles and user xattrs differ per file
// system).
TEST_F(PosixBackendTest, WorksOnTmpfs) {
  struct statfs sfs;
  if (statfs("/dev/shm", &sfs) != 0 || sfs.f_type != 0x01021994 /* TMPFS_MAGIC */) {
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  }
  char tmpl[] = "/dev/shm/nfs3d_backend_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string shm = tmpl;
  chmod(shm.c_str(), 0777);
  ASSERT_TRUE(backend_->AddExport(5, shm).ok());
  ASSERT_OK_AND_ASSIGN(root, backend_->RootHandle(5));
  Verifier v = {8, 7, 6, 5, 4, 3, 2, 1};
  ASSERT_OK_AND_ASSIGN(created,
                       backend_->Create(kUser, root, "x", CreateMode::kExclusive, {}, v, nullptr));
  EXPECT_TRUE(backend_->Create(kUser, root, "x", CreateMode::kExclusive, {}, v, nullptr).ok());
  v[0] = 9;
  EXPECT_EQ(
      ErrnoOf(backend_->Create(kUser, root, "x", CreateMode::kExclusive, {}, v, nullptr).status()),
      EEXIST);
  ASSERT_TRUE(WriteString(created.handle, 0, "tmpfs", kUser).ok());
  FileHandle sub = MakeDir(root, "sub");
  NewBackend();
  ASSERT_TRUE(backend_->AddExport(5, shm).ok());
  EXPECT_EQ(*ReadString(created.handle, 0, 10, kUser), "tmpfs");
  EXPECT_TRUE(backend_->GetAttr(kRoot, sub).ok());
  std::set<std::string> names;
  bool eof;
  ASSERT_TRUE(backend_
                  ->ReadDir(
                      kRoot, root, 0, nullptr,
                      [&](const DirEntry& e) {
                        names.insert(std::string(e.name));
                        return true;
                      },
                      &eof, nullptr)
                  .ok());
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "x", "sub"}));
  backend_.reset();
  std::filesystem::remove_all(shm);
}

}  // namespace
}  // namespace nfs3d::vfs
