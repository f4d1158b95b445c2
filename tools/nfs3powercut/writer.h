// The writing side of a power cut: seeded calls, one at a time, each
// journaled before it is sent and again when its OK reply arrives.
#ifndef NFS3D_TOOLS_NFS3POWERCUT_WRITER_H_
#define NFS3D_TOOLS_NFS3POWERCUT_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "tools/nfs3bench/session.h"

namespace nfs3d::powercut {

struct WriterOptions {
  uint64_t seed = 1;
  std::string dir;                 // created under the export root
  std::string workload = "mixed";  // filesync, unstable, meta or mixed
  absl::Duration time = absl::Minutes(10);
  std::string journal;
};

// Writes until the server stops answering (the cut) or the time is up, and
// returns OK then. An error reply is an error: no power cut explains one.
absl::Status RunWriter(bench::Session& session, const WriterOptions& options);

}  // namespace nfs3d::powercut

#endif  // NFS3D_TOOLS_NFS3POWERCUT_WRITER_H_
