// The metrics endpoint's control calls: answered on the unix socket only
// (only root reaches it), never on TCP; their answers' statuses become the
// client's errors.
#include "stats/metrics_server.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace nfs3d::stats {
namespace {

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = absl::StrCat(::testing::TempDir(), "/metrics-server-test-", getpid(), ".sock");
    server_.SetControl([](std::string_view method, std::string_view target, std::string_view who,
                          const std::string& body) -> MetricsServer::ControlAnswer {
      if (target == "/refuse") return {409, "refused: " + body + "\n"};
      return {200, absl::StrCat(std::string(method), " ", std::string(target), " by ",
                                std::string(who), ": ", body)};
    });
    absl::StatusOr<uint16_t> port = server_.ListenTcp("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status();
    tcp_ = absl::StrCat("127.0.0.1:", *port);
    ASSERT_TRUE(server_.ListenUnix(socket_).ok());
    server_.Start();
  }

  MetricsServer server_{[](MetricsServer::Audience audience) {
    return std::string(audience == MetricsServer::Audience::kTcp ? "up 1\n" : "up 1\nroot 1\n");
  }};
  std::string socket_;
  std::string tcp_;
};

TEST_F(MetricsServerTest, MetricsOnBothControlCallsOnlyOnTheUnixSocket) {
  EXPECT_EQ(HttpGet(tcp_, "/metrics").value_or(""), "up 1\n");
  EXPECT_EQ(HttpGet("unix:" + socket_, "/metrics").value_or(""), "up 1\nroot 1\n");

  // Who called is the kernel's word (SO_PEERCRED); the header only what it says.
  absl::StatusOr<std::string> answer = HttpCall("unix:" + socket_, "POST", "/x", "me@host", "b");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, absl::StrCat("POST /x by uid ", getuid(), " (pid ", getpid(),
                                  ", says \"me@host\"): b"));

  // TCP: GET only, and no control call.
  EXPECT_FALSE(HttpCall(tcp_, "POST", "/x", "me@host", "b").ok());
  EXPECT_TRUE(absl::IsNotFound(HttpGet(tcp_, "/x").status()));
}

TEST_F(MetricsServerTest, AControlCallsRefusalIsItsMessage) {
  absl::StatusOr<std::string> answer = HttpCall("unix:" + socket_, "POST", "/refuse", "", "why");
  EXPECT_TRUE(absl::IsFailedPrecondition(answer.status())) << answer.status();
  EXPECT_EQ(answer.status().message(), "refused: why");
  EXPECT_FALSE(HttpCall("unix:" + socket_, "NOT-A-METHOD", "/x", "", "").ok());
}

}  // namespace
}  // namespace nfs3d::stats
