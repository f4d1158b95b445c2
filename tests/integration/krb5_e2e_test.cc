// RPCSEC_GSS against the real binary, over TCP and UDP: the in-tree
// initiator (client/gss_initiator.h) gets tickets from the test KDC (ctest
// fixture krb5, tests/fixtures/krb5-kdc.sh) and creates, writes and reads files
// with krb5, krb5i and krb5p; files belong to the principal's local user;
// exports refuse flavors their sec= list does not name; bad contexts,
// forged checksums and replays are refused and nfs3d keeps serving.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "client/gss_initiator.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "tests/integration/e2e_harness.h"
#include "xdr/decoder.h"
#include "xdr/mount3_types.h"
#include "xdr/nfs3_types.h"

namespace nfs3d::e2e {
namespace {

using rpc::gss::GssService;

// One nfs3d and its exports for the whole suite.
class Krb5E2eTest : public ::testing::TestWithParam<rpc::Transport> {
 protected:
  static void SetUpTestSuite() {
    const char* kdc = std::getenv("NFS3D_KRB5_DIR");
    if (kdc == nullptr) return;
    kdc_ = kdc;
    setenv("KRB5_CONFIG", (kdc_ + "/krb5.conf").c_str(), 1);  // nfs3d inherits it
    setenv("KRB5RCACHENAME", "none:", 1);
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-krb5-e2e-", getpid());
    fs::remove_all(dir_);
    for (const char* e : {"krb", "priv"}) {
      fs::create_directories(dir_ / e);
      chmod((dir_ / e).c_str(), 0777);  // the mapped user (daemon) creates files here
    }
    nfsd_ = new NfsdProcess();
    nfsd_->Configure(
        dir_,
        absl::StrCat((dir_ / "krb").string(),
                     " 127.0.0.1(rw,insecure,sec=krb5:krb5i:krb5p:sys,anonuid=4242,"
                     "anongid=4243)\n",
                     (dir_ / "priv").string(), " 127.0.0.1(rw,insecure,sec=krb5p)\n"),
        absl::StrCat("\n[kerberos]\nkeytab = ", kdc_, "/nfs.keytab\nprincipal = nfs/localhost\n"));
    started_ = nfsd_->Start();
  }
  static void TearDownTestSuite() {
    if (nfsd_ == nullptr) return;
    nfsd_->Stop();
    delete nfsd_;
    nfsd_ = nullptr;
    fs::remove_all(dir_);
  }
  void SetUp() override {
    if (kdc_.empty()) GTEST_SKIP() << "no test KDC (NFS3D_KRB5_DIR unset)";
    ASSERT_TRUE(started_) << nfsd_->Log();
    client_ = RawClient::Open(nfsd_->port(), {.transport = GetParam()});
    ASSERT_NE(client_, nullptr);
  }

  std::unique_ptr<client::GssInitiator> Establish(const std::string& principal,
                                                  GssService service) {
    client::GssInitiatorOptions o{
        .principal = principal, .client_keytab = kdc_ + "/client.keytab", .service = service};
    auto g = client::GssInitiator::Establish(
        o, nfs3::kProgram, 3, xid_, [this](const std::string& m) -> absl::StatusOr<std::string> {
          const uint32_t xid = xdr::Decoder(test_support::Span(m)).U32();
          if (!client_->SendMessage(m)) return absl::UnavailableError("send failed");
          return Await(xid, absl::Seconds(5));
        });
    xid_ += 10;
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }

  // The reply with this xid, or an error after `wait`.
  absl::StatusOr<std::string> Await(uint32_t xid, absl::Duration wait) {
    const absl::Time deadline = absl::Now() + wait;
    while (absl::Now() < deadline) {
      std::optional<std::string> m = client_->Receive(deadline - absl::Now());
      if (!m) break;
      if (m->size() >= 4 && xdr::Decoder(test_support::Span(*m)).U32() == xid) return *m;
    }
    return absl::DeadlineExceededError("no reply");
  }

  // An NFSv3 call under g; the reply with its plain results.
  NfsReply GssNfs(client::GssInitiator& g, uint32_t proc, const std::string& args) {
    const uint32_t xid = ++xid_;
    const uint32_t seq = g.NextSeq();
    const std::string call =
        g.EncodeCall(xid, nfs3::kProgram, 3, proc, test_support::Span(args), seq);
    NfsReply out;
    if (!client_->SendMessage(call)) return out;
    absl::StatusOr<std::string> reply = Await(xid, absl::Seconds(5));
    if (!reply.ok()) return out;
    rpc::ReplyHeader header;
    absl::StatusOr<std::string> results = g.OpenReply(test_support::Span(*reply), seq, &header);
    EXPECT_TRUE(results.ok()) << results.status();
    if (!results.ok()) return out;
    client::RpcReply r;
    static_cast<rpc::ReplyHeader&>(r) = header;
    r.results = *results;
    return ToNfsReply(r);
  }

  // READ of a small file under g: its data ("" when the READ failed), and
  // its post-op attributes in *attr.
  std::string GssRead(client::GssInitiator& g, const std::string& fh, std::optional<Fattr>* attr) {
    NfsReply r = GssNfs(g, nfs3::kRead, Args().Opaque(fh).U64(0).U32(65536).str());
    EXPECT_TRUE(r.ok && r.status == 0u) << r.status;
    if (!r.ok || r.status != 0u) return "";
    xdr::Decoder d(test_support::Span(r.results));
    d.U32();
    *attr = DecodePostOpAttr(d);
    d.U32();   // count
    d.Bool();  // eof
    return test_support::Str(d.Opaque(1 << 20));
  }

  std::string MountRoot(const std::string& export_name, std::vector<uint32_t>* flavors) {
    auto mnt = RawClient::Open(nfsd_->mount_port(), {.transport = GetParam()});
    NfsReply r = ToNfsReply(mnt->Call(mount3::kProgram, 3, mount3::kMnt,
                                      Args().String((dir_ / export_name).string()).str()));
    EXPECT_TRUE(r.ok && r.status == 0);
    if (!r.ok || r.status != 0) return "";
    xdr::Decoder d(test_support::Span(r.results));
    d.U32();
    std::string fh = test_support::Str(d.Opaque(64));
    flavors->resize(d.U32());
    for (uint32_t& f : *flavors) f = d.U32();
    return fh;
  }

  static inline std::string kdc_;
  static inline fs::path dir_;
  static inline NfsdProcess* nfsd_ = nullptr;
  static inline bool started_ = false;
  std::unique_ptr<RawClient> client_;
  uint32_t xid_ = 0x4b000000u + static_cast<uint32_t>(getpid() & 0xffff) * 256;
};

std::string Name(GssService s, rpc::Transport t) {
  return absl::StrCat(s == GssService::kNone        ? "krb5"
                      : s == GssService::kIntegrity ? "krb5i"
                                                    : "krb5p",
                      t == rpc::Transport::kTcp ? "-tcp" : "-udp");
}

TEST_P(Krb5E2eTest, EachServiceCreatesWritesAndReadsAsTheMappedUser) {
  std::vector<uint32_t> flavors;
  const std::string root = MountRoot("krb", &flavors);
  ASSERT_FALSE(root.empty());
  // RFC 2623: the export's flavors, in its order.
  EXPECT_EQ(flavors, (std::vector<uint32_t>{390003, 390004, 390005, 1}));
  for (GssService service : {GssService::kNone, GssService::kIntegrity, GssService::kPrivacy}) {
    const std::string name = Name(service, GetParam());
    SCOPED_TRACE(name);
    auto g = Establish("daemon", service);
    ASSERT_NE(g, nullptr);
    const std::string fh = NewHandle(GssNfs(*g, nfs3::kCreate, CreateArgs(root, name)));
    ASSERT_FALSE(fh.empty());
    const std::string data = absl::StrCat("written under ", name, " ", std::string(5000, 'd'));
    NfsReply w =
        GssNfs(*g, nfs3::kWrite,
               Args().Opaque(fh).U64(0).U32(data.size()).U32(nfs3::FILE_SYNC).Opaque(data).str());
    ASSERT_TRUE(w.ok);
    EXPECT_EQ(w.status, 0u);
    std::optional<Fattr> attr;
    EXPECT_TRUE(GssRead(*g, fh, &attr) == data);
    ASSERT_TRUE(attr.has_value());
    EXPECT_EQ(attr->uid, 1u);  // Debian's "daemon", the principal's local user
    struct stat st {};
    ASSERT_EQ(stat((dir_ / "krb" / name).c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 1u);
    EXPECT_EQ(static_cast<size_t>(st.st_size), data.size());
  }
}

// nfs3d --takeover: the contexts cross to the successor. Each client goes
// on with the context it made before (no new context creation), its
// integrity and privacy tokens checking both ways.
TEST_P(Krb5E2eTest, ContextsOfEveryServiceCarryOnAfterATakeover) {
  std::vector<uint32_t> flavors;
  const std::string root = MountRoot("krb", &flavors);
  ASSERT_FALSE(root.empty());
  struct Before {
    GssService service;
    std::unique_ptr<client::GssInitiator> g;
    std::string fh, data;
  };
  std::vector<Before> clients;
  for (GssService service : {GssService::kNone, GssService::kIntegrity, GssService::kPrivacy}) {
    const std::string name = "takeover-" + Name(service, GetParam());
    Before b{service, Establish("daemon", service), "", absl::StrCat("before ", name)};
    ASSERT_NE(b.g, nullptr);
    b.fh = NewHandle(GssNfs(*b.g, nfs3::kCreate, CreateArgs(root, name)));
    ASSERT_FALSE(b.fh.empty());
    NfsReply w = GssNfs(
        *b.g, nfs3::kWrite,
        Args().Opaque(b.fh).U64(0).U32(b.data.size()).U32(nfs3::FILE_SYNC).Opaque(b.data).str());
    ASSERT_TRUE(w.ok && w.status == 0u);
    clients.push_back(std::move(b));
  }
  const size_t log_from = nfsd_->Log().size();
  ASSERT_TRUE(nfsd_->TakeOver()) << nfsd_->Log();
  const std::string log = nfsd_->Log().substr(log_from);
  EXPECT_NE(log.find("RPCSEC_GSS contexts"), std::string::npos) << log;
  EXPECT_EQ(log.find("could not be taken over"), std::string::npos) << log;
  client_ = RawClient::Open(nfsd_->port(), {.transport = GetParam()});  // TCP: a new connection
  ASSERT_NE(client_, nullptr);
  for (Before& b : clients) {
    SCOPED_TRACE(Name(b.service, GetParam()));
    std::optional<Fattr> attr;
    EXPECT_EQ(GssRead(*b.g, b.fh, &attr), b.data);
    ASSERT_TRUE(attr.has_value());
    EXPECT_EQ(attr->uid, 1u);  // still the principal's local user
    const std::string more = "after the takeover";
    NfsReply w = GssNfs(*b.g, nfs3::kWrite,
                        Args()
                            .Opaque(b.fh)
                            .U64(b.data.size())
                            .U32(more.size())
                            .U32(nfs3::FILE_SYNC)
                            .Opaque(more)
                            .str());
    ASSERT_TRUE(w.ok);
    EXPECT_EQ(w.status, 0u);
  }
}

TEST_P(Krb5E2eTest, PrincipalsWithoutALocalUserGetTheAnonymousIds) {
  std::vector<uint32_t> flavors;
  const std::string root = MountRoot("krb", &flavors);
  auto g = Establish("nosuchuser", GssService::kIntegrity);
  ASSERT_NE(g, nullptr);
  const std::string name = "anon-" + Name(GssService::kIntegrity, GetParam());
  ASSERT_FALSE(NewHandle(GssNfs(*g, nfs3::kCreate, CreateArgs(root, name))).empty());
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "krb" / name).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_gid, 4243u);
}

TEST_P(Krb5E2eTest, AKrb5pOnlyExportRefusesWeakerFlavors) {
  std::vector<uint32_t> flavors;
  const std::string root = MountRoot("priv", &flavors);
  ASSERT_FALSE(root.empty());
  EXPECT_EQ(flavors, (std::vector<uint32_t>{390005}));
  const std::string getattr = Args().Opaque(root).str();
  // AUTH_SYS: AUTH_TOOWEAK.
  NfsReply sys = Nfs(*client_, nfs3::kGetattr, getattr);
  ASSERT_TRUE(sys.ok);
  EXPECT_EQ(sys.reply_stat, 1u);
  EXPECT_EQ(sys.auth_stat, 5u);
  for (GssService service : {GssService::kNone, GssService::kIntegrity}) {
    auto g = Establish("daemon", service);
    ASSERT_NE(g, nullptr);
    NfsReply weak = GssNfs(*g, nfs3::kGetattr, getattr);
    ASSERT_TRUE(weak.ok);
    EXPECT_EQ(weak.reply_stat, 1u);
    EXPECT_EQ(weak.auth_stat, 5u);
  }
  auto g = Establish("daemon", GssService::kPrivacy);
  ASSERT_NE(g, nullptr);
  NfsReply ok = GssNfs(*g, nfs3::kGetattr, getattr);
  ASSERT_TRUE(ok.ok);
  EXPECT_EQ(ok.reply_stat, 0u);
  EXPECT_EQ(ok.status, 0u);
}

TEST_P(Krb5E2eTest, BadContextsForgeriesAndReplaysAreRefused) {
  std::vector<uint32_t> flavors;
  const std::string root = MountRoot("krb", &flavors);
  const std::string getattr = Args().Opaque(root).str();
  auto g = Establish("daemon", GssService::kIntegrity);
  ASSERT_NE(g, nullptr);
  // A forged argument checksum: GARBAGE_ARGS with a verifier that checks.
  uint32_t seq = g->NextSeq();
  std::string call =
      g->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kGetattr, test_support::Span(getattr), seq);
  call[call.size() - 40] ^= 0x10;  // inside the MIC
  ASSERT_TRUE(client_->SendMessage(call));
  absl::StatusOr<std::string> reply = Await(xid_, absl::Seconds(5));
  ASSERT_TRUE(reply.ok());
  rpc::ReplyHeader h;
  ASSERT_TRUE(g->OpenReply(test_support::Span(*reply), seq, &h).ok());
  EXPECT_EQ(h.accept_stat, static_cast<uint32_t>(rpc::AcceptStat::kGarbageArgs));
  // A replayed sequence number: no answer at all.
  seq = g->NextSeq();
  call = g->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kGetattr, test_support::Span(getattr), seq);
  ASSERT_TRUE(client_->SendMessage(call));
  ASSERT_TRUE(Await(xid_, absl::Seconds(5)).ok());
  ASSERT_TRUE(client_->SendMessage(call));
  EXPECT_FALSE(Await(xid_, absl::Milliseconds(500)).ok());
  // A context the server never made: RPCSEC_GSS_CREDPROBLEM.
  auto other = Establish("daemon", GssService::kNone);
  ASSERT_NE(other, nullptr);
  call = other->EncodeCall(++xid_, nfs3::kProgram, 3, nfs3::kGetattr, test_support::Span(getattr),
                           other->NextSeq());
  call[56] ^= 0xff;  // a byte of the handle in the credential (its bytes start at 52)
  ASSERT_TRUE(client_->SendMessage(call));
  reply = Await(xid_, absl::Seconds(5));
  ASSERT_TRUE(reply.ok());
  client::RpcReply denied;
  ASSERT_TRUE(client::ParseReply(test_support::Span(*reply), &denied));
  EXPECT_EQ(denied.reply_stat, 1u);
  EXPECT_EQ(denied.auth_stat, rpc::gss::kAuthStatCredProblem);
  // Still serving, the same context too.
  EXPECT_EQ(GssNfs(*g, nfs3::kGetattr, getattr).status, 0u);
  EXPECT_TRUE(nfsd_->Alive());
}

INSTANTIATE_TEST_SUITE_P(Transports, Krb5E2eTest,
                         ::testing::Values(rpc::Transport::kTcp, rpc::Transport::kUdp),
                         [](const auto& info) {
                           return info.param == rpc::Transport::kTcp ? "Tcp" : "Udp";
                         });

}  // namespace
}  // namespace nfs3d::e2e
