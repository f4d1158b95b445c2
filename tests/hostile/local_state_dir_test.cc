// Issue 48, finding 6 (a, b): a local user and nfs3d's state directory.
// What a local user who is not nfs3d's user may do there: nothing. nfs3d
// refuses a state directory it does not own or that group or others may
// write, and says why; the files and sockets it makes there never exist with
// a mode that lets others write the pid file or connect to a socket; the
// process umask is not 0 (while clients' modes are still stored exactly as
// sent); and `nfs3d exports` signals only a pid that is an nfs3d of its own
// user, read from a file only that user could have written.
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

constexpr uid_t kNobody = 65534;

class LocalStateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (another uid owns the directory)";
    dir_ = FreshTestDir("local-state");
    server_.Configure(dir_, ExportLine(dir_));
  }
  void TearDown() override {
    server_.Stop();
    fs::remove_all(dir_);
  }

  fs::path state() const { return dir_ / "state"; }

  // nfs3d on a state directory of this mode and owner: its exit status (it
  // must refuse at once) and what it logged.
  void ExpectRefused(mode_t mode, uid_t owner, const std::string& mode_text) {
    ASSERT_EQ(chown(state().c_str(), owner, 0), 0);
    ASSERT_EQ(chmod(state().c_str(), mode), 0);
    const size_t log_from = server_.Log().size();
    std::optional<int> status = server_.RunUntilExit(absl::Seconds(30));
    ASSERT_TRUE(status.has_value())
        << "nfs3d still ran on a state directory of mode " << mode_text << ", owner " << owner;
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0);
    const std::string log = server_.Log().substr(log_from);
    std::printf("state dir mode %s owner %u: %s", mode_text.c_str(), owner, log.c_str());
    // One line naming the directory, its owner and mode, and the fix.
    EXPECT_NE(log.find(state().string()), std::string::npos) << log;
    EXPECT_NE(log.find(absl::StrCat("owner uid ", owner)), std::string::npos) << log;
    EXPECT_NE(log.find(absl::StrCat("mode ", mode_text)), std::string::npos) << log;
    EXPECT_NE(log.find("chmod 0700"), std::string::npos) << log;
    // Nothing was made in it.
    for (const char* name : {"nfs3d.pid", "nfs3d.sock", "handover.sock", "handle.key"}) {
      EXPECT_FALSE(fs::exists(fs::symlink_status(state() / name))) << name;
    }
  }

  fs::path dir_;
  NfsdProcess server_;
};

TEST_F(LocalStateDirTest, RefusesAStateDirectoryOthersMayWrite) {
  ExpectRefused(01777, 0, "1777");
  ExpectRefused(0777, 0, "0777");
  ExpectRefused(0770, 0, "0770");  // group-writable is writable by others too
}

TEST_F(LocalStateDirTest, RefusesAStateDirectoryOfAnotherUser) {
  ExpectRefused(0700, kNobody, "0700");
}

// Watches the state directory from before nfs3d starts: the mode each new
// entry had when this thread first saw it.
class FirstModes {
 public:
  explicit FirstModes(const fs::path& dir) : dir_(dir), fd_(inotify_init1(IN_CLOEXEC)) {
    inotify_add_watch(fd_, dir.c_str(), IN_CREATE | IN_MOVED_TO);
    thread_ = std::thread([this] { Run(); });
  }
  ~FirstModes() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  std::map<std::string, mode_t> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  void Run() {
    alignas(inotify_event) char buf[8192];
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = read(fd_, buf, sizeof(buf));
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        if (e->len == 0) continue;
        struct stat st;
        if (lstat((dir_ / e->name).c_str(), &st) != 0) continue;
        std::lock_guard<std::mutex> lock(mu_);
        seen_.emplace(e->name, st.st_mode);
      }
    }
  }

  const fs::path dir_;
  const int fd_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<std::string, mode_t> seen_;
  std::thread thread_;
};

// The Umask line of /proc/PID/status (the main thread's), or -1.
int ProcessUmask(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<int>(std::stoul(line.substr(6), 0, 8));
  }
  return -1;
}

TEST_F(LocalStateDirTest, FilesAndSocketsHaveTheirFinalModesFromTheStart) {
  // A directory others may enter (0755 is allowed): the entries' own modes
  // are all that keep them out.
  ASSERT_EQ(chmod(state().c_str(), 0755), 0);
  FirstModes watch(state());
  ASSERT_TRUE(server_.Start()) << server_.Log();
  for (int i = 0; i < 50 && !fs::exists(state() / "nfs3d.pid"); ++i) usleep(100000);

  const int umask_now = ProcessUmask(server_.pid());
  std::printf("nfs3d umask: %04o\n", umask_now);
  ASSERT_GE(umask_now, 0);
  EXPECT_EQ(umask_now & 022, 022) << "the process umask lets files be created writable by others";

  const std::map<std::string, mode_t> first = watch.seen();
  for (const auto& [name, mode] : first) {
    std::printf("first seen: %-20s %06o\n", name.c_str(), mode);
    EXPECT_EQ(mode & (S_IWGRP | S_IWOTH), 0u) << name << " was writable by others";
    if (S_ISSOCK(mode)) {
      EXPECT_EQ(mode & 077, 0u) << name << " was reachable by others";
    }
  }
  const std::map<std::string, mode_t> want = {
      {"nfs3d.sock", 0600}, {"handover.sock", 0600}, {"nfs3d.pid", 0644}, {"handle.key", 0600}};
  for (const auto& [name, mode] : want) {
    struct stat st;
    ASSERT_EQ(lstat((state() / name).c_str(), &st), 0) << name;
    std::printf("now:        %-20s %06o\n", name.c_str(), st.st_mode);
    EXPECT_EQ(st.st_mode & 07777, mode) << name;
    EXPECT_EQ(st.st_uid, geteuid()) << name;
  }
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(state())) {
    struct stat st;
    ASSERT_EQ(lstat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & (S_IWGRP | S_IWOTH), 0u) << e.path() << " writable by others";
  }

  // The umask is the server's, not the clients': modes come out as sent.
  auto client = RawClient::Open(server_.port());
  ASSERT_NE(client, nullptr);
  const std::string root = Mount(*client, (dir_ / "export").string());
  ASSERT_FALSE(root.empty());
  NfsReply created = Nfs(*client, nfs3::kCreate,
                         Args().Opaque(root).String("f").U32(nfs3::GUARDED).ModeOnly(0666).str());
  ASSERT_EQ(created.status, nfs3::NFS3_OK);
  NfsReply made = Nfs(*client, nfs3::kMkdir, Args().Opaque(root).String("d").ModeOnly(0777).str());
  ASSERT_EQ(made.status, nfs3::NFS3_OK);
  struct stat st;
  ASSERT_EQ(lstat((dir_ / "export" / "f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0666u);
  ASSERT_EQ(lstat((dir_ / "export" / "d").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
}

// A process `nfs3d exports` must not signal: SIGHUP ends it (default action).
pid_t Victim(uid_t uid, const char* name) {
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_NAME, name);
    if (uid != 0 && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(1);
    for (;;) pause();
  }
  return pid;
}

bool AliveAfter(pid_t pid, absl::Duration wait) {
  absl::SleepFor(wait);
  int status;
  return waitpid(pid, &status, WNOHANG) == 0;
}

void Reap(pid_t pid) {
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
}

TEST_F(LocalStateDirTest, ExportsCommandSignalsOnlyAnNfs3dOfItsUser) {
  ASSERT_TRUE(server_.Start()) << server_.Log();
  const fs::path pid_file = state() / "nfs3d.pid";
  for (int i = 0; i < 50 && !fs::exists(pid_file); ++i) usleep(100000);
  ASSERT_TRUE(fs::exists(pid_file));
  auto write_pid = [&](pid_t pid, mode_t mode) {
    fs::remove(pid_file);
    std::ofstream(pid_file) << pid << "\n";
    ASSERT_EQ(chmod(pid_file.c_str(), mode), 0);
  };
  int serial = 0;
  auto add = [&](std::string* out) {
    const std::string sub = absl::StrCat("x", ++serial);
    fs::create_directories(dir_ / sub);
    return server_.Command("exports", {"add", (dir_ / sub).string(), "127.0.0.1(rw)"}, out);
  };
  struct Case {
    const char* what;
    uid_t uid;
    const char* name;
  };
  // Root's pid file, but the pid is not an nfs3d (or not root's).
  for (const Case& c : {Case{"a root process of another name", 0, "sleep"},
                        Case{"an 'nfs3d' of another user", kNobody, "nfs3d"}}) {
    const pid_t victim = Victim(c.uid, c.name);
    write_pid(victim, 0644);
    std::string out;
    add(&out);
    std::printf("pid of %s: %s", c.what, out.c_str());
    EXPECT_TRUE(AliveAfter(victim, absl::Milliseconds(300))) << c.what << " was signalled";
    EXPECT_NE(out.find("not signalled"), std::string::npos) << out;
    Reap(victim);
  }
  // The server's own pid in a file others may write: not believed either.
  write_pid(server_.pid(), 0666);
  std::string out;
  add(&out);
  std::printf("pid file of mode 0666: %s", out.c_str());
  EXPECT_NE(out.find("not signalled"), std::string::npos) << out;
  // Written as nfs3d writes it, the server is signalled and reloads.
  write_pid(server_.pid(), 0644);
  add(&out);
  std::printf("nfs3d's own pid file: %s", out.c_str());
  EXPECT_NE(out.find("reloaded"), std::string::npos) << out;
}

}  // namespace
}  // namespace nfs3d::e2e
