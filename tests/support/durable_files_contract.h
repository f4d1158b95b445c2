// What every DurableFiles (common/durable_files.h) must do, checked the same
// way on each implementation: the local one and the CephFS one.
#ifndef NFS3D_TESTS_SUPPORT_DURABLE_FILES_CONTRACT_H_
#define NFS3D_TESTS_SUPPORT_DURABLE_FILES_CONTRACT_H_

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "common/durable_files.h"

namespace nfs3d::test_support {

// `files` must be an empty directory.
inline void CheckDurableFilesContract(DurableFiles& files) {
  auto list = [&files] {
    absl::StatusOr<std::vector<std::string>> names = files.List();
    EXPECT_TRUE(names.ok()) << names.status();
    std::vector<std::string> sorted = names.ok() ? *names : std::vector<std::string>{};
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  };
  absl::StatusOr<std::optional<std::string>> missing = files.Read("a");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_FALSE(missing->has_value());
  EXPECT_TRUE(list().empty());

  ASSERT_TRUE(files.Write("a", "first").ok());
  ASSERT_TRUE(files.Write("b", std::string(10000, 'x')).ok());  // more than one read
  ASSERT_TRUE(files.Write("a", "second").ok());                 // replaces
  EXPECT_EQ(files.Read("a").value(), std::optional<std::string>("second"));
  EXPECT_EQ(files.Read("b").value(), std::optional<std::string>(std::string(10000, 'x')));
  ASSERT_TRUE(files.Write("empty", "").ok());
  EXPECT_EQ(files.Read("empty").value(), std::optional<std::string>(""));
  EXPECT_EQ(list(), (std::vector<std::string>{"a", "b", "empty"}));  // no temp files

  absl::StatusOr<std::unique_ptr<DurableFiles>> sub = files.Sub("dir");
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_TRUE((*sub)->Write("c", "in dir").ok());
  EXPECT_EQ(files.Sub("dir").value()->Read("c").value(), std::optional<std::string>("in dir"));
  EXPECT_EQ(list(), (std::vector<std::string>{"a", "b", "dir", "empty"}));
  // ReadAll: the files by prefix, in one call; not the sub-directory.
  absl::StatusOr<std::map<std::string, std::string>> all = files.ReadAll("");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, (std::map<std::string, std::string>{
                      {"a", "second"}, {"b", std::string(10000, 'x')}, {"empty", ""}}));
  EXPECT_EQ(files.ReadAll("e").value(), (std::map<std::string, std::string>{{"empty", ""}}));
  EXPECT_TRUE(files.ReadAll("d").value().empty());

  ASSERT_TRUE(files.Remove("a").ok());
  ASSERT_TRUE(files.Remove("a").ok());  // already gone: not an error
  EXPECT_FALSE(files.Read("a").value().has_value());
  EXPECT_EQ(list(), (std::vector<std::string>{"b", "dir", "empty"}));
}

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_DURABLE_FILES_CONTRACT_H_
