// A second NLM client for the lab test: takes, tests and releases a
// whole-file exclusive lock on EXPORT/NAME as host "nlm-tool", so the guest
// kernel's locks are arbitrated by nfs3d against another host (processes of
// one Linux client are arbitrated by the client kernel first).
//   nlm_lock_tool SERVER[:PORT] EXPORT NAME lock|unlock|test [--wait-grace]
// (PORT: where NFS, MOUNT and NLM answer; default 2049).
// Exit status: 0 granted / free / unlocked, 1 denied / held, 3 grace period,
// 2 error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "client/rpc_client.h"
#include "nlm/nlm4_codec.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encode_to_string.h"
#include "xdr/encoder.h"

namespace nfs3d::nlm {
namespace {

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "nlm_lock_tool: %s\n", what.c_str());
  return 2;
}

// MOUNT v3 MNT, then NFSv3 LOOKUP: the file's handle.
bool FileHandle(client::RpcClient& rpc, const std::string& export_path, const std::string& name,
                std::string* fh) {
  xdr::BufferChain mnt;
  xdr::Encoder(&mnt).String(export_path);
  absl::StatusOr<client::RpcReply> r = rpc.Call(100005, 3, 1, Bytes(mnt.Flatten()));
  if (!r.ok() || r->accept_stat != 0) return false;
  xdr::Decoder d(Bytes(r->results));
  if (d.U32() != 0) return false;
  absl::Span<const uint8_t> root = d.Opaque(64);
  if (!d.ok()) return false;
  xdr::BufferChain lookup;
  xdr::Encoder e(&lookup);
  e.Opaque(root);
  e.String(name);
  r = rpc.Call(100003, 3, 3, Bytes(lookup.Flatten()));
  if (!r.ok() || r->accept_stat != 0) return false;
  xdr::Decoder l(Bytes(r->results));
  if (l.U32() != 0) return false;
  absl::Span<const uint8_t> object = l.Opaque(64);
  if (!l.ok()) return false;
  fh->assign(reinterpret_cast<const char*>(object.data()), object.size());
  return true;
}

int Run(int argc, char** argv) {
  if (argc < 5) return Fail("usage: nlm_lock_tool SERVER[:PORT] EXPORT NAME lock|unlock|test");
  std::string op = argv[4];
  bool wait_grace = argc > 5 && std::strcmp(argv[5], "--wait-grace") == 0;
  client::RpcClientOptions options;
  options.cred.flavor = kAuthSys;
  options.cred.machine = "nlm-tool";
  options.cred.uid = 0;
  options.cred.gid = 0;
  std::string server = argv[1];
  uint16_t port = 2049;
  if (size_t colon = server.rfind(':'); colon != std::string::npos) {
    port = static_cast<uint16_t>(std::atoi(server.c_str() + colon + 1));
    server.resize(colon);
  }
  absl::StatusOr<std::unique_ptr<client::RpcClient>> rpc =
      client::RpcClient::Connect(server, port, options);
  if (!rpc.ok()) return Fail(rpc.status().ToString());
  nlm4_lock lock;
  lock.caller_name = "nlm-tool";
  lock.svid = 4242;
  lock.oh = "nlm-tool-4242";
  if (!FileHandle(**rpc, argv[2], argv[3], &lock.fh)) return Fail("cannot look up the file");

  // --wait-grace: a request a second for up to 4 minutes (grace periods of
  // up to 90 s, nfs3d's default, after a start that may take a while).
  for (int attempt = 0; attempt < 240; ++attempt) {
    absl::StatusOr<client::RpcReply> reply;
    nlm4_stats stat = NLM4_FAILED;
    if (op == "test") {
      nlm4_testargs t;
      t.exclusive = true;
      t.alock = lock;
      reply = (*rpc)->Call(kProgram, kVersion4, kTest, Bytes(xdr::EncodeToString(t)));
      nlm4_testres res;
      if (reply.ok()) {
        xdr::Decoder d(Bytes(reply->results));
        if (Decode(d, &res)) stat = res.stat;
      }
      if (stat == NLM4_DENIED) {
        std::printf("held by svid %d (%s)\n", res.holder.svid,
                    res.holder.exclusive ? "exclusive" : "shared");
      }
    } else {
      std::string args;
      uint32_t proc = kLock;
      if (op == "lock") {
        nlm4_lockargs l;
        l.exclusive = true;
        l.alock = lock;
        args = xdr::EncodeToString(l);
      } else if (op == "unlock") {
        nlm4_unlockargs u;
        u.alock = lock;
        args = xdr::EncodeToString(u);
        proc = kUnlock;
      } else {
        return Fail("unknown operation " + op);
      }
      reply = (*rpc)->Call(kProgram, kVersion4, proc, Bytes(args));
      nlm4_res res;
      if (reply.ok()) {
        xdr::Decoder d(Bytes(reply->results));
        if (Decode(d, &res)) stat = res.stat;
      }
    }
    if (!reply.ok()) return Fail(reply.status().ToString());
    if (stat == NLM4_DENIED_GRACE_PERIOD && wait_grace) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    std::printf("%s: NLM status %d\n", op.c_str(), stat);
    switch (stat) {
      case NLM4_GRANTED:
        return 0;
      case NLM4_DENIED:
        return 1;
      case NLM4_DENIED_GRACE_PERIOD:
        return 3;
      default:
        return 2;
    }
  }
  return 3;
}

}  // namespace
}  // namespace nfs3d::nlm

int main(int argc, char** argv) { return nfs3d::nlm::Run(argc, argv); }
