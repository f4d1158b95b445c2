#include "gtest/gtest.h"

#include "nlm/nlm4_codec.h"
#include "nlm/nsm_codec.h"
#include "xdr/buffer_chain.h"
#include "xdr/encode_to_string.h"

namespace nfs3d::nlm {
namespace {

xdr::Decoder Dec(const std::string& s) {
  return xdr::Decoder(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

nlm4_lock SampleLock() {
  nlm4_lock l;
  l.caller_name = "client.example";
  l.fh = std::string("\x01\x02\x03\x04\x05", 5);
  l.oh = "123@client";
  l.svid = -5;
  l.l_offset = 0x100000000ull;
  l.l_len = 7;
  return l;
}

TEST(NlmCodecTest, LockArgsRoundTripV4) {
  nlm4_lockargs a;
  a.cookie = "ck";
  a.block = true;
  a.exclusive = true;
  a.alock = SampleLock();
  a.reclaim = true;
  a.state = 17;
  std::string wire = xdr::EncodeToString(a);
  EXPECT_EQ(wire.size() % 4, 0u);
  nlm4_lockargs b;
  xdr::Decoder d = Dec(wire);
  ASSERT_TRUE(Decode(d, &b));
  EXPECT_EQ(d.remaining(), 0u);
  EXPECT_EQ(b.cookie, "ck");
  EXPECT_TRUE(b.block && b.exclusive && b.reclaim);
  EXPECT_EQ(b.state, 17);
  EXPECT_EQ(b.alock.caller_name, a.alock.caller_name);
  EXPECT_EQ(b.alock.fh, a.alock.fh);
  EXPECT_EQ(b.alock.oh, a.alock.oh);
  EXPECT_EQ(b.alock.svid, -5);
  EXPECT_EQ(b.alock.l_offset, 0x100000000ull);
  EXPECT_EQ(b.alock.l_len, 7u);
}

TEST(NlmCodecTest, Version1UsesThirtyTwoBitRanges) {
  nlm_testargs a;
  a.cookie = "x";
  a.alock = SampleLock();
  a.alock.l_offset = 9;
  std::string v1 = xdr::EncodeToString(a);
  std::string v4 = xdr::EncodeToString(static_cast<const nlm4_testargs&>(a));
  EXPECT_EQ(v4.size() - v1.size(), 8u);  // two 64-bit fields became 32-bit
  nlm_testargs b;
  xdr::Decoder d = Dec(v1);
  ASSERT_TRUE(Decode(d, &b));
  EXPECT_EQ(b.alock.l_offset, 9u);
  EXPECT_EQ(b.alock.l_len, 7u);
}

TEST(NlmCodecTest, TestResCarriesTheHolderOnlyWhenDenied) {
  nlm4_testres r;
  r.cookie = "c";
  r.stat = NLM4_GRANTED;
  EXPECT_EQ(xdr::EncodeToString(r).size(), 4u + 4u + 4u);  // cookie (len + padded byte) + stat
  r.stat = NLM4_DENIED;
  r.holder = {true, 3, "oh", 10, 0};
  std::string wire = xdr::EncodeToString(r);
  nlm4_testres back;
  xdr::Decoder d = Dec(wire);
  ASSERT_TRUE(Decode(d, &back));
  EXPECT_EQ(back.stat, NLM4_DENIED);
  EXPECT_TRUE(back.holder.exclusive);
  EXPECT_EQ(back.holder.svid, 3);
  EXPECT_EQ(back.holder.oh, "oh");
  EXPECT_EQ(back.holder.l_offset, 10u);
}

TEST(NlmCodecTest, Version1StatusesAreMapped) {
  nlm_res r;
  r.stat = NLM4_STALE_FH;
  nlm4_res back;
  std::string wire = xdr::EncodeToString(r);  // the decoder borrows it
  xdr::Decoder d = Dec(wire);
  ASSERT_TRUE(Decode(d, &back));
  EXPECT_EQ(back.stat, NLM4_DENIED);
  EXPECT_EQ(ToV1Stat(NLM4_FAILED), NLM4_DENIED_NOLOCKS);
  EXPECT_EQ(ToV1Stat(NLM4_DENIED_GRACE_PERIOD), NLM4_DENIED_GRACE_PERIOD);
}

TEST(NlmCodecTest, MalformedInputIsRejected) {
  nlm4_lockargs a;
  a.alock = SampleLock();
  std::string wire = xdr::EncodeToString(a);
  for (size_t cut = 0; cut < wire.size(); cut += 4) {
    nlm4_lockargs b;
    std::string part = wire.substr(0, cut);
    xdr::Decoder d = Dec(part);
    EXPECT_FALSE(Decode(d, &b)) << cut;
  }
  // A netobj longer than MAXNETOBJ_SZ.
  std::string huge;
  huge.append("\x00\x00\x04\x01", 4);  // length 1025
  huge.append(1028, 'x');
  nlm4_unlockargs u;
  xdr::Decoder d = Dec(huge);
  EXPECT_FALSE(Decode(d, &u));
  // A share mode out of range.
  nlm4_shareargs s;
  s.share.fh = "f";
  std::string share = xdr::EncodeToString(s);
  share[share.size() - 12 + 3] = 9;  // mode
  xdr::Decoder ds = Dec(share);
  EXPECT_FALSE(Decode(ds, &s));
}

TEST(NsmCodecTest, MonAndNotifyRoundTrip) {
  nsm::mon m;
  m.id.mon_name = "server";
  m.id.id = {"me", 100021, 4, 16};
  m.priv[15] = 7;
  std::string wire = xdr::EncodeToString(m);
  nsm::mon back;
  xdr::Decoder d = Dec(wire);
  ASSERT_TRUE(xdr::Decode(d, &back));
  EXPECT_EQ(back.id.mon_name, "server");
  EXPECT_EQ(back.id.id.my_prog, 100021);
  EXPECT_EQ(back.id.id.my_proc, 16);
  EXPECT_EQ(back.priv[15], 7);
  nsm::stat_chge c{"host", 5};
  nsm::stat_chge cb;
  std::string change_wire = xdr::EncodeToString(c);
  xdr::Decoder dc = Dec(change_wire);
  ASSERT_TRUE(xdr::Decode(dc, &cb));
  EXPECT_EQ(cb.mon_name, "host");
  EXPECT_EQ(cb.state, 5);
}

}  // namespace
}  // namespace nfs3d::nlm
