// The AUTH_TLS probe of RFC 9289 §4.1: which calls are probes, and the
// STARTTLS reply.
#include "rpc/tls/tls_probe.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "xdr/buffer_chain.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc::tls {
namespace {

std::vector<uint8_t> Words(std::initializer_list<uint32_t> words) {
  xdr::BufferChain chain;
  xdr::Encoder out(&chain);
  for (uint32_t w : words) out.U32(w);
  std::string flat = chain.Flatten();
  return std::vector<uint8_t>(flat.begin(), flat.end());
}

TEST(TlsProbeTest, OnlyAWellFormedNullCallWithAuthTlsIsAProbe) {
  // xid, CALL, rpcvers 2, NFS v3, proc, cred AUTH_TLS (7) empty, verf AUTH_NONE empty.
  EXPECT_EQ(ProbeXid(Words({42, 0, 2, 100003, 3, 0, 7, 0, 0, 0})), 42u);
  EXPECT_EQ(ProbeXid(Words({43, 0, 2, 100005, 3, 0, 7, 0, 0, 0})), 43u);  // any program
  EXPECT_FALSE(ProbeXid(Words({1, 0, 2, 100003, 3, 1, 7, 0, 0, 0})));     // GETATTR
  EXPECT_FALSE(ProbeXid(Words({1, 0, 2, 100003, 3, 0, 0, 0, 0, 0})));     // AUTH_NONE
  EXPECT_FALSE(ProbeXid(Words({1, 0, 2, 100003, 3, 0, 7, 4, 9, 0, 0})));  // a body
  EXPECT_FALSE(ProbeXid(Words({1, 0, 2, 100003, 3, 0, 7, 0, 1, 0})));     // AUTH_SYS verf
  EXPECT_FALSE(ProbeXid(Words({1, 0, 2, 100003, 3, 0, 7, 0, 0, 0, 5})));  // arguments
  EXPECT_FALSE(ProbeXid(Words({1, 0, 3, 100003, 3, 0, 7, 0, 0, 0})));     // rpcvers 3
  EXPECT_FALSE(ProbeXid(Words({1, 1, 2})));                               // a reply
  EXPECT_FALSE(ProbeXid({}));
  std::vector<uint8_t> cut = Words({1, 0, 2, 100003, 3, 0, 7, 0, 0, 0});
  for (size_t n = 0; n < cut.size(); ++n) {
    EXPECT_FALSE(ProbeXid(absl::MakeConstSpan(cut.data(), n))) << n;
  }
}

TEST(TlsProbeTest, StartTlsReply) {
  xdr::BufferChain reply;
  EncodeStartTlsReply(42, &reply);
  std::vector<uint8_t> want = Words({42, 1, 0, 0, 8});
  for (char c : std::string("STARTTLS")) want.push_back(static_cast<uint8_t>(c));
  const std::vector<uint8_t> success = Words({0});
  want.insert(want.end(), success.begin(), success.end());
  const std::string got = reply.Flatten();
  EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.end()), want);
}

}  // namespace
}  // namespace nfs3d::rpc::tls
