// What the CephFS backend tests share: the one-node cluster of the ctest
// fixture "ceph" (tests/fixtures/ceph-cluster.sh; NFS3D_CEPH_DIR names it),
// a backend on it, and a directory of the test's own under the root.
#ifndef NFS3D_TESTS_VFS_CEPHFS_CEPHFS_TEST_FIXTURE_H_
#define NFS3D_TESTS_VFS_CEPHFS_CEPHFS_TEST_FIXTURE_H_

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/status_macros.h"
#include "vfs/cephfs/cephfs_backend.h"

namespace nfs3d::vfs {

inline const Cred kCephRoot{0, 0, {}};

inline std::string ClusterDir() {
  const char* dir = std::getenv("NFS3D_CEPH_DIR");
  return dir ? dir : "";
}

// Has the MDS evict the client session `id` (`ceph tell mds.a session
// evict`), as it does to a head paused past the session timeout; 0 when the
// command succeeded.
inline int EvictSession(uint64_t id) {
  const std::string cmd = "ceph -c '" + ClusterDir() + "/ceph.conf' -k '" + ClusterDir() +
                          "/keyring' -n client.admin --connect-timeout 20 tell mds.a session " +
                          "evict id=" + std::to_string(id) + " >/dev/null 2>&1";
  return std::system(cmd.c_str());
}

// Options for a backend on the test cluster as client.admin.
inline CephfsOptions TestClusterOptions(const std::string& state_dir, int session_check_seconds) {
  CephfsOptions options;
  options.state_dir = state_dir;
  options.conf_path = ClusterDir() + "/ceph.conf";
  options.keyring = ClusterDir() + "/keyring";
  options.client_id = "admin";
  options.fs_name = "cephfs";
  options.session_check_seconds = session_check_seconds;
  return options;
}

// A test on the cluster. SetUp opens backend_ with export `export_id` at
// the root and makes dir_ (at dir_path_), a directory named after the test;
// state_ is a directory of the test's own, removed by TearDown.
class CephfsTestBase : public ::testing::Test {
 protected:
  CephfsTestBase(std::string state_prefix, uint32_t export_id, int session_check_seconds)
      : state_prefix_(std::move(state_prefix)),
        export_id_(export_id),
        session_check_seconds_(session_check_seconds) {}

  void SetUp() override {
    if (ClusterDir().empty()) GTEST_SKIP() << "no cluster (run through ctest: fixture ceph)";
    state_ =
        std::filesystem::temp_directory_path() / (state_prefix_ + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(state_);
    backend_ = Open();
    ASSERT_NE(backend_, nullptr);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name = std::string(info->name()) + "-" + std::to_string(getpid());
    ASSERT_OK_AND_ASSIGN(fsroot, backend_->RootHandle(export_id_));
    Wcc wcc;
    SetAttributes mode;
    mode.mode = 0777;
    ASSERT_OK_AND_ASSIGN(dir, backend_->Mkdir(kCephRoot, fsroot, name, mode, &wcc));
    dir_ = dir.handle;
    dir_path_ = "/" + name;
  }

  void TearDown() override {
    backend_.reset();
    if (!state_.empty()) std::filesystem::remove_all(state_);
  }

  // The state directory decides the CephFS session id: a second Open() with
  // the same one ends the first one's session (a restarted head). Empty:
  // the test's own (state_/state).
  std::unique_ptr<CephfsBackend> Open(const std::string& state_dir = "") {
    auto backend = CephfsBackend::Create(
        TestClusterOptions(state_dir.empty() ? StateDirPath() : state_dir, session_check_seconds_));
    EXPECT_TRUE(backend.ok()) << backend.status();
    if (!backend.ok()) return nullptr;
    EXPECT_TRUE((*backend)->AddExport(export_id_, "/").ok());
    return std::move(*backend);
  }

  std::string StateDirPath() const { return state_.string() + "/state"; }

  std::filesystem::path state_;
  std::unique_ptr<CephfsBackend> backend_;
  FileHandle dir_;
  std::string dir_path_;  // dir_ in the file system

 private:
  const std::string state_prefix_;
  const uint32_t export_id_;
  const int session_check_seconds_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_TESTS_VFS_CEPHFS_CEPHFS_TEST_FIXTURE_H_
