// The [tls] certificates' dates and what is logged about them: the 30-day
// warning, the errors for expired and not-yet-valid certificates, subjects
// made safe for a log line, and TlsCredentials keeping the dates of what it
// loaded. Certificates are made in-process with the dates each case needs.
#include "rpc/tls/certificate_dates.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

#include "rpc/tls/tls_credentials.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certificate.h"

namespace nfs3d::rpc::tls {
namespace {

using test_support::MakeTestCertificate;
using test_support::TestCertificate;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);  // 2027-01-15 08:00:00 UTC
const absl::Duration kDay = absl::Hours(24);

time_t At(absl::Duration from_now) { return absl::ToTimeT(kNow + from_now); }

class CertificateDatesTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  test_support::TempDir dir_{"nfs3d-certificate-dates"};
};

TEST_F(CertificateDatesTest, ReadsEveryCertificateOfAFile) {
  const TestCertificate a = MakeTestCertificate(At(-kDay), At(90 * kDay), "leaf");
  const TestCertificate b = MakeTestCertificate(At(-10 * kDay), At(400 * kDay), "intermediate");
  ASSERT_FALSE(a.certificate_pem.empty());
  const std::string path = Write("chain.pem", a.certificate_pem + b.certificate_pem);
  absl::StatusOr<std::vector<CertificateDates>> dates = ReadCertificateDates(path);
  ASSERT_TRUE(dates.ok()) << dates.status();
  ASSERT_EQ(dates->size(), 2u);
  EXPECT_EQ((*dates)[0].subject, "CN=leaf");
  EXPECT_EQ((*dates)[0].not_before, kNow - kDay);
  EXPECT_EQ((*dates)[0].not_after, kNow + 90 * kDay);
  EXPECT_EQ((*dates)[1].subject, "CN=intermediate");
  const CertificateFile file{"server", path, *dates};
  EXPECT_EQ(file.EarliestNotAfter(), kNow + 90 * kDay);
  EXPECT_EQ(file.LatestNotBefore(), kNow - kDay);
}

TEST_F(CertificateDatesTest, MissingOrEmptyFilesAreErrors) {
  EXPECT_FALSE(ReadCertificateDates(dir_.path() + "/none.pem").ok());
  const std::string empty = Write("empty.pem", "no certificate here\n");
  absl::StatusOr<std::vector<CertificateDates>> dates = ReadCertificateDates(empty);
  ASSERT_FALSE(dates.ok());
  EXPECT_NE(dates.status().message().find(empty), std::string::npos) << dates.status();
}

TEST(CertificateValidityTest, Thresholds) {
  auto check = [](absl::Duration before, absl::Duration after) {
    return CheckValidity({"CN=x", kNow + before, kNow + after}, kNow);
  };
  EXPECT_EQ(check(-kDay, 31 * kDay), Validity::kValid);
  EXPECT_EQ(check(-kDay, 30 * kDay + absl::Seconds(1)), Validity::kValid);
  EXPECT_EQ(check(-kDay, 30 * kDay), Validity::kExpiresSoon);
  EXPECT_EQ(check(-kDay, absl::Seconds(1)), Validity::kExpiresSoon);
  EXPECT_EQ(check(-kDay, absl::ZeroDuration()), Validity::kExpired);
  EXPECT_EQ(check(-10 * kDay, -kDay), Validity::kExpired);
  EXPECT_EQ(check(absl::Seconds(1), 90 * kDay), Validity::kNotYetValid);
  EXPECT_EQ(check(absl::ZeroDuration(), 90 * kDay), Validity::kValid);
}

TEST(CertificateValidityTest, NotesSayTheDateAndTheDaysLeft) {
  const CertificateFile server{"server",
                               "/etc/nfs3d/server.pem",
                               {{"CN=good", kNow - kDay, kNow + 365 * kDay},
                                {"CN=soon", kNow - kDay, kNow + 15 * kDay + absl::Hours(3)},
                                {"CN=old", kNow - 10 * kDay, kNow - kDay},
                                {"CN=early", kNow + absl::Hours(2), kNow + 90 * kDay}}};
  const std::vector<ValidityNote> notes = CheckFile(server, kNow);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_FALSE(notes[0].error);
  EXPECT_EQ(notes[0].text,
            "tls: server certificate CN=soon (/etc/nfs3d/server.pem) expires on "
            "2027-01-30 11:00:00 UTC, in 15 days");
  EXPECT_TRUE(notes[1].error);
  EXPECT_EQ(notes[1].text,
            "tls: server certificate CN=old (/etc/nfs3d/server.pem) expired on "
            "2027-01-14 08:00:00 UTC: TLS clients refuse it");
  EXPECT_TRUE(notes[2].error);
  EXPECT_EQ(notes[2].text,
            "tls: server certificate CN=early (/etc/nfs3d/server.pem) is not valid before "
            "2027-01-15 10:00:00 UTC: TLS clients refuse it");
  const CertificateFile ca{"ca", "/etc/nfs3d/ca.pem", {{"CN=ca", kNow - kDay, kNow + kDay}}};
  const std::vector<ValidityNote> ca_notes = CheckFile(ca, kNow);
  ASSERT_EQ(ca_notes.size(), 1u);
  EXPECT_EQ(ca_notes[0].text,
            "tls: ca certificate CN=ca (/etc/nfs3d/ca.pem) expires on 2027-01-16 08:00:00 UTC, "
            "in 1 day");
  EXPECT_NE(CheckFile(ca, kNow + absl::Hours(30)).at(0).text.find("client certificates"),
            std::string::npos);
  const CertificateFile last{"ca", "/x", {{"CN=ca", kNow - kDay, kNow + absl::Hours(5)}}};
  EXPECT_NE(CheckFile(last, kNow).at(0).text.find("in less than a day"), std::string::npos);
}

TEST_F(CertificateDatesTest, HostileSubjectsAreEscapedAndBounded) {
  const std::string cn = "evil\n2027-01-01 nfs3d[1]: ERROR forged\x1b[2J\"" + std::string(400, 'a');
  const TestCertificate c = MakeTestCertificate(At(-kDay), At(kDay), cn);
  ASSERT_FALSE(c.certificate_pem.empty());
  absl::StatusOr<std::vector<CertificateDates>> dates =
      ReadCertificateDates(Write("evil.pem", c.certificate_pem));
  ASSERT_TRUE(dates.ok()) << dates.status();
  const std::string& subject = dates->at(0).subject;
  for (char ch : subject) {
    EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << static_cast<int>(ch) << " in " << subject;
  }
  EXPECT_EQ(subject.find('\n'), std::string::npos);
  EXPECT_NE(subject.find("\\n2027"), std::string::npos) << subject;
  EXPECT_LE(subject.size(), 256u * 4 + 3);
  EXPECT_EQ(subject.substr(subject.size() - 3), "...");
  EXPECT_EQ(PrintableSubject("CN=a\tb", 4), "CN=a...");
  EXPECT_EQ(PrintableSubject("CN=\x7f\xff"), "CN=\\x7f\\xff");
}

TEST_F(CertificateDatesTest, CredentialsKeepTheDatesOfWhatTheyLoaded) {
  const absl::Time now = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
  const TestCertificate server =
      MakeTestCertificate(absl::ToTimeT(now - kDay), absl::ToTimeT(now + 20 * kDay), "server");
  const TestCertificate ca =
      MakeTestCertificate(absl::ToTimeT(now - kDay), absl::ToTimeT(now + 900 * kDay), "ca");
  const TlsFiles files{Write("server.pem", server.certificate_pem),
                       Write("server.key", server.key_pem), Write("ca.pem", ca.certificate_pem)};
  absl::StatusOr<std::shared_ptr<const TlsCredentials>> creds = TlsCredentials::Load(files);
  ASSERT_TRUE(creds.ok()) << creds.status();
  const std::vector<CertificateFile>& loaded = (*creds)->files();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].role, "server");
  EXPECT_EQ(loaded[0].path, files.certificate);
  EXPECT_EQ(loaded[0].EarliestNotAfter(), now + 20 * kDay);
  EXPECT_EQ(loaded[1].role, "ca");
  EXPECT_EQ(loaded[1].EarliestNotAfter(), now + 900 * kDay);
  absl::StatusOr<std::shared_ptr<const TlsCredentials>> no_ca =
      TlsCredentials::Load({files.certificate, files.key, ""});
  ASSERT_TRUE(no_ca.ok()) << no_ca.status();
  EXPECT_EQ((*no_ca)->files().size(), 1u);
}

}  // namespace
}  // namespace nfs3d::rpc::tls
