#include "daemon/certificate_watch.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "common/log.h"

namespace nfs3d::daemon {

CertificateWatch::CertificateWatch(Options options) : options_(std::move(options)) {
  if (!options_.report) {
    options_.report = [](const rpc::tls::ValidityNote& note) {
      if (note.error) {
        NFS3D_LOG_ERROR("%s", note.text);
      } else {
        NFS3D_LOG_WARNING("%s", note.text);
      }
    };
  }
}

CertificateWatch::~CertificateWatch() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void CertificateWatch::Set(std::vector<rpc::tls::CertificateFile> files) {
  {
    absl::MutexLock lock(&mu_);
    files_ = std::move(files);
  }
  Check();
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void CertificateWatch::Check() {
  std::vector<rpc::tls::ValidityNote> notes;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = options_.now();
    for (const rpc::tls::CertificateFile& f : files_) {
      for (rpc::tls::ValidityNote& n : rpc::tls::CheckFile(f, now)) notes.push_back(std::move(n));
    }
  }
  for (const rpc::tls::ValidityNote& n : notes) options_.report(n);
}

void CertificateWatch::Loop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), options_.period)) return;
    }
    Check();
  }
}

void CertificateWatch::AppendMetrics(std::vector<stats::Family>* out) const {
  absl::MutexLock lock(&mu_);
  if (files_.empty()) return;
  stats::Family after{"nfs3d_tls_certificate_not_after_seconds",
                      "When the first certificate of a [tls] file in force expires (Unix time).",
                      "gauge",
                      {}};
  stats::Family before{"nfs3d_tls_certificate_not_before_seconds",
                       "When every certificate of a [tls] file in force is valid from (Unix time).",
                       "gauge",
                       {}};
  for (const rpc::tls::CertificateFile& f : files_) {
    const std::string label = absl::StrCat("certificate=\"", f.role, "\"");
    after.samples.emplace_back(label,
                               absl::ToDoubleSeconds(f.EarliestNotAfter() - absl::UnixEpoch()));
    before.samples.emplace_back(label,
                                absl::ToDoubleSeconds(f.LatestNotBefore() - absl::UnixEpoch()));
  }
  out->push_back(std::move(after));
  out->push_back(std::move(before));
}

}  // namespace nfs3d::daemon
