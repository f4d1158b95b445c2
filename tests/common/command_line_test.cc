#include "common/command_line.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::cli {
namespace {

struct Values {
  std::string dir;
  int count = 0;
  double interval = 0;
  bool quiet = false;
};

std::vector<Option> Table(Values* v) {
  return {
      {"state-dir", 0, "DIR", "state directory", Store(&v->dir)},
      {"count", 'c', "N", "how many", StoreInt(&v->count, 1, 10)},
      {"interval", 'i', "SECONDS", "how often", StoreDouble(&v->interval, 0.5)},
      {"quiet", 'q', "", "say less", SetTrue(&v->quiet)},
  };
}

absl::StatusOr<std::vector<std::string>> ParseArgs(std::vector<std::string> args, Values* v) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::vector<Option> table = Table(v);
  return Parse(static_cast<int>(argv.size()), argv.data(), table);
}

TEST(CommandLineTest, LongShortAndInlineValues) {
  Values v;
  auto rest = ParseArgs({"--state-dir", "/a", "-c", "3", "--interval=2.5", "-q", "pos"}, &v);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(v.dir, "/a");
  EXPECT_EQ(v.count, 3);
  EXPECT_EQ(v.interval, 2.5);
  EXPECT_TRUE(v.quiet);
  EXPECT_EQ(*rest, std::vector<std::string>{"pos"});
}

TEST(CommandLineTest, UnderscoreSpellingAndDoubleDash) {
  Values v;
  auto rest = ParseArgs({"--state_dir=/b", "--", "--count"}, &v);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(v.dir, "/b");
  EXPECT_EQ(*rest, std::vector<std::string>{"--count"});
}

TEST(CommandLineTest, MistakesAreOneLineSayingWhat) {
  Values v;
  EXPECT_EQ(ParseArgs({"--bogus"}, &v).status().message(), "unknown option --bogus");
  EXPECT_EQ(ParseArgs({"-x"}, &v).status().message(), "unknown option -x");
  EXPECT_EQ(ParseArgs({"--count", "x"}, &v).status().message(),
            "--count: 'x' is not a whole number from 1 to 10");
  EXPECT_EQ(ParseArgs({"-c", "11"}, &v).status().message(),
            "--count: '11' is not a whole number from 1 to 10");
  EXPECT_EQ(ParseArgs({"--interval=0.1"}, &v).status().message(),
            "--interval: '0.1' is not a number >= 0.5");
  EXPECT_EQ(ParseArgs({"--state-dir"}, &v).status().message(), "--state-dir needs a value (DIR)");
  EXPECT_EQ(ParseArgs({"--quiet=yes"}, &v).status().message(), "--quiet takes no value");
}

TEST(CommandLineTest, UsageListsEveryOptionAligned) {
  Values v;
  std::vector<Option> table = Table(&v);
  EXPECT_EQ(Usage("prog [options]", table),
            "usage: prog [options]\n"
            "      --state-dir DIR     state directory\n"
            "  -c, --count N           how many\n"
            "  -i, --interval SECONDS  how often\n"
            "  -q, --quiet             say less\n");
}

}  // namespace
}  // namespace nfs3d::cli
