#include "nlm/cluster_grace.h"

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"

namespace nfs3d::nlm {
namespace {

class ClusterGraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = OpenLocalFiles(dir_.path());
    ASSERT_TRUE(opened.ok());
    files_ = std::move(*opened);
  }
  test_support::TempDir dir_{"nfs3d-grace"};
  std::unique_ptr<DurableFiles> files_;
};

TEST_F(ClusterGraceTest, NoHeadInGraceIsThePast) {
  ASSERT_TRUE(files_->Write("handle.key", "not a grace file").ok());
  EXPECT_EQ(LatestGraceEnd(*files_).value(), absl::InfinitePast());
}

TEST_F(ClusterGraceTest, TheLatestEndOfAnyHeadCounts) {
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  ASSERT_TRUE(RecordGraceEnd(*files_, "head1", absl::Seconds(90), now).ok());
  ASSERT_TRUE(RecordGraceEnd(*files_, "head2", absl::Seconds(30), now).ok());
  EXPECT_EQ(LatestGraceEnd(*files_).value(), now + absl::Seconds(90));
  // A head's next period replaces its own file only.
  ASSERT_TRUE(RecordGraceEnd(*files_, "head1", absl::Seconds(10), now).ok());
  EXPECT_EQ(LatestGraceEnd(*files_).value(), now + absl::Seconds(30));
}

TEST_F(ClusterGraceTest, EndsAreRoundedUpNeverEarly) {
  const absl::Time end = absl::FromUnixSeconds(1800000000) + absl::Milliseconds(1);
  ASSERT_TRUE(RecordGraceEnd(*files_, "head1", absl::Seconds(1), end - absl::Seconds(1)).ok());
  EXPECT_GE(LatestGraceEnd(*files_).value(), end);
}

TEST_F(ClusterGraceTest, AnEndAlreadyReachedIsOverAtOnce) {
  const absl::Time now = absl::FromUnixSeconds(1800000000) + absl::Milliseconds(300);
  ASSERT_TRUE(RecordGraceEnd(*files_, "head1", absl::ZeroDuration(), now).ok());
  EXPECT_LT(LatestGraceEnd(*files_).value(), now);
  ASSERT_TRUE(RecordGraceEnd(*files_, "head1", absl::Milliseconds(1), now).ok());
  EXPECT_GE(LatestGraceEnd(*files_).value(), now + absl::Milliseconds(1));
}

TEST_F(ClusterGraceTest, AGarbledFileIsAnError) {
  ASSERT_TRUE(files_->Write("grace.head3", "soon").ok());
  EXPECT_EQ(LatestGraceEnd(*files_).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace nfs3d::nlm
