// A fresh directory under /tmp for one test, removed with everything in it
// when the object goes. Header-only.
#ifndef NFS3D_TESTS_SUPPORT_TEMP_DIR_H_
#define NFS3D_TESTS_SUPPORT_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace nfs3d::test_support {

class TempDir {
 public:
  // /tmp/<prefix>.XXXXXX; path() is empty if it could not be made.
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_TEMP_DIR_H_
