// A server over a real PosixBackend on a temp directory with four exports:
//   rw      127.0.0.1(rw,no_root_squash)   fsid 1
//   ro      *(ro,no_root_squash)           fsid 2
//   squash  *(rw,root_squash)              fsid 3   (directory mode 0777)
//   other   10.0.0.0/8(rw)                 fsid 4   (the test peer is not listed)
// The test client calls from 127.0.0.1:800 with AUTH_SYS uid 0 by default.
#ifndef NFS3D_TESTS_NFSD_NFS3_FIXTURE_H_
#define NFS3D_TESTS_NFSD_NFS3_FIXTURE_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"

#include "conf/exports.h"
#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_program.h"
#include "nfsd/nfs_server.h"
#include "tests/nfsd/nfs3_test_client.h"
#include "vfs/posix/posix_backend.h"

namespace nfs3d::nfsd::testing {

inline constexpr uint32_t kRwId = 1;
inline constexpr uint32_t kRoId = 2;
inline constexpr uint32_t kSquashId = 3;
inline constexpr uint32_t kOtherId = 4;

class Nfs3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    // PosixBackend needs open_by_handle_at (CAP_DAC_READ_SEARCH) and
    // per-thread credential switching.
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    char tmpl[] = "/tmp/nfs3d-nfsd-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"state", "rw", "ro", "squash", "other"}) {
      ASSERT_EQ(mkdir((root_ + "/" + d).c_str(), 0755), 0);
    }
    chmod((root_ + "/rw").c_str(), 0777);
    chmod((root_ + "/squash").c_str(), 0777);
    vfs::PosixBackendOptions options;
    options.state_dir = root_ + "/state";
    auto backend = vfs::PosixBackend::Create(options);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    const std::string text = root_ + "/rw 127.0.0.1(rw,no_root_squash,fsid=1)\n" + root_ +
                             "/ro *(ro,no_root_squash,fsid=2)\n" + root_ +
                             "/squash *(rw,root_squash,fsid=3)\n" + root_ +
                             "/other 10.0.0.0/8(rw,fsid=4)\n";
    auto table = conf::ParseExports(text, "test-exports");
    ASSERT_TRUE(table.ok()) << table.status();
    for (const conf::Export& e : table->exports) {
      ASSERT_TRUE(backend_->AddExport(e.export_id, e.path).ok()) << e.path;
    }
    server_ = std::make_unique<NfsServer>(
        backend_.get(), std::make_shared<const conf::ExportTable>(std::move(*table)), Settings());
    program_ = Nfs3Program(server_.get());
    client_ = std::make_unique<Nfs3TestClient>(program_);
  }

  void TearDown() override {
    client_.reset();
    server_.reset();
    backend_.reset();
    if (root_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  // Overridden by tests that need other transfer sizes.
  virtual TransferSettings Settings() const {
    TransferSettings s;
    s.tcp = {65536, 32768, 65536, 32768};
    s.udp = {32768, 16384, 32768, 16384, /*rsize_pref_auto=*/true, /*wsize_pref_auto=*/true};
    return s;
  }

  n3::nfs_fh3 Root(uint32_t export_id) {
    auto fh = backend_->RootHandle(export_id);
    EXPECT_TRUE(fh.ok()) << fh.status();
    return fh.ok() ? ToNfsHandle(*fh) : n3::nfs_fh3{};
  }

  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  Nfs3TestClient& client() { return *client_; }

  // Creates a file through NFS and returns its handle.
  n3::nfs_fh3 MakeFile(const n3::nfs_fh3& dir, std::string_view name) {
    n3::diropres3 r = client().Create(dir, name, n3::UNCHECKED);
    EXPECT_EQ(r.status, n3::NFS3_OK) << name;
    return r.obj.value_or(n3::nfs_fh3{});
  }

  std::string root_;
  std::unique_ptr<vfs::PosixBackend> backend_;
  std::unique_ptr<NfsServer> server_;
  rpc::Program program_;
  std::unique_ptr<Nfs3TestClient> client_;
};

inline n3::sattr3 Mode(uint32_t mode) {
  n3::sattr3 s;
  s.mode = mode;
  return s;
}

}  // namespace nfs3d::nfsd::testing

#endif  // NFS3D_TESTS_NFSD_NFS3_FIXTURE_H_
