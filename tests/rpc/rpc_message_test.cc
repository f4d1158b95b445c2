#include "rpc/rpc_message.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "rpc/rpc_auth.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc {
namespace {

std::vector<uint8_t> Bytes(const xdr::BufferChain& chain) {
  std::string s = chain.Flatten();
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::vector<uint8_t> Words(std::initializer_list<uint32_t> words) {
  xdr::BufferChain chain;
  xdr::Encoder out(&chain);
  for (uint32_t w : words) out.U32(w);
  return Bytes(chain);
}

// A CALL with an AUTH_SYS credential and two argument words.
std::vector<uint8_t> GoodCall() {
  xdr::BufferChain chain;
  xdr::Encoder out(&chain);
  out.U32(0x11223344);  // xid
  out.U32(0);           // CALL
  out.U32(2);           // rpcvers
  out.U32(100003);
  out.U32(3);
  out.U32(7);
  xdr::BufferChain body;
  xdr::Encoder b(&body);
  b.U32(42);  // stamp
  b.String("host");
  b.U32(1000);
  b.U32(100);
  b.U32(2);
  b.U32(4);
  b.U32(27);
  std::string flat = body.Flatten();
  out.U32(kAuthSys);
  out.Opaque(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(flat.data()), flat.size()));
  out.U32(kAuthNone);
  out.U32(0);
  out.U32(0xaaaa5555);  // args
  out.U32(0x01020304);
  return Bytes(chain);
}

TEST(DecodeCallHeaderTest, GoodHeaderLeavesDecoderAtArgs) {
  std::vector<uint8_t> msg = GoodCall();
  xdr::Decoder in(msg.data(), msg.size());
  CallHeader h;
  ASSERT_EQ(DecodeCallHeader(in, &h), HeaderDisposition::kOk);
  EXPECT_EQ(h.xid, 0x11223344u);
  EXPECT_EQ(h.rpcvers, 2u);
  EXPECT_EQ(h.prog, 100003u);
  EXPECT_EQ(h.vers, 3u);
  EXPECT_EQ(h.proc, 7u);
  EXPECT_EQ(h.cred.flavor, kAuthSys);
  EXPECT_EQ(h.cred.body.size(), 4u + 8u + 4u * 5u);
  EXPECT_EQ(h.verf.flavor, kAuthNone);
  EXPECT_TRUE(h.verf.body.empty());
  EXPECT_EQ(in.remaining(), 8u);
  EXPECT_EQ(in.U32(), 0xaaaa5555u);

  Credential cred;
  ASSERT_EQ(Authenticate(h.cred, h.verf, &cred), AuthStat::kOk);
  EXPECT_EQ(cred.flavor, kAuthSys);
  EXPECT_EQ(cred.stamp, 42u);
  EXPECT_EQ(cred.machine, "host");
  EXPECT_EQ(cred.uid, 1000u);
  EXPECT_EQ(cred.gid, 100u);
  EXPECT_EQ(cred.gids, (std::vector<uint32_t>{4, 27}));
}

TEST(DecodeCallHeaderTest, EveryTruncationIsDropped) {
  std::vector<uint8_t> msg = GoodCall();
  const size_t header_len = msg.size() - 8;
  for (size_t len = 0; len < header_len; ++len) {
    xdr::Decoder in(msg.data(), len);
    CallHeader h;
    EXPECT_EQ(DecodeCallHeader(in, &h), HeaderDisposition::kDrop) << "len " << len;
  }
}

TEST(DecodeCallHeaderTest, ReplyMessageIsDropped) {
  std::vector<uint8_t> msg = Words({1, 1, 2, 100003, 3, 0, 0, 0, 0, 0});
  xdr::Decoder in(msg.data(), msg.size());
  CallHeader h;
  EXPECT_EQ(DecodeCallHeader(in, &h), HeaderDisposition::kDrop);
}

TEST(DecodeCallHeaderTest, RpcVersion3IsMismatch) {
  std::vector<uint8_t> msg = Words({9, 0, 3});
  xdr::Decoder in(msg.data(), msg.size());
  CallHeader h;
  EXPECT_EQ(DecodeCallHeader(in, &h), HeaderDisposition::kRpcMismatch);
  EXPECT_EQ(h.xid, 9u);
}

TEST(DecodeCallHeaderTest, HugeCredentialLengthIsBadCred) {
  std::vector<uint8_t> msg = Words({9, 0, 2, 100003, 3, 0, kAuthSys, 0xffffffff});
  xdr::Decoder in(msg.data(), msg.size());
  CallHeader h;
  EXPECT_EQ(DecodeCallHeader(in, &h), HeaderDisposition::kBadCred);
  msg = Words({9, 0, 2, 100003, 3, 0, kAuthSys, 401});
  msg.resize(msg.size() + 404);
  xdr::Decoder in2(msg.data(), msg.size());
  EXPECT_EQ(DecodeCallHeader(in2, &h), HeaderDisposition::kBadCred);
}

TEST(DecodeCallHeaderTest, HugeVerifierLengthIsBadVerf) {
  std::vector<uint8_t> msg = Words({9, 0, 2, 100003, 3, 0, kAuthNone, 0, kAuthNone, 1000});
  xdr::Decoder in(msg.data(), msg.size());
  CallHeader h;
  EXPECT_EQ(DecodeCallHeader(in, &h), HeaderDisposition::kBadVerf);
}

TEST(DecodeCallHeaderTest, MaximalCredentialAccepted) {
  std::vector<uint8_t> msg = Words({9, 0, 2, 100003, 3, 0, 99, 400});
  msg.resize(msg.size() + 400);
  std::vector<uint8_t> tail = Words({kAuthNone, 0});
  msg.insert(msg.end(), tail.begin(), tail.end());
  xdr::Decoder in(msg.data(), msg.size());
  CallHeader h;
  ASSERT_EQ(DecodeCallHeader(in, &h), HeaderDisposition::kOk);
  EXPECT_EQ(h.cred.flavor, 99u);
  EXPECT_EQ(h.cred.body.size(), 400u);
  EXPECT_EQ(in.remaining(), 0u);
}

TEST(ReplyEncodeTest, AcceptedReplies) {
  for (AcceptStat stat : {AcceptStat::kSuccess, AcceptStat::kProgUnavail, AcceptStat::kProcUnavail,
                          AcceptStat::kGarbageArgs, AcceptStat::kSystemErr}) {
    xdr::BufferChain chain;
    xdr::Encoder out(&chain);
    EncodeAcceptedReply(out, 0xdeadbeef, stat);
    EXPECT_EQ(Bytes(chain), Words({0xdeadbeef, 1, 0, 0, 0, static_cast<uint32_t>(stat)}));
  }
  EXPECT_EQ(static_cast<uint32_t>(AcceptStat::kGarbageArgs), 4u);
  EXPECT_EQ(static_cast<uint32_t>(AcceptStat::kSystemErr), 5u);
}

TEST(ReplyEncodeTest, ProgMismatch) {
  xdr::BufferChain chain;
  xdr::Encoder out(&chain);
  EncodeProgMismatchReply(out, 5, 2, 3);
  EXPECT_EQ(Bytes(chain), Words({5, 1, 0, 0, 0, 2, 2, 3}));
}

TEST(ReplyEncodeTest, Denied) {
  xdr::BufferChain chain;
  xdr::Encoder out(&chain);
  EncodeRpcMismatchReply(out, 5);
  EXPECT_EQ(Bytes(chain), Words({5, 1, 1, 0, 2, 2}));
  chain.Clear();
  EncodeAuthErrorReply(out, 6, AuthStat::kTooWeak);
  EXPECT_EQ(Bytes(chain), Words({6, 1, 1, 1, 5}));
}

OpaqueAuth Auth(uint32_t flavor, const std::vector<uint8_t>& body) {
  return OpaqueAuth{flavor, absl::MakeConstSpan(body)};
}

TEST(AuthenticateTest, AuthNone) {
  std::vector<uint8_t> empty;
  Credential cred;
  cred.uid = 5;
  EXPECT_EQ(Authenticate(Auth(kAuthNone, empty), Auth(kAuthNone, empty), &cred), AuthStat::kOk);
  EXPECT_EQ(cred.flavor, kAuthNone);
  EXPECT_EQ(cred.uid, 65534u);  // nobody
  std::vector<uint8_t> junk = Words({1});
  EXPECT_EQ(Authenticate(Auth(kAuthNone, junk), Auth(kAuthNone, empty), &cred), AuthStat::kBadCred);
}

TEST(AuthenticateTest, MalformedAuthSysIsBadCred) {
  std::vector<uint8_t> empty;
  Credential cred;
  // Truncated (no gids array).
  std::vector<uint8_t> body = Words({1, 0, 1000, 100});
  EXPECT_EQ(Authenticate(Auth(kAuthSys, body), Auth(kAuthNone, empty), &cred), AuthStat::kBadCred);
  // 17 gids.
  std::vector<uint32_t> words = {1, 0, 1000, 100, 17};
  for (int i = 0; i < 17; ++i) words.push_back(i);
  xdr::BufferChain chain;
  xdr::Encoder out(&chain);
  for (uint32_t w : words) out.U32(w);
  body = Bytes(chain);
  EXPECT_EQ(Authenticate(Auth(kAuthSys, body), Auth(kAuthNone, empty), &cred), AuthStat::kBadCred);
  // Machine name longer than 255.
  body = Words({1, 256});
  body.resize(body.size() + 256 + 12);
  EXPECT_EQ(Authenticate(Auth(kAuthSys, body), Auth(kAuthNone, empty), &cred), AuthStat::kBadCred);
  // Trailing bytes.
  body = Words({1, 0, 1000, 100, 0, 0});
  EXPECT_EQ(Authenticate(Auth(kAuthSys, body), Auth(kAuthNone, empty), &cred), AuthStat::kBadCred);
  EXPECT_EQ(cred.uid, 65534u);
  // Exactly right: 16 gids.
  words = {1, 0, 1000, 100, 16};
  for (int i = 0; i < 16; ++i) words.push_back(i);
  chain.Clear();
  for (uint32_t w : words) out.U32(w);
  body = Bytes(chain);
  EXPECT_EQ(Authenticate(Auth(kAuthSys, body), Auth(kAuthNone, empty), &cred), AuthStat::kOk);
  EXPECT_EQ(cred.gids.size(), 16u);
}

TEST(AuthenticateTest, UnknownFlavorsAreBadCred) {
  std::vector<uint8_t> empty;
  std::vector<uint8_t> some = Words({1, 2, 3});
  Credential cred;
  for (uint32_t flavor : {2u, 3u, 6u, 390003u}) {
    EXPECT_EQ(Authenticate(Auth(flavor, some), Auth(kAuthNone, empty), &cred), AuthStat::kBadCred)
        << flavor;
  }
}

TEST(AuthenticateTest, VerifierMustBeAuthNone) {
  std::vector<uint8_t> empty;
  std::vector<uint8_t> body = Words({1, 0, 1000, 100, 0});
  std::vector<uint8_t> verf_body = Words({7});
  Credential cred;
  EXPECT_EQ(Authenticate(Auth(kAuthSys, body), Auth(kAuthSys, empty), &cred), AuthStat::kBadVerf);
  // An AUTH_NONE verifier's body is ignored.
  EXPECT_EQ(Authenticate(Auth(kAuthSys, body), Auth(kAuthNone, verf_body), &cred), AuthStat::kOk);
  EXPECT_EQ(cred.uid, 1000u);
}

}  // namespace
}  // namespace nfs3d::rpc
