// libFuzzer target for fair admission (rpc/tcp_server.h, rpc/tcp_admission.cc):
// the input is a sequence of operations from a few client addresses against
// the real InflightLimit (server-wide call slots, a share per client) and the
// real TcpContext's accounting of records begun and not finished, each
// checked against a small model of what the code promises:
//  - TryAcquire succeeds exactly when the caller's client (its bucket: two
//    addresses of one bucket share its room, as documented) holds fewer than
//    per_client slots and the server fewer than limit. So a client holding
//    none gets a slot whenever the others leave one free; the others' shares
//    together may take them all (per_client * clients may exceed limit).
//    count() is what is held, never above limit; a Release gives back one
//    slot of that client; once all are released every client gets its whole
//    share again (nothing leaked).
//  - HoldUnfinished refuses exactly a growth that would take the records of
//    the client's connections past max(unfinished_per_client,
//    max_record_size) (by client address here, not by bucket); Remove gives
//    back what the connection held; a removed connection holds nothing; once
//    all are gone each client may hold its whole share again. Add refuses at
//    max_connections.
// Not driven here: which idle connection Add closes at max_connections; that
// needs live connections (TcpConnection::Idle, CloseIfIdle). These fake
// connections are never alive, so none is idle and Add refuses instead.
#include <arpa/inet.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rpc/tcp_server.h"
#include "tests/fuzz/fuzz_check.h"

namespace nfs3d {
namespace {

using rpc::InflightLimit;
using rpc::TcpConnection;
using rpc::TcpContext;

sockaddr_storage Address(const char* text) {
  sockaddr_storage s{};
  if (std::strchr(text, ':') == nullptr) {
    auto& a = reinterpret_cast<sockaddr_in&>(s);
    a.sin_family = AF_INET;
    inet_pton(AF_INET, text, &a.sin_addr);
  } else {
    auto& a = reinterpret_cast<sockaddr_in6&>(s);
    a.sin6_family = AF_INET6;
    inet_pton(AF_INET6, text, &a.sin6_addr);
  }
  return s;
}

// The model's clients: `host` says which addresses are one client (an IPv4
// address in either form, an IPv6 /64), `unit` which share one room (a
// bucket: two of them collide on purpose).
constexpr size_t kUnits = 4;
constexpr size_t kHosts = 5;
struct Peer {
  sockaddr_storage addr;
  size_t host;
  size_t unit;
};

std::vector<Peer> MakePeers() {
  std::vector<Peer> peers = {
      {Address("192.0.2.1"), 0, 0},
      {Address("::ffff:192.0.2.1"), 0, 0},
      {Address("192.0.2.2"), 1, 1},
      {Address("2001:db8:1:2::1"), 2, 2},
      {Address("2001:db8:1:2:ffff::9"), 2, 2},  // the same /64
      {Address("2001:db8:1:3::1"), 3, 3},
  };
  // Another host in 192.0.2.2's bucket.
  const size_t bucket = InflightLimit::BucketOf(InflightLimit::ClientOf(peers[2].addr));
  for (uint32_t a = 0x0a000001;; ++a) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(a);
    sockaddr_storage s{};
    std::memcpy(&s, &in, sizeof(in));
    if (InflightLimit::BucketOf(InflightLimit::ClientOf(s)) == bucket) {
      peers.push_back({s, 4, 1});
      break;
    }
  }
  // The setting itself holds: ClientOf tells the hosts apart, BucketOf puts
  // them in the units.
  for (const Peer& p : peers) {
    for (const Peer& q : peers) {
      const uint64_t cp = InflightLimit::ClientOf(p.addr), cq = InflightLimit::ClientOf(q.addr);
      if ((p.host == q.host) != (cp == cq)) std::abort();
      if ((p.unit == q.unit) != (InflightLimit::BucketOf(cp) == InflightLimit::BucketOf(cq))) {
        std::abort();
      }
    }
  }
  return peers;
}

const std::vector<Peer>& Peers() {
  static const std::vector<Peer> peers = MakePeers();
  return peers;
}

// InflightLimit and its model.
struct Slots {
  Slots(size_t limit, size_t per_client)
      : real(limit, per_client),
        limit(limit == 0 ? 1 : limit),
        share(per_client == 0 || per_client > this->limit ? this->limit : per_client) {}

  void Acquire(size_t peer) {
    const Peer& p = Peers()[peer];
    const bool expect = held[p.unit] < share && total < limit;
    FUZZ_CHECK(real.TryAcquire(InflightLimit::ClientOf(p.addr)) == expect);
    if (expect) {
      ++held[p.unit];
      ++total;
      holders.push_back(peer);
    } else {
      ++refused;
    }
  }
  // Releases holders[i], through any address of the same client.
  void Release(size_t i, bool other_form) {
    size_t peer = holders[i];
    if (other_form && (peer == 0 || peer == 3)) ++peer;  // ::ffff:192.0.2.1; the same /64
    real.Release(InflightLimit::ClientOf(Peers()[peer].addr));
    --held[Peers()[peer].unit];
    --total;
    holders.erase(holders.begin() + static_cast<ptrdiff_t>(i));
  }
  void Check() const {
    FUZZ_CHECK(real.count() == total);
    FUZZ_CHECK(total <= limit);
    FUZZ_CHECK(real.refused() == refused);
    for (size_t h : held) FUZZ_CHECK(h <= share);
  }
  // After every holder released: nothing is held, and each client gets its
  // whole share again.
  void CheckDrained() {
    while (!holders.empty()) Release(holders.size() - 1, false);
    Check();
    for (size_t peer = 0; peer < Peers().size(); ++peer) {
      size_t got = 0;
      while (got <= share && real.TryAcquire(InflightLimit::ClientOf(Peers()[peer].addr))) ++got;
      FUZZ_CHECK(got == share);
      for (size_t i = 0; i < got; ++i) real.Release(InflightLimit::ClientOf(Peers()[peer].addr));
      FUZZ_CHECK(real.count() == 0);
    }
  }

  InflightLimit real;
  const size_t limit;
  const size_t share;
  size_t total = 0;
  uint64_t refused = 0;
  std::array<size_t, kUnits> held{};
  std::vector<size_t> holders;  // the peer of each slot held
};

// TcpContext's per-client accounting and its model. Connections are fake
// (distinct addresses, never dereferenced by the accounting).
struct Unfinished {
  explicit Unfinished(const rpc::TcpOptions& options)
      : real(nullptr, rpc::WorkerPools{}, options),
        max_connections(options.max_connections),
        share(std::max(options.unfinished_per_client, options.max_record_size)) {}

  struct Conn {
    TcpConnection* id;
    size_t host;  // TcpContext counts by client, not by bucket
    size_t held = 0;
    bool open = true;
  };

  // A fresh fake connection; kIds leaves some for CheckDrained.
  TcpConnection* NewId() { return reinterpret_cast<TcpConnection*>(&ids[next_id++]); }

  void Add(size_t peer) {
    if (next_id >= kIds - 16) return;
    const Peer& p = Peers()[peer];
    TcpConnection* id = NewId();
    const bool expect = open < max_connections;
    FUZZ_CHECK(real.Add(id, InflightLimit::ClientOf(p.addr), {}) == expect);
    if (!expect) return;
    conns.push_back({id, p.host});
    ++open;
  }
  void Remove(size_t i) {
    Conn& c = conns[i];
    real.Remove(c.id);
    if (!c.open) return;
    unfinished[c.host] -= c.held;
    c.held = 0;
    c.open = false;
    --open;
  }
  void Hold(size_t i, size_t bytes) {
    Conn& c = conns[i];
    if (!c.open) {  // closed: holds nothing, always true
      FUZZ_CHECK(real.HoldUnfinished(c.id, bytes));
      return;
    }
    const bool expect = bytes <= c.held || unfinished[c.host] - c.held + bytes <= share;
    FUZZ_CHECK(real.HoldUnfinished(c.id, bytes) == expect);
    if (!expect) return;
    unfinished[c.host] = unfinished[c.host] - c.held + bytes;
    c.held = bytes;
  }
  void Check() const {
    FUZZ_CHECK(real.size() == open);
    for (size_t u : unfinished) FUZZ_CHECK(u <= share);
  }
  // After every connection went: none is open, and a new connection of each
  // client may hold the whole share.
  void CheckDrained() {
    for (size_t i = 0; i < conns.size(); ++i) Remove(i);
    FUZZ_CHECK(real.size() == 0);
    for (const Peer& p : Peers()) {
      TcpConnection* id = NewId();
      FUZZ_CHECK(real.Add(id, InflightLimit::ClientOf(p.addr), {}));
      FUZZ_CHECK(real.HoldUnfinished(id, share));
      FUZZ_CHECK(!real.HoldUnfinished(id, share + 1));
      real.Remove(id);
    }
    FUZZ_CHECK(real.size() == 0);
  }

  TcpContext real;
  const size_t max_connections;
  const size_t share;
  size_t open = 0;
  std::array<size_t, kHosts> unfinished{};
  std::vector<Conn> conns;
  static constexpr size_t kIds = 512;
  std::array<std::max_align_t, kIds> ids{};
  size_t next_id = 0;
};

void Fuzz(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const size_t limit = in.ConsumeIntegralInRange<size_t>(0, 40);
  Slots slots(limit, in.ConsumeIntegralInRange<size_t>(0, 48));
  FUZZ_CHECK(slots.real.limit() == slots.limit && slots.real.per_client() == slots.share);
  rpc::TcpOptions options;
  options.max_connections = in.ConsumeIntegralInRange<size_t>(1, 16);
  options.max_record_size = in.ConsumeIntegralInRange<size_t>(1, 1 << 16);
  options.unfinished_per_client = in.ConsumeIntegralInRange<size_t>(0, 1 << 16);
  Unfinished unfinished(options);
  const size_t peers = Peers().size();
  while (in.remaining_bytes() > 0) {
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
      case 0:
      case 1:
        slots.Acquire(in.ConsumeIntegralInRange<size_t>(0, peers - 1));
        break;
      case 2:
        if (!slots.holders.empty()) {
          slots.Release(in.ConsumeIntegralInRange<size_t>(0, slots.holders.size() - 1),
                        in.ConsumeBool());
        }
        break;
      case 3:
        unfinished.Add(in.ConsumeIntegralInRange<size_t>(0, peers - 1));
        break;
      case 4:
        if (!unfinished.conns.empty()) {
          unfinished.Remove(in.ConsumeIntegralInRange<size_t>(0, unfinished.conns.size() - 1));
        }
        break;
      case 5:
        if (!unfinished.conns.empty()) {
          const size_t i = in.ConsumeIntegralInRange<size_t>(0, unfinished.conns.size() - 1);
          unfinished.Hold(i, in.ConsumeIntegralInRange<size_t>(0, 2 * unfinished.share));
        }
        break;
    }
    slots.Check();
    unfinished.Check();
  }
  slots.CheckDrained();
  unfinished.CheckDrained();
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::Fuzz(data, size);
  return 0;
}
