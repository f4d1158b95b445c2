// The NLM and NSM callers of the hostile suite (issue 48, findings 2 and 5):
// an nfs3d exporting one directory to 127.0.0.1 (client A, "host-a") and
// 127.0.0.2 (another client of the export), in a network namespace of the
// test's own (so nothing on the machine's port 111 answers nfs3d's
// callbacks), and raw NLM/NSM calls from any loopback address, credential
// and port.
#ifndef NFS3D_TESTS_HOSTILE_NLM_HOSTILE_H_
#define NFS3D_TESTS_HOSTILE_NLM_HOSTILE_H_

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "nlm/nlm4_codec.h"
#include "nlm/nsm_codec.h"
#include "tests/integration/e2e_harness.h"
#include "tests/integration/nlm_callback_listener.h"
#include "xdr/encode_to_string.h"

namespace nfs3d::e2e {

inline constexpr char kHostA[] = "host-a";
inline constexpr char kAddressA[] = "127.0.0.1";
inline constexpr char kOtherClient[] = "127.0.0.2";  // a client of the export too
inline constexpr char kStranger[] = "127.0.0.3";     // no access to the export

// Who calls: a source address, and by default AUTH_NONE from a port above 1023.
inline ClientOptions From(const std::string& ip, bool auth_none = true) {
  ClientOptions o;
  o.transport = rpc::Transport::kTcp;
  o.local_ip = ip;
  o.auth_none = auth_none;
  return o;
}

class NlmHostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PrivateLoopback()) GTEST_SKIP() << "needs a network namespace of its own (root)";
    dir_ = FreshTestDir("hostile-nlm");
    const std::string exports = (dir_ / "export").string() + " " + kAddressA +
                                "(rw,insecure,no_root_squash) " + kOtherClient + "(rw,insecure)\n";
    server_.Configure(dir_, exports);
    ASSERT_TRUE(server_.Start()) << server_.Log();
    std::unique_ptr<RawClient> c = RawClient::Open(server_.port(), From(kAddressA, false));
    ASSERT_NE(c, nullptr);
    const std::string root = Mount(*c, (dir_ / "export").string());
    ASSERT_FALSE(root.empty());
    fh_ = NewHandle(Nfs(*c, nfs3::kCreate, CreateArgs(root, "locked")));
    ASSERT_FALSE(fh_.empty());
  }

  void TearDown() override {
    if (dir_.empty()) return;
    server_.Stop();
    fs::remove_all(dir_);
  }

  // A's lock as its lock manager names it (the owner TEST used to hand out).
  nlm::nlm4_lock LockOf(const std::string& host, uint64_t offset, uint64_t len) const {
    nlm::nlm4_lock l;
    l.caller_name = host;
    l.fh = fh_;
    l.oh = "42@" + host;
    l.svid = 42;
    l.l_offset = offset;
    l.l_len = len;
    return l;
  }

  nlm::nlm4_lockargs LockArgs(const std::string& host, uint64_t offset, uint64_t len,
                              bool block = false, int32_t state = 3) const {
    nlm::nlm4_lockargs args;
    args.cookie = "c";
    args.block = block;
    args.exclusive = true;
    args.alock = LockOf(host, offset, len);
    args.state = state;
    return args;
  }

  // An NLM4 or NSM call over a new connection; the raw reply.
  NfsReply Call(const ClientOptions& from, uint32_t prog, uint32_t vers, uint32_t proc,
                const std::string& args) {
    std::unique_ptr<RawClient> c = RawClient::Open(server_.port(), from);
    if (c == nullptr) return {};
    return ToNfsReply(c->Call(prog, vers, proc, args));
  }

  // The nlm4_stats of an NLM4 call answering nlm4_res (after its cookie).
  uint32_t NlmStatus(const ClientOptions& from, uint32_t proc, const std::string& args) {
    NfsReply r = Call(from, nlm::kProgram, nlm::kVersion4, proc, args);
    if (!r.ok || r.reply_stat != 0 || r.accept_stat != 0) return 0xfffffffeu;
    xdr::Decoder d(Span(r.results));
    d.Opaque(nlm::kMaxNetobj);
    return d.U32();
  }

  uint32_t Lock(const ClientOptions& from, const nlm::nlm4_lockargs& args) {
    return NlmStatus(from, nlm::kLock, xdr::EncodeToString(args));
  }
  uint32_t Unlock(const ClientOptions& from, const nlm::nlm4_lock& alock) {
    nlm::nlm4_unlockargs args;
    args.cookie = "u";
    args.alock = alock;
    return NlmStatus(from, nlm::kUnlock, xdr::EncodeToString(args));
  }
  uint32_t Cancel(const ClientOptions& from, const nlm::nlm4_lockargs& lock) {
    nlm::nlm4_cancargs args;
    args.cookie = lock.cookie;
    args.block = lock.block;
    args.exclusive = lock.exclusive;
    args.alock = lock.alock;
    return NlmStatus(from, nlm::kCancel, xdr::EncodeToString(args));
  }
  // FREE_ALL and SM_NOTIFY answer nothing but an accepted reply.
  bool FreeAll(const ClientOptions& from, const std::string& name, int32_t state) {
    NfsReply r = Call(from, nlm::kProgram, nlm::kVersion4, nlm::kFreeAll,
                      xdr::EncodeToString(nlm::nlm4_notify{name, state}));
    return r.ok && r.reply_stat == 0 && r.accept_stat == 0;
  }
  bool Notify(const ClientOptions& from, const std::string& mon_name, int32_t state) {
    NfsReply r = Call(from, nsm::kProgram, nsm::kVersion, nsm::kNotify,
                      xdr::EncodeToString(nsm::stat_chge{mon_name, state}));
    return r.ok && r.reply_stat == 0 && r.accept_stat == 0;
  }

  // Whether a process here can lock [offset, offset+len) of the file: an NLM
  // lock is an OFD lock on the file itself, so this sees whether it is held.
  bool LocallyLockable(off_t offset, off_t len) {
    int fd = open((dir_ / "export" / "locked").c_str(), O_RDWR);
    if (fd < 0) return false;
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = offset;
    fl.l_len = len;
    bool ok = fcntl(fd, F_OFD_SETLK, &fl) == 0;
    close(fd);
    return ok;
  }

  // A holds an exclusive lock on [0, 100) from its own address.
  void LockAsA(int32_t state = 3) {
    ASSERT_EQ(Lock(From(kAddressA, false), LockArgs(kHostA, 0, 100, false, state)),
              nlm::NLM4_GRANTED);
    ASSERT_FALSE(LocallyLockable(0, 100));
  }

  fs::path dir_;
  NfsdProcess server_;
  std::string fh_;
};

}  // namespace nfs3d::e2e

#endif  // NFS3D_TESTS_HOSTILE_NLM_HOSTILE_H_
