// The handover format: what a running nfs3d and its successor (nfs3d
// --takeover) say to each other over the handover socket, each frame's
// payload described once in XDR (xdr/describe.h). docs/handover.md is the
// prose description; a change to any type here is a new format number.
// Header-only so the fuzz target needs the XDR library only.
#ifndef NFS3D_DAEMON_HANDOVER_FORMAT_H_
#define NFS3D_DAEMON_HANDOVER_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xdr/buffer_chain.h"
#include "xdr/describe.h"
#include "xdr/encoder.h"

namespace nfs3d::handover {

inline constexpr uint32_t kMagic = 0x6e336864;  // "n3hd"
// The format this nfs3d writes and the oldest it reads.
// Format 3 added State.nlm_waiters, State.gss and State.tcp; a format-2
// State is read as one without. Format 4 added TcpConnectionEntry.tls; a
// format-3 State is read as one whose connections are all plain.
inline constexpr uint32_t kFormat = 4;
inline constexpr uint32_t kOldestFormat = 2;

inline constexpr uint32_t kMaxText = 1024;
inline constexpr uint32_t kMaxSockets = 240;  // below FdChannel::kMaxFds
inline constexpr uint32_t kMaxDrcEntries = 1 << 20;
inline constexpr uint32_t kMaxDrcBytes = 2 << 20;  // one cached reply or peer key
// Largest frame either side accepts.
inline constexpr size_t kMaxFrame = size_t{256} << 20;

// Each frame starts with its step; a frame of another step than the one
// expected ends the handover.
enum class Step : uint32_t {
  kHello = 1,        // successor -> predecessor
  kAnswer = 2,       // predecessor -> successor
  kSockets = 3,      // predecessor -> successor, with the descriptors
  kReady = 4,        // successor -> predecessor
  kState = 5,        // predecessor -> successor
  kDescriptors = 6,  // predecessor -> successor, before State: descriptors it refers to
};
inline xdr::EnumRange XdrRange(Step) { return {1, 6}; }

struct Hello {
  uint32_t magic = kMagic;
  uint32_t oldest_format = kOldestFormat;  // the formats the successor reads
  uint32_t newest_format = kFormat;
  std::string version;  // the successor's nfs3d version
};
NFS3D_XDR(Hello) {
  v(x.magic, x.oldest_format, x.newest_format, xdr::Bounded(x.version, kMaxText));
}

struct Answer {
  uint32_t magic = kMagic;
  bool accepted = false;
  uint32_t format = kFormat;  // what the frames after this one are written in
  std::string version;        // the predecessor's nfs3d version
  std::string reason;         // why not, when refused
};
NFS3D_XDR(Answer) {
  v(x.magic, x.accepted, x.format, xdr::Bounded(x.version, kMaxText),
    xdr::Bounded(x.reason, kMaxText));
}

enum class SocketRole : uint32_t {
  kRpc = 1,       // an RPC listener (NFS, MOUNT, NLM/NSM, portmapper)
  kMetrics = 2,   // the [metrics] TCP endpoint
  kControl = 3,   // the control socket in the state directory
  kHandover = 4,  // the handover socket itself
};
inline xdr::EnumRange XdrRange(SocketRole) { return {1, 4}; }

struct SocketEntry {
  SocketRole role = SocketRole::kRpc;
  bool stream = true;     // SOCK_STREAM (TCP, unix) or SOCK_DGRAM (UDP)
  uint32_t fd_index = 0;  // into the frame's descriptors
};
NFS3D_XDR(SocketEntry) { v(x.role, x.stream, x.fd_index); }

struct Sockets {
  uint64_t write_verifier = 0;
  std::vector<SocketEntry> sockets;
};
NFS3D_XDR(Sockets) { v(x.write_verifier, xdr::Counted(x.sockets, kMaxSockets, 12)); }

struct Ready {
  bool ok = false;
  std::string reason;  // why not
};
NFS3D_XDR(Ready) { v(x.ok, xdr::Bounded(x.reason, kMaxText)); }

// One completed entry of the duplicate request cache.
struct DrcEntry {
  std::string peer;
  uint32_t xid = 0, prog = 0, vers = 0, proc = 0;
  uint64_t checksum = 0;
  std::string reply;
};
NFS3D_XDR(DrcEntry) {
  v(xdr::Bounded(x.peer, kMaxDrcBytes), x.xid, x.prog, x.vers, x.proc, x.checksum,
    xdr::Bounded(x.reply, kMaxDrcBytes));
}

// A frame of descriptors only; State's fd_index fields count through all
// of them in the order they came.
struct Descriptors {
  uint32_t count = 0;  // as many as ride on the frame
};
NFS3D_XDR(Descriptors) { v(x.count); }

inline constexpr uint32_t kMaxName = 1024;    // NLM caller names, addresses
inline constexpr uint32_t kMaxOpaque = 1024;  // NLM owner handles, file keys
inline constexpr uint32_t kMaxLocks = 1 << 20;

struct NlmLockEntry {
  std::string file;  // the lock table's key of the file
  std::string host;
  int32_t svid = 0;
  std::string oh;
  uint64_t first = 0, last = 0;  // inclusive byte range
  bool exclusive = false;
};
NFS3D_XDR(NlmLockEntry) {
  v(xdr::Bounded(x.file, kMaxOpaque), xdr::Bounded(x.host, kMaxName), x.svid,
    xdr::Bounded(x.oh, kMaxOpaque), x.first, x.last, x.exclusive);
}

struct NlmShareEntry {
  std::string file, host, oh;
  uint32_t mode = 0, access = 0;  // fsh4_mode, fsh4_access
};
NFS3D_XDR(NlmShareEntry) {
  v(xdr::Bounded(x.file, kMaxOpaque), xdr::Bounded(x.host, kMaxName),
    xdr::Bounded(x.oh, kMaxOpaque), x.mode, x.access);
}

struct NlmHostEntry {
  std::string name, address, local_address;
  bool recorded = false;  // in the NSM store
  bool previous = false;  // from before a restart whose grace period still runs
};
NFS3D_XDR(NlmHostEntry) {
  v(xdr::Bounded(x.name, kMaxName), xdr::Bounded(x.address, kMaxName),
    xdr::Bounded(x.local_address, kMaxName), x.recorded, x.previous);
}

// A descriptor holding an owner's OFD locks on a file.
struct LockFdEntry {
  std::string file, host;
  int32_t svid = 0;
  std::string oh;
  uint32_t fd_index = 0;
};
NFS3D_XDR(LockFdEntry) {
  v(xdr::Bounded(x.file, kMaxOpaque), xdr::Bounded(x.host, kMaxName), x.svid,
    xdr::Bounded(x.oh, kMaxOpaque), x.fd_index);
}

struct NlmState {
  bool enabled = false;  // the rest is empty when the lock manager was off
  int32_t nsm_state = 0;
  int64_t grace_left_ms = 0;
  std::vector<NlmLockEntry> locks;
  std::vector<NlmShareEntry> shares;
  std::vector<NlmHostEntry> hosts;
  std::vector<LockFdEntry> fds;
};
NFS3D_XDR(NlmState) {
  v(x.enabled, x.nsm_state, x.grace_left_ms, xdr::Counted(x.locks, kMaxLocks, 36),
    xdr::Counted(x.shares, kMaxLocks, 20), xdr::Counted(x.hosts, kMaxLocks, 20),
    xdr::Counted(x.fds, kMaxLocks, 20));
}

inline constexpr uint32_t kMaxStatProcs = 1024;    // procedures over all programs
inline constexpr uint32_t kMaxStatCounters = 256;  // one counter array

// One procedure's counters (stats/server_stats.h ProcSnapshot).
struct StatsProcEntry {
  std::string program;  // "nfs", "mount", ...
  uint32_t prog = 0, vers = 0, proc = 0;
  std::string name;               // "READ"
  std::vector<uint64_t> calls;    // per transport: udp, tcp
  std::vector<uint64_t> errors;   // per transport
  std::vector<uint64_t> latency;  // per latency bucket, not cumulative
  uint64_t latency_ns = 0;
};
NFS3D_XDR(StatsProcEntry) {
  v(xdr::Bounded(x.program, kMaxText), x.prog, x.vers, x.proc, xdr::Bounded(x.name, kMaxText),
    xdr::Counted(x.calls, kMaxStatCounters, 8), xdr::Counted(x.errors, kMaxStatCounters, 8),
    xdr::Counted(x.latency, kMaxStatCounters, 8), x.latency_ns);
}

// The statistics counters (stats/server_stats.h Snapshot), so that they
// count on in the successor. Two-level arrays are transport-major.
struct StatsState {
  std::vector<uint64_t> messages;  // per transport
  std::vector<uint64_t> events;    // [transport][RpcEvent]
  std::vector<uint64_t> flavors;   // [transport][FlavorSlot]
  uint64_t read_bytes = 0, write_bytes = 0;
  std::vector<uint64_t> read_sizes, write_sizes;  // per size bucket
  std::vector<StatsProcEntry> procs;
};
NFS3D_XDR(StatsState) {
  v(xdr::Counted(x.messages, kMaxStatCounters, 8), xdr::Counted(x.events, kMaxStatCounters, 8),
    xdr::Counted(x.flavors, kMaxStatCounters, 8), x.read_bytes, x.write_bytes,
    xdr::Counted(x.read_sizes, kMaxStatCounters, 8),
    xdr::Counted(x.write_sizes, kMaxStatCounters, 8), xdr::Counted(x.procs, kMaxStatProcs, 40));
}

// A queued blocking LOCK (NLM4_BLOCKED), or one granted whose GRANTED
// callback was not delivered yet: the successor sends that callback.
struct NlmWaiterEntry {
  std::string file;  // the lock table's key of the file
  std::string host;  // alock: caller_name, svid, oh, fh, l_offset, l_len
  int32_t svid = 0;
  std::string oh, fh;
  uint64_t l_offset = 0, l_len = 0;
  bool exclusive = false;
  std::string cookie;    // echoed in the GRANTED callback
  std::string address;   // the client's numeric address (the callback's port is looked up)
  bool stream = false;   // the callback goes over TCP; else UDP
  uint32_t vers = 0;     // NLM version of the request: 1, 3 or 4
  bool granted = false;  // the lock is held already (in locks); only the callback is owed
};
NFS3D_XDR(NlmWaiterEntry) {
  v(xdr::Bounded(x.file, kMaxOpaque), xdr::Bounded(x.host, kMaxName), x.svid,
    xdr::Bounded(x.oh, kMaxOpaque), xdr::Bounded(x.fh, kMaxOpaque), x.l_offset, x.l_len,
    x.exclusive, xdr::Bounded(x.cookie, kMaxOpaque), xdr::Bounded(x.address, kMaxName), x.stream,
    x.vers, x.granted);
}

inline constexpr uint32_t kMaxGssKey = 64;          // bytes of a Kerberos key
inline constexpr uint32_t kMaxGssHandle = 16;       // rpc/gss/gss_context_table.h
inline constexpr uint32_t kMaxGssWindow = 512;      // SeqWindow::kTracked / 8
inline constexpr uint32_t kMaxGssToken = 64 << 10;  // an exported GSS-API context
inline constexpr uint32_t kMaxGids = 1 << 16;
inline constexpr uint32_t kMaxGssContexts = 1 << 20;

// The RFC 4121 keys of a context whose tokens nfs3d computes itself
// (rpc/gss/krb5_tokens.h ContextKeys).
struct GssKeysEntry {
  int32_t context_key_type = 0;
  std::string context_key;
  int32_t acceptor_subkey_type = 0;
  std::string acceptor_subkey;  // empty: none
  bool initiator = false;
  uint64_t send_seq = 0;  // the server's next sequence number
};
NFS3D_XDR(GssKeysEntry) {
  v(x.context_key_type, xdr::Bounded(x.context_key, kMaxGssKey), x.acceptor_subkey_type,
    xdr::Bounded(x.acceptor_subkey, kMaxGssKey), x.initiator, x.send_seq);
}

// An established RPCSEC_GSS context (rpc/gss/gss_server.h HandedContext).
struct GssContextEntry {
  std::string handle;
  int64_t left_ms = 0;  // until it expires
  std::string principal;
  bool mapped = false;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> gids;
  uint32_t window_size = 0;  // the sequence window (rpc/gss/seq_window.h)
  bool window_started = false;
  uint32_t window_highest = 0;
  std::string window_seen;         // SeqWindow::Saved::seen: bit i of byte j is slot 8j + i
  std::vector<GssKeysEntry> keys;  // at most one: tokens computed by nfs3d; or
  std::string gss_token;           // gss_export_sec_context's token
};
NFS3D_XDR(GssContextEntry) {
  v(xdr::Bounded(x.handle, kMaxGssHandle), x.left_ms, xdr::Bounded(x.principal, kMaxName), x.mapped,
    x.uid, x.gid, xdr::Counted(x.gids, kMaxGids, 4), x.window_size, x.window_started,
    x.window_highest, xdr::Bounded(x.window_seen, kMaxGssWindow), xdr::Counted(x.keys, 1, 28),
    xdr::Bounded(x.gss_token, kMaxGssToken));
}

inline constexpr uint32_t kMaxTcpConnections = 1 << 16;
// Bytes one connection read and did not run: a record begun (at most the
// largest record a server accepts) and what followed it in the read buffer.
inline constexpr uint32_t kMaxTcpPending = 8 << 20;

// RPC-with-TLS on a connection: a TLS session, or one whose client
// certificate verified (rpc/call_context.h TransportSecurity).
enum class TlsSecurity : uint32_t { kTls = 1, kMtls = 2 };
inline xdr::EnumRange XdrRange(TlsSecurity) { return {1, 2}; }

// The TLS session of a connection whose records are the kernel's (kTLS):
// its keys and record sequence numbers are state of the socket and go along
// with the descriptor; this is what nfs3d itself keeps of it (format 4).
// What the connection comes to keep about its session (e.g. the version,
// cipher and client subject apart, for statistics) goes here, as a new
// format.
struct TlsSessionEntry {
  TlsSecurity security = TlsSecurity::kTls;  // the exports' xprtsec= checks it
  std::string version;                       // "TLS1.3"
  std::string cipher;                        // "AES-256-GCM"
  std::string subject;                       // mTLS: the client certificate's, escaped
};
NFS3D_XDR(TlsSessionEntry) {
  v(x.security, xdr::Bounded(x.version, kMaxText), xdr::Bounded(x.cipher, kMaxText),
    xdr::Bounded(x.subject, kMaxText));
}

// An established TCP connection, handed over between two reads (format 3).
struct TcpConnectionEntry {
  uint32_t fd_index = 0;             // its socket, among the Descriptors frames' descriptors
  std::string pending;               // stream bytes read and not run, record marks included
  std::vector<TlsSessionEntry> tls;  // at most one: the connection is in kTLS (format 4 on)
};
NFS3D_XDR(TcpConnectionEntry) {
  v(x.fd_index, xdr::Bounded(x.pending, kMaxTcpPending), xdr::Counted(x.tls, 1, 8));
}

// TcpConnectionEntry as format 3 wrote it.
struct TcpConnectionEntryV3 {
  uint32_t fd_index = 0;
  std::string pending;
};
NFS3D_XDR(TcpConnectionEntryV3) { v(x.fd_index, xdr::Bounded(x.pending, kMaxTcpPending)); }

// What is handed over once the predecessor stopped serving.
struct State {
  std::vector<DrcEntry> drc;  // least recently used first
  NlmState nlm;
  StatsState stats;
  // CephFS exports' write verifier, kept when the predecessor flushed its
  // sessions; 0: none, or not flushed (the successor takes a new one).
  uint64_t cephfs_write_verifier = 0;
  std::vector<NlmWaiterEntry> nlm_waiters;  // in queue order; format 3 on
  std::vector<GssContextEntry> gss;         // format 3 on
  std::vector<TcpConnectionEntry> tcp;      // format 3 on
};
NFS3D_XDR(State) {
  v(xdr::Counted(x.drc, kMaxDrcEntries, 32), x.nlm, x.stats, x.cephfs_write_verifier,
    xdr::Counted(x.nlm_waiters, kMaxLocks, 60), xdr::Counted(x.gss, kMaxGssContexts, 56),
    xdr::Counted(x.tcp, kMaxTcpConnections, 12));
}

// State as format 3 wrote it.
struct StateV3 {
  std::vector<DrcEntry> drc;
  NlmState nlm;
  StatsState stats;
  uint64_t cephfs_write_verifier = 0;
  std::vector<NlmWaiterEntry> nlm_waiters;
  std::vector<GssContextEntry> gss;
  std::vector<TcpConnectionEntryV3> tcp;
};
NFS3D_XDR(StateV3) {
  v(xdr::Counted(x.drc, kMaxDrcEntries, 32), x.nlm, x.stats, x.cephfs_write_verifier,
    xdr::Counted(x.nlm_waiters, kMaxLocks, 60), xdr::Counted(x.gss, kMaxGssContexts, 56),
    xdr::Counted(x.tcp, kMaxTcpConnections, 8));
}

// State as format 2 wrote it.
struct StateV2 {
  std::vector<DrcEntry> drc;
  NlmState nlm;
  StatsState stats;
  uint64_t cephfs_write_verifier = 0;
};
NFS3D_XDR(StateV2) {
  v(xdr::Counted(x.drc, kMaxDrcEntries, 32), x.nlm, x.stats, x.cephfs_write_verifier);
}

// A frame's payload: its step, then the body.
template <typename T>
std::string EncodeFrame(Step step, const T& body) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  e.U32(static_cast<uint32_t>(step));
  xdr::Encode(e, body);
  return chain.Flatten();
}

// The body of a frame of `step`; nullopt when the frame is of another step,
// malformed, or longer than its body.
template <typename T>
std::optional<T> DecodeFrame(Step step, std::string_view payload) {
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  if (d.U32() != static_cast<uint32_t>(step) || !d.ok()) return std::nullopt;
  T body;
  if (!xdr::Decode(d, &body) || d.remaining() != 0) return std::nullopt;
  return body;
}

// The State frame as written in `format` (kOldestFormat..kFormat).
inline std::optional<State> DecodeState(uint32_t format, std::string_view payload) {
  if (format >= 4) return DecodeFrame<State>(Step::kState, payload);
  if (format == 3) {
    std::optional<StateV3> v3 = DecodeFrame<StateV3>(Step::kState, payload);
    if (!v3) return std::nullopt;
    State state;
    state.drc = std::move(v3->drc);
    state.nlm = std::move(v3->nlm);
    state.stats = std::move(v3->stats);
    state.cephfs_write_verifier = v3->cephfs_write_verifier;
    state.nlm_waiters = std::move(v3->nlm_waiters);
    state.gss = std::move(v3->gss);
    for (TcpConnectionEntryV3& c : v3->tcp) {
      state.tcp.push_back({c.fd_index, std::move(c.pending), {}});
    }
    return state;
  }
  std::optional<StateV2> v2 = DecodeFrame<StateV2>(Step::kState, payload);
  if (!v2) return std::nullopt;
  State state;
  state.drc = std::move(v2->drc);
  state.nlm = std::move(v2->nlm);
  state.stats = std::move(v2->stats);
  state.cephfs_write_verifier = v2->cephfs_write_verifier;
  return state;
}

}  // namespace nfs3d::handover

#endif  // NFS3D_DAEMON_HANDOVER_FORMAT_H_
