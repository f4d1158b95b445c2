// The edits `nfs3d exports add|remove` make to an exports file's text.
#include "conf/exports_edit.h"

#include <gtest/gtest.h>

namespace nfs3d::conf {
namespace {

constexpr char kFile[] =
    "# site exports\n"
    "/srv/a 10.0.0.0/8(rw)\n"
    "\n"
    "/srv/b \\\n"
    "   *(ro)\n"
    "/srv/c host1(rw,no_root_squash)\n";

TEST(ExportsEditTest, AddAppendsANewPath) {
  absl::StatusOr<std::string> out = AddExportLine(kFile, "/srv/d *(rw)");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, std::string(kFile) + "/srv/d *(rw)\n");
}

TEST(ExportsEditTest, AddReplacesTheLineOfTheSamePathInPlace) {
  absl::StatusOr<std::string> out = AddExportLine(kFile, "/srv/b/ 192.168.0.0/16(rw)");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "# site exports\n"
            "/srv/a 10.0.0.0/8(rw)\n"
            "\n"
            "/srv/b/ 192.168.0.0/16(rw)\n"
            "/srv/c host1(rw,no_root_squash)\n");
}

TEST(ExportsEditTest, AddToAFileWithoutFinalNewline) {
  absl::StatusOr<std::string> out = AddExportLine("/srv/a *(rw)", "/srv/b *(ro)");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "/srv/a *(rw)\n/srv/b *(ro)\n");
}

TEST(ExportsEditTest, AddRefusesWhatDoesNotParse) {
  EXPECT_EQ(AddExportLine(kFile, "srv/relative *(rw)").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddExportLine(kFile, "/srv/x *(bogus_option)").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddExportLine(kFile, "").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddExportLine(kFile, "/srv/x *(rw)\n/srv/y *(rw)").status().code(),
            absl::StatusCode::kInvalidArgument);
  // The whole result must parse: two exports may not share an fsid.
  EXPECT_EQ(AddExportLine("/srv/a *(rw,fsid=7)\n", "/srv/x *(rw,fsid=7)").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ExportsEditTest, RemoveDropsTheWholeLogicalLine) {
  absl::StatusOr<std::string> out = RemoveExportLine(kFile, "/srv/b");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "# site exports\n"
            "/srv/a 10.0.0.0/8(rw)\n"
            "\n"
            "/srv/c host1(rw,no_root_squash)\n");
}

TEST(ExportsEditTest, RemoveOfWhatIsNotExportedIsNotFound) {
  EXPECT_EQ(RemoveExportLine(kFile, "/srv/zzz").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(RemoveExportLine(kFile, "relative").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ExportsEditTest, TheChangeLineIsReplacedNotAccumulated) {
  std::string once = StampChange(kFile, "root@h1 at T1: add /srv/d");
  EXPECT_EQ(ChangeOf(once), "root@h1 at T1: add /srv/d");
  std::string twice = StampChange(once, "root@h2 at T2: remove /srv/d");
  EXPECT_EQ(ChangeOf(twice), "root@h2 at T2: remove /srv/d");
  EXPECT_EQ(twice, std::string("# last change: root@h2 at T2: remove /srv/d\n") + kFile);
  EXPECT_EQ(ChangeOf(kFile), "");
}

}  // namespace
}  // namespace nfs3d::conf
