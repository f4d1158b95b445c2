#include "vfs/cephfs/stall_report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace nfs3d::vfs {
namespace {

// The log (stderr) goes to a file while this lives.
class StderrToFile {
 public:
  StderrToFile() : path_(absl::StrCat(::testing::TempDir(), "/stall-report-", getpid())) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrToFile() {
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    unlink(path_.c_str());
  }
  std::string Text() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Waits (at most a minute: a hang guard) until the log holds `what`
  // `times` times.
  bool WaitFor(const std::string& what, int times = 1) const {
    for (int i = 0; i < 600; ++i) {
      const std::string text = Text();
      int found = 0;
      for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++found;
      }
      if (found >= times) return true;
      usleep(100000);
    }
    return false;
  }

 private:
  const std::string path_;
  int saved_;
};

TEST(StallReportTest, SaysWhatItWaitsForUntilItIsDoneAndThenHowLongItTook) {
  StderrToFile log;
  {
    StallReport report("cluster X", "ending session S", absl::Milliseconds(1),
                       absl::Milliseconds(1));
    // Said, and said again while the call lasts.
    EXPECT_TRUE(log.WaitFor("cluster X: still waiting after", 2)) << log.Text();
  }
  const std::string text = log.Text();
  EXPECT_NE(text.find("cluster X: still waiting after"), std::string::npos) << text;
  EXPECT_NE(text.find("MDS_SLOW_METADATA_IO"), std::string::npos) << text;
  EXPECT_NE(text.find("cluster X: the MDS answered after"), std::string::npos) << text;
  EXPECT_NE(text.find("(ending session S)"), std::string::npos) << text;
}

TEST(StallReportTest, SaysNothingWhenTheCallReturnsInTime) {
  StderrToFile log;
  { StallReport report("cluster X", "opening session S", absl::Hours(1), absl::Hours(1)); }
  EXPECT_EQ(log.Text(), "");
}

}  // namespace
}  // namespace nfs3d::vfs
