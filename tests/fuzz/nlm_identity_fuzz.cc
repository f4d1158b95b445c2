// libFuzzer target for NLM lock state bound to the client's identity
// (nlm/nlm_service.h: a host is its caller_name and the address it is bound
// to): the input is a sequence of LOCK (and NM_LOCK), UNLOCK, CANCEL, TEST,
// FREE_ALL, SM_NOTIFY (through the NSM program's own table, so "root on
// loopback" is decided by the code) and the client-side messages such as
// GRANTED_RES (through the NLM program's table), from a few names and
// addresses, against the real NlmService. Its GRANTED callbacks reach a fake
// client (tests/nlm/fake_peer_caller.h) that accepts, refuses or does not
// answer, as the input says. A small
// model keeps the binding of each name (address, last NSM state) and checks
// after every call:
//  - a lock of a name bound to address a is never released, nor made shared,
//    by a call from another address (SM_NOTIFY from root on loopback aside,
//    and a GRANTED callback its own host refused); UNLOCK, CANCEL and
//    FREE_ALL from another address change nothing at all;
//  - LOCK naming a name that holds locks from another address is refused
//    with NLM4_DENIED_NOLOCKS; a granted LOCK leaves the owner holding the
//    range in that mode, and only a conflict denies or blocks one;
//  - SM_NOTIFY releases exactly the hosts HostRebooted documents: the named
//    one if bound to the sender (or from a local statd), else those bound to
//    the sender, and only with a newer NSM state (unless from a local statd);
//  - TEST changes nothing, reports a conflict exactly when one exists and
//    gives no owner handle; GRANTED callbacks go to the waiter's address.
#include <arpa/inet.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/auth_flavor.h"
#include "common/log.h"
#include "nlm/nlm4_codec.h"
#include "nlm/nlm_program.h"
#include "nlm/nlm_service.h"
#include "nlm/nsm_codec.h"
#include "nlm/nsm_program.h"
#include "nlm/peer_caller.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/nlm/fake_peer_caller.h"
#include "xdr/buffer_chain.h"
#include "xdr/encode_to_string.h"

namespace nfs3d {
namespace {

using nlm::LockOwner;
using nlm::NlmService;

// Where calls come from: the model's address (`who`: two forms of one IPv4
// address are one), 127.0.0.1 (a local statd when root from a reserved port).
struct Source {
  const char* text;
  int who;
};
constexpr Source kSources[] = {{"192.0.2.1", 0},
                               {"::ffff:192.0.2.1", 0},
                               {"192.0.2.2", 1},
                               {"2001:db8::1", 2},
                               {"127.0.0.1", 3}};
constexpr int kLoopback = 3;
const char* const kNames[] = {"host-a", "host-b", "host-c", "192.0.2.2"};
const char* const kFiles[] = {"f0", "f1"};

sockaddr_storage Address(const char* text, uint16_t port) {
  sockaddr_storage s{};
  if (!nlm::ParseAddress(text, &s)) std::abort();
  if (s.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in&>(s).sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6&>(s).sin6_port = htons(port);
  }
  return s;
}

// Which model address a sockaddr is (-1: none of them).
int WhoIs(const sockaddr_storage& peer) {
  for (const Source& s : kSources) {
    sockaddr_storage a = Address(s.text, 0);
    if (a.ss_family != peer.ss_family) continue;
    const bool same =
        a.ss_family == AF_INET
            ? std::memcmp(&reinterpret_cast<sockaddr_in&>(a).sin_addr,
                          &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, 4) == 0
            : std::memcmp(&reinterpret_cast<sockaddr_in6&>(a).sin6_addr,
                          &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, 16) == 0;
    if (same) return s.who;
  }
  return -1;
}

// Every lock, by its owner's name: (file, lock).
using Locks = std::map<std::string, std::vector<std::pair<std::string, nlm::Lock>>>;

Locks Snapshot(const NlmService& service) {
  Locks out;
  for (const char* file : kFiles) {
    for (const nlm::Lock& l : service.LocksOf(file)) out[l.owner.host].push_back({file, l});
  }
  return out;
}

bool Overlap(uint64_t a1, uint64_t a2, uint64_t b1, uint64_t b2) { return a1 <= b2 && b1 <= a2; }

// True if `owner` holds all of [first, last] of file in `locks`, exclusively
// if `exclusive` (else in any mode).
bool Covered(const Locks& locks, const std::string& file, const LockOwner& owner, uint64_t first,
             uint64_t last, bool exclusive) {
  auto it = locks.find(owner.host);
  if (it == locks.end()) return false;
  uint64_t next = first;  // the first byte not yet seen covered
  for (bool progress = true; progress;) {
    progress = false;
    for (const auto& [f, l] : it->second) {
      if (f != file || !(l.owner == owner) || (exclusive && !l.exclusive)) continue;
      if (l.first <= next && next <= l.last) {
        if (l.last >= last) return true;
        next = l.last + 1;
        progress = true;
      }
    }
  }
  return false;
}

// Covered, and in exactly that mode: no lock of owner in the range has the other.
bool HoldsExactly(const Locks& locks, const std::string& file, const LockOwner& owner,
                  uint64_t first, uint64_t last, bool exclusive) {
  if (!Covered(locks, file, owner, first, last, exclusive)) return false;
  for (const auto& [f, l] : locks.at(owner.host)) {
    if (f == file && l.owner == owner && Overlap(first, last, l.first, l.last) &&
        l.exclusive != exclusive) {
      return false;
    }
  }
  return true;
}

// The conflicting lock another owner holds, if any.
std::optional<nlm::Lock> Conflict(const Locks& locks, const std::string& file,
                                  const LockOwner& owner, uint64_t first, uint64_t last,
                                  bool exclusive) {
  for (const auto& [name, held] : locks) {
    for (const auto& [f, l] : held) {
      if (f == file && !(l.owner == owner) && Overlap(first, last, l.first, l.last) &&
          (exclusive || l.exclusive)) {
        return l;
      }
    }
  }
  return std::nullopt;
}

struct Call {
  nlm::nlm4_lock alock;
  uint64_t first = 0, last = 0;
  bool exclusive = false;
  int who = 0;
  uint16_t port = 0;
  rpc::TransportInfo transport;
  rpc::CallContext ctx;
};

class Driver {
 public:
  Driver()
      : service_(Options(), Resolve, &client_, nullptr),
        nsm_(&service_),
        nlm_program_(nlm::MakeNlmProgram(&service_)),
        nsm_program_(nsm::MakeNsmProgram(&nsm_)) {
    service_.Start(/*grace=*/false);
  }

  void Run(FuzzedDataProvider& in) {
    for (int ops = 0; ops < 200 && in.remaining_bytes() > 0; ++ops) {
      // The waiting clients accept GRANTED, refuse it, or do not answer.
      answer_ = in.ConsumeIntegralInRange(0, 2);
      client_.set_granted_answer(answer_ == 1 ? nlm::NLM4_DENIED : nlm::NLM4_GRANTED);
      client_.set_reachable(answer_ != 2);
      Call c = MakeCall(in);
      before_ = Snapshot(service_);
      blocked_before_ = service_.blocked_count();
      switch (in.ConsumeIntegralInRange(0, 6)) {
        case 0:
          Lock(in, c);
          break;
        case 1:
          Unlock(c);
          break;
        case 2:
          Cancel(in, c);
          break;
        case 3:
          Test(c);
          break;
        case 4:
          FreeAll(c);
          break;
        case 5:
          Notify(in, c);
          break;
        case 6:
          ClientMessage(in, c);
          break;
      }
    }
  }

 private:
  struct Host {
    int who = 0;
    int32_t nsm_state = 0;
  };

  static nlm::NlmOptions Options() {
    nlm::NlmOptions o;
    o.callback_threads = 1;
    o.notify_attempts = 0;
    return o;
  }
  static nlm::nlm4_stats Resolve(const rpc::CallContext&, const std::string& fh, std::string* key) {
    *key = fh;
    return nlm::NLM4_GRANTED;
  }

  Call MakeCall(FuzzedDataProvider& in) {
    Call c;
    const Source& src = kSources[in.ConsumeIntegralInRange<size_t>(0, std::size(kSources) - 1)];
    c.who = src.who;
    c.transport.transport = rpc::Transport::kTcp;
    c.port = in.ConsumeBool() ? 700 : 40000;
    c.transport.peer = Address(src.text, c.port);
    c.transport.local = Address("192.0.2.100", 4045);
    switch (in.ConsumeIntegralInRange(0, 2)) {
      case 0:
        c.ctx.cred.flavor = kAuthNone;
        break;
      case 1:
        c.ctx.cred.flavor = kAuthSys;
        c.ctx.cred.uid = 0;
        break;
      default:
        c.ctx.cred.flavor = kAuthSys;
        c.ctx.cred.uid = 1000;
    }
    c.ctx.vers = nlm::kVersion4;
    c.ctx.transport = &c.transport;
    nlm::nlm4_lock& l = c.alock;
    l.caller_name = kNames[in.ConsumeIntegralInRange<size_t>(0, std::size(kNames) - 1)];
    l.fh = kFiles[in.ConsumeBool() ? 1 : 0];
    l.svid = in.ConsumeIntegralInRange(1, 2);
    l.oh = l.caller_name + ":" + std::to_string(l.svid);
    l.l_offset = in.ConsumeIntegralInRange(0, 15);
    l.l_len = in.ConsumeIntegralInRange(0, 8);  // 0: to the end
    nlm::NlmRange(l.l_offset, l.l_len, &c.first, &c.last);
    c.exclusive = in.ConsumeBool();
    return c;
  }

  static LockOwner OwnerOf(const Call& c) {
    return {c.alock.caller_name, c.alock.svid, c.alock.oh};
  }
  // The model address `name` is bound to; -1: not bound (unknown here).
  int BoundTo(const std::string& name) const {
    auto it = hosts_.find(name);
    return it == hosts_.end() ? -1 : it->second.who;
  }

  void Lock(FuzzedDataProvider& in, const Call& c);
  void Unlock(const Call& c);
  void Cancel(FuzzedDataProvider& in, const Call& c);
  void Test(const Call& c);
  void FreeAll(const Call& c);
  void Notify(FuzzedDataProvider& in, const Call& c);
  void ClientMessage(FuzzedDataProvider& in, const Call& c);
  // After a call from `who` (-1: from root on loopback, which may release
  // anything) that released `released`: the callbacks went to the waiters'
  // addresses, and no other name lost a lock or had one made shared.
  void CheckAfter(int who, const std::set<std::string>& released = {});
  // Nothing changed (a call from an address the name is not bound to).
  void CheckUnchanged() {
    FUZZ_CHECK(Snapshot(service_) == before_);
    FUZZ_CHECK(service_.blocked_count() == blocked_before_);
  }

  nlm::FakePeerCaller client_;
  int answer_ = 0;         // the clients' answer to GRANTED in this call
  size_t calls_seen_ = 0;  // of client_.calls()
  NlmService service_;
  nsm::NsmService nsm_;
  rpc::Program nlm_program_;
  rpc::Program nsm_program_;
  std::map<std::string, Host> hosts_;  // the model: NlmService's bindings
  Locks before_;
  size_t blocked_before_ = 0;
};

void Driver::CheckAfter(int who, const std::set<std::string>& released) {
  service_.DrainCallbacks();
  std::set<std::string> refused;
  const std::vector<nlm::PeerCall> calls = client_.calls();
  for (; calls_seen_ < calls.size(); ++calls_seen_) {
    const nlm::PeerCall& call = calls[calls_seen_];
    nlm::nlm4_testargs args;
    xdr::Decoder d(reinterpret_cast<const uint8_t*>(call.args.data()), call.args.size());
    FUZZ_CHECK(call.proc == nlm::kGranted && xdr::Decode(d, &args));
    // A waiter's name holds state, so it is bound, and not released: every
    // name a call releases goes before any waiter is granted.
    const std::string& name = args.alock.caller_name;
    FUZZ_CHECK(WhoIs(call.peer) == BoundTo(name));
    if (answer_ == 1) refused.insert(name);
  }
  const Locks after = Snapshot(service_);
  for (const auto& [name, held] : after) FUZZ_CHECK(BoundTo(name) != -1);
  for (const std::string& name : released) FUZZ_CHECK(after.count(name) == 0);
  for (const auto& [name, held] : before_) {
    if (BoundTo(name) == who || released.count(name) != 0 || refused.count(name) != 0) continue;
    for (const auto& [file, l] : held) {
      FUZZ_CHECK(Covered(after, file, l.owner, l.first, l.last, l.exclusive));
    }
  }
}

void Driver::Lock(FuzzedDataProvider& in, const Call& c) {
  nlm::nlm4_lockargs args;
  args.cookie = "l";
  args.block = in.ConsumeBool();
  args.exclusive = c.exclusive;
  args.alock = c.alock;
  args.state = in.ConsumeIntegralInRange(0, 9);
  const bool monitored = in.ConsumeBool();  // false: NM_LOCK
  const nlm::nlm4_res res = service_.Lock(c.ctx, args, monitored);
  const std::string& name = c.alock.caller_name;
  const bool held_elsewhere = before_.count(name) != 0 && BoundTo(name) != c.who;
  if (held_elsewhere) FUZZ_CHECK(res.stat == nlm::NLM4_DENIED_NOLOCKS);
  const bool conflict =
      Conflict(before_, c.alock.fh, OwnerOf(c), c.first, c.last, c.exclusive).has_value();
  switch (res.stat) {
    case nlm::NLM4_GRANTED:
      FUZZ_CHECK(!conflict);
      FUZZ_CHECK(
          HoldsExactly(Snapshot(service_), c.alock.fh, OwnerOf(c), c.first, c.last, c.exclusive));
      break;
    case nlm::NLM4_DENIED:
    case nlm::NLM4_BLOCKED:
    case nlm::NLM4_DEADLCK:
      FUZZ_CHECK(conflict);
      break;
    default:
      FUZZ_CHECK(res.stat == nlm::NLM4_DENIED_NOLOCKS);
  }
  if (res.stat != nlm::NLM4_DENIED_NOLOCKS) {  // NoteHost bound the name to the caller
    auto [it, added] = hosts_.try_emplace(name);
    if (!added && it->second.who != c.who) it->second.nsm_state = 0;
    it->second.who = c.who;
    if (args.state != 0) it->second.nsm_state = args.state;
  }
  // A LOCK grants no waiter: nobody else's locks change at all.
  Locks others_before = before_;
  Locks others_after = Snapshot(service_);
  others_before.erase(name);
  others_after.erase(name);
  FUZZ_CHECK(others_before == others_after);
  CheckAfter(c.who);
}

void Driver::Unlock(const Call& c) {
  nlm::nlm4_unlockargs args;
  args.cookie = "u";
  args.alock = c.alock;
  const nlm::nlm4_res res = service_.Unlock(c.ctx, args);
  if (BoundTo(c.alock.caller_name) != c.who) {
    FUZZ_CHECK(res.stat == nlm::NLM4_GRANTED);  // as knfsd: the caller holds no such lock
    CheckUnchanged();
  }
  CheckAfter(c.who);
}

void Driver::Cancel(FuzzedDataProvider& in, const Call& c) {
  nlm::nlm4_cancargs args;
  args.cookie = "c";
  args.block = in.ConsumeBool();
  args.exclusive = c.exclusive;
  args.alock = c.alock;
  const nlm::nlm4_res res = service_.Cancel(c.ctx, args);
  if (BoundTo(c.alock.caller_name) != c.who) {
    FUZZ_CHECK(res.stat == nlm::NLM4_DENIED);
    CheckUnchanged();
  }
  CheckAfter(c.who);
}

void Driver::Test(const Call& c) {
  nlm::nlm4_testargs args;
  args.cookie = "t";
  args.exclusive = c.exclusive;
  args.alock = c.alock;
  const nlm::nlm4_testres res = service_.Test(c.ctx, args);
  CheckUnchanged();
  const LockOwner owner = OwnerOf(c);
  FUZZ_CHECK((res.stat == nlm::NLM4_DENIED) ==
             Conflict(before_, c.alock.fh, owner, c.first, c.last, c.exclusive).has_value());
  if (res.stat != nlm::NLM4_DENIED) return;
  FUZZ_CHECK(res.holder.oh.empty());  // no owner handle to name the holder with
  // The holder is a conflicting lock of another owner, as it is.
  bool found = false;
  for (const auto& [name, held] : before_) {
    for (const auto& [file, l] : held) {
      uint64_t offset = 0, len = 0;
      nlm::ToNlmRange(l.first, l.last, &offset, &len);
      found |= file == c.alock.fh && !(l.owner == owner) && l.exclusive == res.holder.exclusive &&
               l.owner.svid == res.holder.svid && offset == res.holder.l_offset &&
               len == res.holder.l_len && Overlap(c.first, c.last, l.first, l.last) &&
               (c.exclusive || l.exclusive);
    }
  }
  FUZZ_CHECK(found);
}

void Driver::FreeAll(const Call& c) {
  const std::string& name = c.alock.caller_name;
  service_.FreeAll(c.ctx, name);
  if (BoundTo(name) != c.who) {
    CheckUnchanged();
    CheckAfter(c.who);
    return;
  }
  hosts_.erase(name);
  CheckAfter(c.who, {name});
}

// NSM states compared as serial numbers (they only grow).
bool Newer(int32_t state, int32_t than) {
  return static_cast<int32_t>(static_cast<uint32_t>(state) - static_cast<uint32_t>(than)) > 0;
}

void Driver::Notify(FuzzedDataProvider& in, const Call& c) {
  const nsm::stat_chge change{c.alock.caller_name, in.ConsumeIntegralInRange(0, 9)};
  const std::string args = xdr::EncodeToString(change);
  xdr::Decoder decoder(reinterpret_cast<const uint8_t*>(args.data()), args.size());
  xdr::BufferChain chain;
  xdr::Encoder results(&chain);
  const rpc::Procedure& proc = nsm_program_.versions[0].procedures[nsm::kNotify];
  proc.run(nsm_program_.service, c.ctx, decoder, results);
  // The model of HostRebooted: a local statd is root from a reserved port on
  // loopback (AUTH_NONE, as the kernel's lockd calls, or AUTH_SYS uid 0).
  const rpc::Credential& cred = c.ctx.cred;
  const bool trusted = c.who == kLoopback && c.port < 1024 &&
                       (cred.flavor == kAuthNone || (cred.flavor == kAuthSys && cred.uid == 0));
  std::vector<std::string> names;
  if (hosts_.count(change.mon_name) != 0 && (trusted || BoundTo(change.mon_name) == c.who)) {
    names.push_back(change.mon_name);
  } else {
    for (const auto& [name, host] : hosts_) {
      if (host.who == c.who) names.push_back(name);
    }
  }
  std::set<std::string> released;
  for (const std::string& name : names) {
    const int32_t known = hosts_[name].nsm_state;
    if (!trusted && known != 0 && !Newer(change.state, known)) continue;
    released.insert(name);
    hosts_.erase(name);
  }
  CheckAfter(trusted ? -1 : c.who, released);
}

// GRANTED_MSG and the *_RES messages (GRANTED_RES above all) are accepted
// and ignored, whoever sends them.
void Driver::ClientMessage(FuzzedDataProvider& in, const Call& c) {
  const uint32_t proc = in.ConsumeIntegralInRange<uint32_t>(nlm::kGrantedMsg, nlm::kGrantedRes);
  const rpc::Procedure& row = nlm_program_.versions[2].procedures[proc];
  xdr::Decoder decoder(nullptr, 0);
  xdr::BufferChain chain;
  xdr::Encoder results(&chain);
  row.run(nlm_program_.service, c.ctx, decoder, results);
  CheckUnchanged();
}

void Fuzz(const uint8_t* data, size_t size) {
  static const bool quiet = [] {  // SM_NOTIFY and refusals log at info and warning
    log::SetLevel(log::Level::kError);
    return true;
  }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  Driver driver;
  driver.Run(in);
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::Fuzz(data, size);
  return 0;
}
