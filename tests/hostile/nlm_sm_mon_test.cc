// Issue 48, finding 5: a local user made nfs3d send uid-0 calls from a
// reserved port. SM_MON was checked only for a loopback source; its callback
// (program, version, procedure, 16 private bytes) was then called by nfs3d,
// AUTH_SYS uid 0 from port 1023, on any SM_NOTIFY. Only root on loopback
// (a reserved port; AUTH_NONE as the kernel's lockd sends, or AUTH_SYS uid 0)
// may monitor, and only for the lock manager's program; nfs3d calls back no
// one else.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"

#include "tests/hostile/nlm_hostile.h"

namespace nfs3d::e2e {
namespace {

// The portmapper on 127.0.0.1:111 that a callback starts with: records the
// (program, version) of each GETPORT nfs3d sends and answers none of them.
class GetportRecorder {
 public:
  ~GetportRecorder() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }

  bool Start() {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(111);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return false;
    thread_ = std::thread([this] { Run(); });
    return true;
  }

  // The programs asked for so far, waiting up to `wait` for all of `wanted`.
  std::set<std::pair<uint32_t, uint32_t>> Asked(
      const std::set<std::pair<uint32_t, uint32_t>>& wanted, absl::Duration wait) {
    const absl::Time deadline = absl::Now() + wait;
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        const bool all = std::includes(asked_.begin(), asked_.end(), wanted.begin(), wanted.end());
        if (all || absl::Now() >= deadline) return asked_;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

 private:
  void Run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[2048];
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) continue;
      xdr::Decoder d(reinterpret_cast<const uint8_t*>(buf), static_cast<size_t>(n));
      d.U32();  // xid
      const uint32_t type = d.U32(), rpcvers = d.U32(), prog = d.U32(), vers = d.U32();
      const uint32_t proc = d.U32();
      d.U32();
      d.Opaque(400);  // credential
      d.U32();
      d.Opaque(400);  // verifier
      const uint32_t asked_prog = d.U32(), asked_vers = d.U32();
      if (!d.ok() || type != 0 || rpcvers != 2 || prog != 100000 || vers != 2 || proc != 3) {
        continue;
      }
      absl::MutexLock lock(&mu_);
      asked_.insert({asked_prog, asked_vers});
    }
  }

  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  absl::Mutex mu_;
  std::set<std::pair<uint32_t, uint32_t>> asked_ ABSL_GUARDED_BY(mu_);
};

constexpr char kMonitored[] = "127.0.0.5";  // a server the local lock manager watches

ClientOptions Local(uint32_t uid, bool reserved_port, bool auth_none = false) {
  ClientOptions o = From("127.0.0.1", auth_none);
  o.uid = uid;
  o.reserved_port = reserved_port;
  return o;
}

TEST_F(NlmHostileTest, SmMonOnlyFromLocalRootForTheLockManager) {
  GetportRecorder portmapper;
  ASSERT_TRUE(portmapper.Start());
  struct Attempt {
    const char* who;
    ClientOptions from;
    uint32_t prog, vers;  // the callback asked for; vers tells them apart
  };
  const Attempt attempts[] = {
      {"a local user", Local(1000, false), nlm::kProgram, 101},
      {"a local user on a reserved port", Local(1000, true), nlm::kProgram, 102},
      {"uid 0 from an unprivileged port", Local(0, false), nlm::kProgram, 103},
      {"AUTH_NONE from an unprivileged port", Local(0, false, true), nlm::kProgram, 104},
      {"root for another program (NFS)", Local(0, true), nfs3::kProgram, 3},
      {"the kernel's lockd (AUTH_NONE, reserved port)", Local(0, true, true), nlm::kProgram, 3},
      {"a lock manager as root", Local(0, true), nlm::kProgram, 4},
  };
  const std::set<std::pair<uint32_t, uint32_t>> legitimate = {{nlm::kProgram, 3},
                                                              {nlm::kProgram, 4}};
  for (const Attempt& a : attempts) {
    nsm::mon m;
    m.id.mon_name = kMonitored;
    m.id.id = {"localhost", static_cast<int32_t>(a.prog), static_cast<int32_t>(a.vers), 16};
    m.priv.fill(0xab);
    NfsReply r = Call(a.from, nsm::kProgram, nsm::kVersion, nsm::kMon, xdr::EncodeToString(m));
    ASSERT_TRUE(r.ok && r.reply_stat == 0 && r.accept_stat == 0) << a.who;
    const bool allowed = legitimate.count({a.prog, a.vers}) != 0;
    EXPECT_EQ(r.status, allowed ? nsm::STAT_SUCC : nsm::STAT_FAIL) << a.who;
  }
  // The monitored server reboots and says so from its own address.
  ASSERT_TRUE(Notify(From(kMonitored), kMonitored, 3));
  // Bounded wait for the lock manager's callback; nothing else was asked for.
  EXPECT_EQ(portmapper.Asked(legitimate, absl::Seconds(60)), legitimate);
}

}  // namespace
}  // namespace nfs3d::e2e
