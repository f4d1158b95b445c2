// The NLM and NSM programs over real loopback sockets, through the
// dispatcher and its duplicate request cache: a LOCK sent twice (same xid,
// then a new xid) leaves exactly one lock, and an old LOCK retransmitted
// after the UNLOCK does not bring a phantom lock back.
#include <memory>
#include <string>

#include "gtest/gtest.h"

#include "client/rpc_client.h"
#include "nlm/nlm4_codec.h"
#include "nlm/nlm_program.h"
#include "nlm/nlm_service.h"
#include "nlm/nsm_codec.h"
#include "nlm/nsm_program.h"
#include "rpc/dispatcher.h"
#include "rpc/rpc_server.h"
#include "tests/nlm/fake_peer_caller.h"
#include "xdr/buffer_chain.h"
#include "xdr/encode_to_string.h"

namespace nfs3d::nlm {
namespace {

nlm4_stats AnyHandle(const rpc::CallContext&, const std::string& fh, std::string* key) {
  *key = fh;
  return NLM4_GRANTED;
}

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

nlm4_lock MakeLock(const std::string& host, int32_t svid) {
  nlm4_lock l;
  l.caller_name = host;
  l.fh = "the-file-handle";
  l.oh = host + std::to_string(svid);
  l.svid = svid;
  l.l_offset = 0;
  l.l_len = 0;
  return l;
}

class NlmRpcTest : public ::testing::TestWithParam<rpc::Transport> {
 protected:
  void SetUp() override {
    NlmOptions options;
    service_ = std::make_unique<NlmService>(options, AnyHandle, &caller_, nullptr);
    service_->Start(false);
    nsm_ = std::make_unique<nsm::NsmService>(service_.get());
    nlm_program_ = MakeNlmProgram(service_.get());
    nsm_program_ = nsm::MakeNsmProgram(nsm_.get());
    dispatcher_.AddProgram(&nlm_program_);
    dispatcher_.AddProgram(&nsm_program_);
    rpc::RpcServerOptions options_server;
    options_server.worker_threads = 2;
    server_ = std::make_unique<rpc::RpcServer>(options_server, &dispatcher_);
    absl::StatusOr<uint16_t> port = GetParam() == rpc::Transport::kTcp
                                        ? server_->ListenTcp("127.0.0.1", 0)
                                        : server_->ListenUdp("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status();
    server_->Start();
    client::RpcClientOptions copts;
    copts.transport = GetParam();
    copts.cred.flavor = kAuthSys;
    copts.cred.machine = "client";
    absl::StatusOr<std::unique_ptr<client::RpcClient>> c =
        client::RpcClient::Connect("127.0.0.1", *port, copts);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(*c);
  }

  void TearDown() override {
    if (server_) server_->Stop();
    if (service_) service_->Stop();
  }

  nlm4_stats Result(const absl::StatusOr<client::RpcReply>& reply) {
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return NLM4_FAILED;
    EXPECT_EQ(reply->accept_stat, 0u);
    nlm4_res res;
    xdr::Decoder d(Bytes(reply->results));
    EXPECT_TRUE(Decode(d, &res));
    return res.stat;
  }

  nlm4_stats TestAs(const std::string& host) {
    nlm4_testargs t;
    t.exclusive = true;
    t.alock = MakeLock(host, 99);
    absl::StatusOr<client::RpcReply> reply =
        client_->Call(kProgram, kVersion4, kTest, Bytes(xdr::EncodeToString(t)));
    EXPECT_TRUE(reply.ok());
    if (!reply.ok()) return NLM4_FAILED;
    nlm4_testres res;
    xdr::Decoder d(Bytes(reply->results));
    EXPECT_TRUE(Decode(d, &res));
    return res.stat;
  }

  FakePeerCaller caller_;
  std::unique_ptr<NlmService> service_;
  std::unique_ptr<nsm::NsmService> nsm_;
  rpc::Program nlm_program_, nsm_program_;
  rpc::Dispatcher dispatcher_;
  std::unique_ptr<rpc::RpcServer> server_;
  std::unique_ptr<client::RpcClient> client_;
};

TEST_P(NlmRpcTest, SameLockTwiceLeavesOneLock) {
  nlm4_lockargs lock;
  lock.cookie = "cookie";
  lock.exclusive = true;
  lock.alock = MakeLock("client-a", 1);
  std::string args = xdr::EncodeToString(lock);
  constexpr uint32_t kXid = 0x4c4f434b;
  EXPECT_EQ(Result(client_->CallWithXid(kXid, kProgram, kVersion4, kLock, Bytes(args))),
            NLM4_GRANTED);
  EXPECT_EQ(Result(client_->CallWithXid(kXid, kProgram, kVersion4, kLock, Bytes(args))),
            NLM4_GRANTED);  // retransmission: the cached reply
  EXPECT_EQ(Result(client_->Call(kProgram, kVersion4, kLock, Bytes(args))),
            NLM4_GRANTED);  // the same request again with a new xid
  EXPECT_EQ(service_->lock_count(), 1u);
  EXPECT_EQ(TestAs("client-b"), NLM4_DENIED);

  nlm4_unlockargs unlock;
  unlock.cookie = "cookie";
  unlock.alock = lock.alock;
  EXPECT_EQ(Result(client_->Call(kProgram, kVersion4, kUnlock, Bytes(xdr::EncodeToString(unlock)))),
            NLM4_GRANTED);
  EXPECT_EQ(service_->lock_count(), 0u);
  // A late retransmission of the first LOCK is answered from the cache and
  // does not lock again.
  EXPECT_EQ(Result(client_->CallWithXid(kXid, kProgram, kVersion4, kLock, Bytes(args))),
            NLM4_GRANTED);
  EXPECT_EQ(service_->lock_count(), 0u);
  EXPECT_EQ(TestAs("client-b"), NLM4_GRANTED);
}

TEST_P(NlmRpcTest, NullAndUnusedProcedures) {
  absl::StatusOr<client::RpcReply> reply = client_->Call(kProgram, kVersion4, kNull, {});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->accept_stat, 0u);
  reply = client_->Call(kProgram, kVersion4, 17, {});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->accept_stat, 3u);  // PROC_UNAVAIL
  reply = client_->Call(kProgram, 2, kNull, {});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->accept_stat, 2u);  // PROG_MISMATCH: versions 1, 3, 4 only
  reply = client_->Call(kProgram, kVersion1, kShare, {});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->accept_stat, 3u);  // SHARE came with version 3
  reply = client_->Call(kProgram, kVersion4, kLock, Bytes(std::string("\0\0\0", 3)));
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->accept_stat, 4u);  // GARBAGE_ARGS
}

TEST_P(NlmRpcTest, VersionOneLock) {
  nlm_lockargs lock;
  lock.exclusive = true;
  lock.alock = MakeLock("old-client", 1);
  lock.alock.l_offset = 10;
  lock.alock.l_len = 5;
  EXPECT_EQ(Result(client_->Call(kProgram, kVersion1, kLock, Bytes(xdr::EncodeToString(lock)))),
            NLM4_GRANTED);
  ASSERT_EQ(service_->LocksOf("the-file-handle").size(), 1u);
  EXPECT_EQ(service_->LocksOf("the-file-handle")[0].last, 14u);
}

TEST_P(NlmRpcTest, SmNotifyReleasesTheClientsLocks) {
  nlm4_lockargs lock;
  lock.exclusive = true;
  lock.alock = MakeLock("rebooting", 1);
  ASSERT_EQ(Result(client_->Call(kProgram, kVersion4, kLock, Bytes(xdr::EncodeToString(lock)))),
            NLM4_GRANTED);
  absl::StatusOr<client::RpcReply> reply = client_->Call(
      nsm::kProgram, nsm::kVersion, nsm::kStat, Bytes(xdr::EncodeToString(nsm::stat_chge{"x", 0})));
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->accept_stat, 0u);
  reply = client_->Call(nsm::kProgram, nsm::kVersion, nsm::kNotify,
                        Bytes(xdr::EncodeToString(nsm::stat_chge{"rebooting", 3})));
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->accept_stat, 0u);
  EXPECT_EQ(service_->lock_count(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, NlmRpcTest,
                         ::testing::Values(rpc::Transport::kTcp, rpc::Transport::kUdp),
                         [](const auto& info) {
                           return info.param == rpc::Transport::kTcp ? "Tcp" : "Udp";
                         });

}  // namespace
}  // namespace nfs3d::nlm
