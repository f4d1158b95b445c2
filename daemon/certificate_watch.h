// Tells the operator when a [tls] certificate in force is about to lapse:
// checked when the files are loaded (start, each reload) and then every
// `period` by a thread of its own, which sleeps otherwise; its findings go
// to the log (rpc/tls/certificate_dates.h: warning within 30 days, error
// when expired or not yet valid) and its dates to /metrics:
//   nfs3d_tls_certificate_not_after_seconds{certificate="server"|"ca"}
//   nfs3d_tls_certificate_not_before_seconds{certificate="server"|"ca"}
// (Unix time; over a file's certificates, the earliest end and the latest
// start), so an alert needs no log scraping.
#ifndef NFS3D_DAEMON_CERTIFICATE_WATCH_H_
#define NFS3D_DAEMON_CERTIFICATE_WATCH_H_

#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "rpc/tls/certificate_dates.h"
#include "stats/prometheus.h"

namespace nfs3d::daemon {

class CertificateWatch {
 public:
  struct Options {
    absl::Duration period = absl::Hours(12);
    std::function<absl::Time()> now = [] { return absl::Now(); };
    // Where findings go; default: the log (errors as errors).
    std::function<void(const rpc::tls::ValidityNote&)> report;
  };
  explicit CertificateWatch(Options options);
  ~CertificateWatch();  // stops and joins the thread
  CertificateWatch(const CertificateWatch&) = delete;
  CertificateWatch& operator=(const CertificateWatch&) = delete;

  // The files now in force: checked at once, then every period.
  void Set(std::vector<rpc::tls::CertificateFile> files);
  // Reports what the files in force hold that is not valid now.
  void Check();
  // The two families above; nothing before the first Set.
  void AppendMetrics(std::vector<stats::Family>* out) const;

 private:
  void Loop();

  Options options_;
  mutable absl::Mutex mu_;
  std::vector<rpc::tls::CertificateFile> files_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started by the first Set
};

}  // namespace nfs3d::daemon

#endif  // NFS3D_DAEMON_CERTIFICATE_WATCH_H_
