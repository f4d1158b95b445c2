// nfs3d serving a CephFS export when the cluster fails,
// against the nfs3d binary and the shared test cluster (fixture ceph):
//  - the MDS stops answering (SIGSTOP) while clients make calls: calls to
//    the CephFS export are answered with NFS3ERR_JUKEBOX after the [ceph]
//    timeout, a POSIX export of the same nfs3d keeps answering, and once the
//    MDS is back the CephFS export serves again with the data acknowledged
//    FILE_SYNC before the stall (read back after a kill -9 and restart, so
//    from the cluster, not a cache);
//  - the OSD stops answering: a COMMIT is answered JUKEBOX, and as its
//    sync's outcome is unknown the write verifier changes, so the client
//    resends; the data then survives a kill -9 and restart;
//  - nfs3d killed (kill -9) while the MDS is stopped and started again: the
//    new one waits for the MDS to end its predecessor's session, says so in
//    its log, and serves once the MDS is back, with the data acknowledged
//    before (the chaos soak's restart during an MDS pause);
//  - a cluster that cannot be reached at start: nfs3d exits non-zero with a
//    message naming the cluster and the step that failed.
// Timing is printed, never asserted; the 60 s bounds only guard against a
// hang.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"
#include "tests/support/build_paths.h"

namespace nfs3d::e2e {
namespace {

constexpr absl::Duration kHangGuard = absl::Seconds(60);

// Runs tests/fixtures/ceph-cluster.sh VERB DIR DAEMON.
bool Cluster(const char* verb, const std::string& dir, const char* daemon) {
  const std::string cmd = absl::StrCat(
      test_support::SourceDir(), "/tests/fixtures/ceph-cluster.sh ", verb, " '", dir, "' ", daemon);
  return std::system(cmd.c_str()) == 0;
}

// A call with a reply expected within the hang guard.
NfsReply Call(RawClient& c, uint32_t xid, uint32_t proc, const std::string& args) {
  return ToNfsReply(c.Call(xid, nfs3::kProgram, 3, proc, args, kHangGuard));
}

// The NFS status of a call, or ~0 when there was no reply within the guard.
uint32_t StatusOf(const NfsReply& r) {
  return r.ok && r.reply_stat == 0 && r.accept_stat == 0 ? r.status : ~0u;
}
uint32_t StatusOf(RawClient& c, uint32_t xid, uint32_t proc, const std::string& args) {
  return StatusOf(Call(c, xid, proc, args));
}

double SecondsSince(absl::Time start) { return absl::ToDoubleSeconds(absl::Now() - start); }

// WRITE or COMMIT reply: the write verifier (8 bytes), "" on error.
std::string VerifierOf(const NfsReply& r, bool write) {
  if (StatusOf(r) != 0) return "";
  xdr::Decoder d(Span(r.results));
  d.U32();
  SkipWcc(d);
  if (write) d.U32(), d.U32();  // count, committed
  return Str(d.FixedOpaque(8));
}

class CephfsFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* ceph = std::getenv("NFS3D_CEPH_DIR");
    if (ceph == nullptr) GTEST_SKIP() << "no cluster (run through ctest: fixture ceph)";
    ceph_ = ceph;
    dir_ = FreshTestDir("cephfault");
    local_ = (dir_ / "export").string();
    server_.Configure(dir_,
                      absl::StrCat("/ceph 127.0.0.1(rw,insecure,no_root_squash,cephfs=/)\n", local_,
                                   " 127.0.0.1(rw,insecure,no_root_squash)\n"),
                      absl::StrCat("\n[ceph]\nconf = ", ceph_, "/ceph.conf\nkeyring = ", ceph_,
                                   "/keyring\nclient_id = admin\nfs_name = cephfs\ntimeout = 3\n"));
    ASSERT_TRUE(server_.Start()) << server_.Log();
    c_ = Client();
    ceph_root_ = Root("/ceph");
    ASSERT_FALSE(ceph_root_.empty());
  }
  void TearDown() override {
    if (!paused_.empty()) Cluster("resume-daemon", ceph_, paused_.c_str());
    server_.Stop();
    fs::remove_all(dir_);
  }
  std::unique_ptr<RawClient> Client() { return RawClient::Open(server_.port(), {}); }
  std::string Root(const std::string& path) {
    auto mnt = RawClient::Open(server_.mount_port(), {});
    return Mount(*mnt, path);
  }
  NfsReply Call(uint32_t proc, const std::string& args) {
    return e2e::Call(*c_, xid_++, proc, args);
  }
  // A new file in the CephFS export; its handle.
  std::string CreateOnCeph(const std::string& name) {
    created_.push_back(name);
    return NewHandle(Call(nfs3::kCreate, CreateArgs(ceph_root_, name)));
  }
  NfsReply Write(const std::string& fh, const std::string& data, uint32_t stable) {
    return Call(nfs3::kWrite, Args()
                                  .Opaque(fh)
                                  .U64(0)
                                  .U32(static_cast<uint32_t>(data.size()))
                                  .U32(stable)
                                  .Opaque(data)
                                  .str());
  }
  // Repeats `call` while it is answered JUKEBOX, as a client does (at most
  // the hang guard): the last reply.
  NfsReply Retry(const std::function<NfsReply()>& call) {
    const absl::Time start = absl::Now();
    NfsReply r = call();
    while (StatusOf(r) == nfs3::NFS3ERR_JUKEBOX && absl::Now() - start < kHangGuard) {
      usleep(500000);
      r = call();
    }
    return r;
  }
  void Pause(const char* daemon) {
    ASSERT_TRUE(Cluster("pause-daemon", ceph_, daemon));
    paused_ = daemon;
  }
  void Resume() {
    ASSERT_TRUE(Cluster("resume-daemon", ceph_, paused_.c_str()));
    paused_.clear();
  }
  // What fh holds on the cluster: READ after a kill -9 and a restart (so not
  // from a cache of the nfs3d that wrote it). Removes the files made.
  std::string ReadAfterRestart(const std::string& fh) {
    server_.Kill9();
    if (!server_.Start()) return "restart failed: " + server_.Log();
    c_ = Client();
    NfsReply read = Call(nfs3::kRead, Args().Opaque(fh).U64(0).U32(4096).str());
    for (const std::string& name : created_) Call(nfs3::kRemove, DirOp(ceph_root_, name));
    return read.results;
  }

  std::string ceph_;
  fs::path dir_;
  std::string local_;
  NfsdProcess server_;
  std::unique_ptr<RawClient> c_;
  std::string ceph_root_;
  uint32_t xid_ = 1;
  std::string paused_;                // resumed at the end whatever happened
  std::vector<std::string> created_;  // removed at the end
};

TEST_F(CephfsFaultTest, StoppedMdsGivesJukeboxOthersKeepServingAndServiceResumes) {
  const std::string local_root = Root(local_);
  ASSERT_FALSE(local_root.empty());
  // Data acknowledged FILE_SYNC before the fault.
  const std::string name = absl::StrCat("fault-", getpid());
  const std::string fh = CreateOnCeph(name);
  ASSERT_FALSE(fh.empty());
  const std::string data = "acknowledged before the MDS stopped";
  ASSERT_EQ(StatusOf(Write(fh, data, nfs3::FILE_SYNC)), 0u);

  Pause("mds");
  const absl::Time stopped = absl::Now();
  // More CREATEs at once than the server has worker threads (4 + 4
  // metadata), each on its own connection: every one is answered JUKEBOX.
  constexpr int kCallers = 10;
  std::vector<std::thread> callers;
  std::atomic<int> jukebox{0}, other{0};
  std::vector<std::string> others(kCallers);  // what a caller got instead, for the failure message
  for (int i = 0; i < kCallers; ++i) {
    created_.push_back(absl::StrCat(name, "-", i));
    callers.emplace_back([&, i, args = CreateArgs(ceph_root_, created_.back())] {
      auto own = Client();
      const NfsReply r = own ? e2e::Call(*own, 1000 + i, nfs3::kCreate, args) : NfsReply{};
      if (StatusOf(r) == nfs3::NFS3ERR_JUKEBOX) {
        jukebox++;
        return;
      }
      other++;
      others[i] = absl::StrCat("caller ", i, ": connected ", own != nullptr, ", reply ", r.ok,
                               ", reply_stat ", r.reply_stat, ", accept_stat ", r.accept_stat,
                               ", status ", r.status, " after ", SecondsSince(stopped), " s; ");
    });
  }
  // Meanwhile the POSIX export answers: NULL, CREATE, GETATTR, WRITE.
  const absl::Time local_start = absl::Now();
  auto lc = Client();
  EXPECT_TRUE(lc->Call(9000, nfs3::kProgram, 3, nfs3::kNull, "", kHangGuard).has_value());
  const std::string local_fh =
      NewHandle(e2e::Call(*lc, 9001, nfs3::kCreate, CreateArgs(local_root, "during")));
  EXPECT_FALSE(local_fh.empty());
  EXPECT_EQ(StatusOf(*lc, 9002, nfs3::kGetattr, Args().Opaque(local_root).str()), 0u);
  EXPECT_EQ(StatusOf(*lc, 9003, nfs3::kWrite,
                     Args().Opaque(local_fh).U64(0).U32(1).U32(nfs3::FILE_SYNC).Opaque("x").str()),
            0u);
  const double local_seconds = SecondsSince(local_start);
  for (std::thread& t : callers) t.join();
  const double jukebox_seconds = SecondsSince(stopped);
  EXPECT_EQ(jukebox, kCallers);
  EXPECT_EQ(other, 0) << absl::StrJoin(others, "");
  // While the cluster is known to be stalled, calls fail at once.
  const absl::Time fast_start = absl::Now();
  EXPECT_EQ(StatusOf(Call(nfs3::kCreate, CreateArgs(ceph_root_, name + "-late"))),
            static_cast<uint32_t>(nfs3::NFS3ERR_JUKEBOX));
  const double fast_seconds = SecondsSince(fast_start);
  std::printf(
      "MDS stopped: %d CREATEs answered JUKEBOX within %.1f s; the POSIX export's 4 "
      "calls took %.2f s meanwhile; a further CREATE got JUKEBOX in %.3f s\n",
      kCallers, jukebox_seconds, local_seconds, fast_seconds);

  Resume();
  // Service resumes by itself: the client retries as it would after JUKEBOX.
  const absl::Time resumed = absl::Now();
  EXPECT_EQ(StatusOf(Retry([&] { return Call(nfs3::kGetattr, Args().Opaque(fh).str()); })), 0u);
  // The MDS may still be reconnecting its sessions: a CREATE can meet the
  // [ceph] timeout once more, so it is retried like the GETATTR (UNCHECKED,
  // as a JUKEBOX'd CREATE may still have been carried out late).
  created_.push_back(name + "-after");
  EXPECT_FALSE(NewHandle(Retry([&] {
                 return Call(nfs3::kCreate,
                             CreateArgs(ceph_root_, created_.back(), nfs3::UNCHECKED));
               })).empty());
  std::printf("MDS resumed: CephFS export served again after %.1f s\n", SecondsSince(resumed));
  EXPECT_NE(ReadAfterRestart(fh).find(data), std::string::npos);
}

TEST_F(CephfsFaultTest, StoppedOsdMakesCommitJukeboxAndChangesTheVerifier) {
  const std::string fh = CreateOnCeph(absl::StrCat("osdfault-", getpid()));
  ASSERT_FALSE(fh.empty());
  const std::string data = "written unstable, committed after the OSD came back";
  auto commit = [&] { return Call(nfs3::kCommit, Args().Opaque(fh).U64(0).U32(0).str()); };
  const std::string before = VerifierOf(Write(fh, data, nfs3::UNSTABLE), true);
  ASSERT_EQ(before.size(), 8u);

  Pause("osd");
  // Written again now: the client may have flushed the first write by itself
  // (dirty data ages out after 5 s, and pausing takes a while on a loaded
  // machine), and the COMMIT must find data that only the OSD can take. The
  // write's status does not matter: buffered, or JUKEBOX if the stall reached
  // it. A COMMIT that still found nothing to sync (answered OK: the data was
  // on the OSD before the pause took hold) is tried again after another
  // write, a few times; with the OSD stopped one of them must block.
  const absl::Time stopped = absl::Now();
  uint32_t status = 0;
  int attempts = 0;
  while (status != nfs3::NFS3ERR_JUKEBOX && attempts < 5) {
    ++attempts;
    Write(fh, absl::StrCat(data, " (", attempts, ")"), nfs3::UNSTABLE);
    status = StatusOf(commit());
  }
  EXPECT_EQ(status, static_cast<uint32_t>(nfs3::NFS3ERR_JUKEBOX));
  std::printf("OSD stopped: COMMIT answered JUKEBOX after %.1f s (write+commit %d times)\n",
              SecondsSince(stopped), attempts);
  Resume();

  // The stuck sync's outcome was unknown: the verifier changed, so a client
  // writes its uncommitted data again, then commits.
  const absl::Time resumed = absl::Now();
  const std::string after = VerifierOf(Retry(commit), false);
  ASSERT_EQ(after.size(), 8u);
  EXPECT_NE(after, before);
  EXPECT_EQ(VerifierOf(Write(fh, data, nfs3::UNSTABLE), true), after);
  EXPECT_EQ(VerifierOf(commit(), false), after);
  std::printf("OSD resumed: COMMIT answered again after %.1f s, with a new verifier\n",
              SecondsSince(resumed));
  EXPECT_NE(ReadAfterRestart(fh).find(data), std::string::npos);
}

TEST_F(CephfsFaultTest, RestartWhileMdsStoppedSaysWhatItWaitsForAndServesOnceItIsBack) {
  const std::string fh = CreateOnCeph(absl::StrCat("restart-", getpid()));
  ASSERT_FALSE(fh.empty());
  const std::string data = "acknowledged before the MDS stopped and nfs3d was killed";
  ASSERT_EQ(StatusOf(Write(fh, data, nfs3::FILE_SYNC)), 0u);

  Pause("mds");
  server_.Kill9();
  const size_t log_from = server_.Log().size();
  // The new nfs3d waits for the MDS to end the killed one's session: it must
  // say so (after the [ceph] timeout, 3 s here). The MDS is resumed once it
  // did, or when the log wait gave up (the test then fails).
  bool said = false;
  absl::Time resumed;
  std::thread resumer([&] {
    said = server_.WaitForLog("still waiting after", log_from);
    Resume();
    resumed = absl::Now();
  });
  const bool started = server_.Start();
  resumer.join();
  ASSERT_TRUE(started) << server_.Log().substr(log_from);
  const double serving_seconds = SecondsSince(resumed);
  const std::string log = server_.Log().substr(log_from);
  EXPECT_TRUE(said) << log;
  EXPECT_NE(log.find("ending the previous instance's session"), std::string::npos) << log;
  EXPECT_NE(log.find("MDS_SLOW_METADATA_IO"), std::string::npos) << log;
  EXPECT_NE(log.find("the MDS answered after"), std::string::npos) << log;
  // The predecessor's session was ended, not skipped: its clients' locks
  // and opens are released before this head grants any.
  EXPECT_NE(log.find("ended the session of the previous instance"), std::string::npos) << log;
  std::printf("nfs3d restarted while the MDS was stopped: served %.1f s after the MDS resumed\n",
              serving_seconds);

  c_ = Client();
  EXPECT_EQ(StatusOf(Retry([&] { return Call(nfs3::kGetattr, Args().Opaque(fh).str()); })), 0u);
  EXPECT_NE(ReadAfterRestart(fh).find(data), std::string::npos);
}

// nfs3d exporting the root of a cluster whose monitor address nobody
// listens on, with `ceph_extra` in its [ceph] section; the ceph.conf it
// names is returned. Needs no cluster.
std::string ConfigureUnreachableCluster(NfsdProcess& server, const fs::path& dir,
                                        const std::string& ceph_extra) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string conf = (dir / "ceph.conf").string();
  std::ofstream(conf) << "[global]\nmon host = v2:127.0.0.1:" << test_support::FreePort()
                      << "\nauth client required = none\n";
  server.Configure(dir, "/ceph 127.0.0.1(rw,cephfs=/)\n",
                   absl::StrCat("\n[ceph]\nconf = ", conf, "\n", ceph_extra));
  return conf;
}

// A start that waits (here for a monitor nobody answers, with a 10-minute
// [ceph] timeout; in the soak for a stopped MDS) ends at SIGTERM, as
// `systemctl stop` expects, instead of after the wait.
TEST(CephfsUnreachableTest, SigtermDuringAWaitingStartEndsIt) {
  const fs::path dir = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-cephwait-", getpid());
  NfsdProcess server;
  ConfigureUnreachableCluster(server, dir, "timeout = 600\n");
  server.StartWithoutWaiting();
  // The stop signals are blocked right after the privileges are dropped.
  ASSERT_TRUE(server.WaitForLog("capabilities kept")) << server.Log();
  usleep(1000 * 1000);
  const absl::Time signalled = absl::Now();
  std::optional<int> status = server.SignalAndWaitExit(SIGTERM, kHangGuard);
  ASSERT_TRUE(status.has_value()) << "nfs3d still started after the guard: " << server.Log();
  EXPECT_TRUE(WIFEXITED(*status)) << server.Log();
  EXPECT_NE(server.Log().find("during the start: exiting before serving"), std::string::npos)
      << server.Log();
  std::printf("SIGTERM during a waiting start: exited after %.1f s\n", SecondsSince(signalled));
  fs::remove_all(dir);
}

// A cluster nothing answers for: nfs3d must not start, and must say which
// cluster and which step failed.
TEST(CephfsUnreachableTest, NfsdExitsNonZeroNamingClusterAndStep) {
  const fs::path dir = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-cephdown-", getpid());
  NfsdProcess server;
  const std::string conf =
      ConfigureUnreachableCluster(server, dir, "client_id = gateway\ntimeout = 2\n");
  std::optional<int> status = server.RunUntilExit(kHangGuard);
  ASSERT_TRUE(status.has_value()) << "nfs3d still ran after the guard: " << server.Log();
  ASSERT_TRUE(WIFEXITED(*status)) << server.Log();
  EXPECT_NE(WEXITSTATUS(*status), 0);
  const std::string log = server.Log();
  EXPECT_NE(log.find(conf), std::string::npos) << log;
  EXPECT_NE(log.find("client.gateway"), std::string::npos) << log;
  EXPECT_NE(log.find("failed"), std::string::npos) << log;
  std::printf("nfs3d said: %s\n", log.c_str());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nfs3d::e2e
