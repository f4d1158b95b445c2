// The State frame across format numbers: what a format-2 predecessor
// writes is read by this nfs3d (with no waiters and no GSS contexts), what a
// format-3 one writes with its connections plain, and the additions of
// formats 3 and 4 survive a round trip.
#include "daemon/handover_format.h"

#include "gtest/gtest.h"

namespace nfs3d::handover {
namespace {

NlmLockEntry ALock() { return {"file-key", "host-a", 7, "owner", 0, 99, true}; }

TEST(HandoverFormatTest, FormatTwoStateIsReadWithoutTheNewLists) {
  StateV2 old;
  old.drc.push_back({"peer", 1, 100003, 3, 8, 42, "reply"});
  old.nlm.enabled = true;
  old.nlm.nsm_state = 3;
  old.nlm.locks.push_back(ALock());
  old.cephfs_write_verifier = 99;
  const std::string frame = EncodeFrame(Step::kState, old);
  std::optional<State> state = DecodeState(2, frame);
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->drc.size(), 1u);
  EXPECT_EQ(state->drc[0].reply, "reply");
  ASSERT_EQ(state->nlm.locks.size(), 1u);
  EXPECT_EQ(state->nlm.locks[0].host, "host-a");
  EXPECT_EQ(state->cephfs_write_verifier, 99u);
  EXPECT_TRUE(state->nlm_waiters.empty());
  EXPECT_TRUE(state->gss.empty());
  // Read as format 3 it is short: refused, not misread.
  EXPECT_FALSE(DecodeState(3, frame).has_value());
}

TEST(HandoverFormatTest, WaitersAndGssContextsRoundTrip) {
  State state;
  state.nlm.enabled = true;
  state.nlm.locks.push_back(ALock());
  state.nlm_waiters.push_back({"file-key", "host-b", 9, "owner-b", "fh", 10, 20, true, "cookie",
                               "10.0.0.3", true, 4, false});
  GssContextEntry gss;
  gss.handle = std::string(16, 'h');
  gss.left_ms = 3600000;
  gss.principal = "alice@EXAMPLE.ORG";
  gss.mapped = true;
  gss.uid = 1000;
  gss.gid = 1000;
  gss.gids = {1000, 27};
  gss.window_size = 128;
  gss.window_started = true;
  gss.window_highest = 77;
  gss.window_seen = std::string(512, '\x01');
  gss.keys.push_back({18, std::string(32, 'k'), 0, "", false, 12345});
  state.gss.push_back(gss);
  std::optional<State> back = DecodeState(kFormat, EncodeFrame(Step::kState, state));
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->nlm_waiters.size(), 1u);
  EXPECT_EQ(back->nlm_waiters[0].cookie, "cookie");
  EXPECT_EQ(back->nlm_waiters[0].address, "10.0.0.3");
  EXPECT_TRUE(back->nlm_waiters[0].stream);
  ASSERT_EQ(back->gss.size(), 1u);
  EXPECT_EQ(back->gss[0].principal, gss.principal);
  EXPECT_EQ(back->gss[0].gids, gss.gids);
  EXPECT_EQ(back->gss[0].window_seen, gss.window_seen);
  ASSERT_EQ(back->gss[0].keys.size(), 1u);
  EXPECT_EQ(back->gss[0].keys[0].send_seq, 12345u);
  EXPECT_EQ(back->gss[0].keys[0].context_key, std::string(32, 'k'));
}

TEST(HandoverFormatTest, OversizedGssFieldsAreRefused) {
  State state;
  GssContextEntry gss;
  gss.handle = std::string(17, 'h');  // handles are 16 bytes at most
  state.gss.push_back(gss);
  EXPECT_FALSE(DecodeState(kFormat, EncodeFrame(Step::kState, state)).has_value());
  state.gss[0].handle = std::string(16, 'h');
  state.gss[0].keys.resize(2);  // one key set at most
  EXPECT_FALSE(DecodeState(kFormat, EncodeFrame(Step::kState, state)).has_value());
}

TEST(HandoverFormatTest, FormatThreeConnectionsAreReadAsPlain) {
  StateV3 old;
  old.tcp.push_back({5, "pending"});
  const std::string frame = EncodeFrame(Step::kState, old);
  std::optional<State> state = DecodeState(3, frame);
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->tcp.size(), 1u);
  EXPECT_EQ(state->tcp[0].fd_index, 5u);
  EXPECT_EQ(state->tcp[0].pending, "pending");
  EXPECT_TRUE(state->tcp[0].tls.empty());
  // Read as format 4 it is short: refused, not misread.
  EXPECT_FALSE(DecodeState(4, frame).has_value());
}

State WithTlsConnections() {
  State state;
  state.tcp.push_back({0, "", {}});
  state.tcp.push_back({1, "rec", {{TlsSecurity::kTls, "TLS1.3", "AES-256-GCM", ""}}});
  state.tcp.push_back(
      {2, "", {{TlsSecurity::kMtls, "TLS1.3", "AES-128-GCM", "CN=client.example"}}});
  return state;
}

TEST(HandoverFormatTest, KernelTlsConnectionsRoundTrip) {
  const State state = WithTlsConnections();
  std::optional<State> back = DecodeState(kFormat, EncodeFrame(Step::kState, state));
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->tcp.size(), 3u);
  EXPECT_TRUE(back->tcp[0].tls.empty());
  ASSERT_EQ(back->tcp[1].tls.size(), 1u);
  EXPECT_EQ(back->tcp[1].pending, "rec");
  EXPECT_EQ(back->tcp[1].tls[0].security, TlsSecurity::kTls);
  EXPECT_EQ(back->tcp[1].tls[0].version, "TLS1.3");
  EXPECT_EQ(back->tcp[1].tls[0].cipher, "AES-256-GCM");
  ASSERT_EQ(back->tcp[2].tls.size(), 1u);
  EXPECT_EQ(back->tcp[2].tls[0].security, TlsSecurity::kMtls);
  EXPECT_EQ(back->tcp[2].tls[0].cipher, "AES-128-GCM");
  EXPECT_EQ(back->tcp[2].tls[0].subject, "CN=client.example");
}

// A successor that reads format 3 at most is refused by the predecessor
// (daemon/handover.cc Greet); were a format-4 State read as format 3 anyway,
// it is refused rather than taken for connections without TLS.
TEST(HandoverFormatTest, FormatFourStateIsNotReadAsFormatThree) {
  EXPECT_EQ(kFormat, 4u);
  EXPECT_FALSE(DecodeState(3, EncodeFrame(Step::kState, WithTlsConnections())).has_value());
}

TEST(HandoverFormatTest, MalformedTlsEntriesAreRefused) {
  State state = WithTlsConnections();
  state.tcp[1].tls.push_back(state.tcp[1].tls[0]);  // one session at most
  EXPECT_FALSE(DecodeState(kFormat, EncodeFrame(Step::kState, state)).has_value());
  state = WithTlsConnections();
  state.tcp[1].tls[0].security = static_cast<TlsSecurity>(3);  // neither TLS nor mTLS
  EXPECT_FALSE(DecodeState(kFormat, EncodeFrame(Step::kState, state)).has_value());
  state = WithTlsConnections();
  state.tcp[1].tls[0].subject = std::string(kMaxText + 1, 'd');
  EXPECT_FALSE(DecodeState(kFormat, EncodeFrame(Step::kState, state)).has_value());
}

}  // namespace
}  // namespace nfs3d::handover
