// A Backend that gives every call of another backend a deadline. For
// backends whose calls can wait without bound on something remote:
// libcephfs waits as long as an MDS or OSD does not answer and cannot cancel
// a call, so a stopped cluster daemon would otherwise hold every worker (and
// the io thread answering GETATTR inline) of the whole server.
//
//  - Each call runs on one of this object's threads while the caller waits
//    at most `timeout`. Answered in time: the caller gets the result and the
//    out-parameters as if it had made the call itself. Not: the caller gets
//    kErrJukebox (NFS3ERR_JUKEBOX, "try later"); the call keeps its thread
//    until the cluster answers, owns copies of everything it uses (arguments,
//    WRITE data, READ buffer, out-parameters) and its result is dropped.
//  - A call that overran marks the backend stalled: new calls fail at once
//    with kErrJukebox, so no further thread waits on it, until every overrun
//    call has returned (the cluster answers again). Service resumes by itself.
//  - A COMMIT or stable WRITE that overran leaves the sync's outcome unknown:
//    options.sync_unknown is called (the CephFS backend changes its write
//    verifier), so clients resend what they wrote UNSTABLE.
//  - At most options.threads calls run at once; more wait in a queue, and a
//    call whose deadline passes there never runs (kErrJukebox, no stall).
//  - READDIR entries are gathered on the call's thread (at most
//    kReadDirBatch per call) and handed to `emit` by the caller; READDIRPLUS
//    looks its entries up with one LookupEach, so one hand-off for all.
// Cost: one thread hand-off per call, and a copy of READ/WRITE data.
// Destruction waits for calls still inside the backend.
#ifndef NFS3D_VFS_DEADLINE_BACKEND_H_
#define NFS3D_VFS_DEADLINE_BACKEND_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "vfs/backend.h"

namespace nfs3d::vfs {

struct DeadlineOptions {
  absl::Duration timeout = absl::Seconds(30);
  size_t threads = 16;
  std::function<void()> sync_unknown;  // null: nothing to do
  std::string name = "backend";         // for logs, e.g. the cluster
};

class DeadlineBackend : public Backend {
 public:
  static constexpr size_t kReadDirBatch = 4096;

  // `inner` outlives this object.
  DeadlineBackend(Backend* inner, DeadlineOptions options);
  ~DeadlineBackend() override;
  DeadlineBackend(const DeadlineBackend&) = delete;
  DeadlineBackend& operator=(const DeadlineBackend&) = delete;

  // True while calls fail at once (a call overran and has not returned).
  bool stalled() const;

  absl::StatusOr<FileHandle> RootHandle(uint32_t export_id) override;
  absl::Status RefreshExport(uint32_t export_id) override;
  absl::StatusOr<uint32_t> ExportOf(const FileHandle& fh) override;
  absl::StatusOr<Attributes> GetAttr(const Cred& cred, const FileHandle& fh) override;
  absl::Status SetAttr(const Cred& cred, const FileHandle& fh, const SetAttributes& attrs,
                       std::optional<Time> guard_ctime, Wcc* wcc) override;
  absl::StatusOr<LookupResult> Lookup(const Cred& cred, const FileHandle& dir,
                                      std::string_view name,
                                      std::optional<Attributes>* dir_attributes) override;
  std::vector<absl::StatusOr<LookupResult>> LookupEach(
      const Cred& cred, const FileHandle& dir, absl::Span<const std::string_view> names) override;
  absl::StatusOr<AccessResult> Access(const Cred& cred, const FileHandle& fh, uint32_t requested,
                                      std::optional<Attributes>* attributes) override;
  absl::StatusOr<std::string> Readlink(const Cred& cred, const FileHandle& fh,
                                       std::optional<Attributes>* attributes) override;
  absl::StatusOr<ReadResult> Read(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, uint8_t* buf) override;
  absl::StatusOr<WriteResult> Write(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                    absl::Span<const uint8_t> data, StableHow stable,
                                    Wcc* wcc) override;
  absl::StatusOr<CreateResult> Create(const Cred& cred, const FileHandle& dir,
                                      std::string_view name, CreateMode mode,
                                      const SetAttributes& attrs, const Verifier& verifier,
                                      Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Mkdir(const Cred& cred, const FileHandle& dir,
                                     std::string_view name, const SetAttributes& attrs,
                                     Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Symlink(const Cred& cred, const FileHandle& dir,
                                       std::string_view name, std::string_view target,
                                       const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Mknod(const Cred& cred, const FileHandle& dir,
                                     std::string_view name, FileType type, uint32_t major,
                                     uint32_t minor, const SetAttributes& attrs,
                                     Wcc* dir_wcc) override;
  absl::Status Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                      Wcc* dir_wcc) override;
  absl::Status Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                     Wcc* dir_wcc) override;
  absl::Status Rename(const Cred& cred, const FileHandle& from_dir, std::string_view from_name,
                      const FileHandle& to_dir, std::string_view to_name, Wcc* from_wcc,
                      Wcc* to_wcc) override;
  absl::Status Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                    std::string_view name, std::optional<Attributes>* file_attributes,
                    Wcc* dir_wcc) override;
  absl::Status ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie,
                       Verifier* verifier, const std::function<bool(const DirEntry&)>& emit,
                       bool* eof, std::optional<Attributes>* dir_attributes) override;
  absl::StatusOr<FsStat> StatFs(const Cred& cred, const FileHandle& fh,
                                std::optional<Attributes>* attributes) override;
  absl::StatusOr<PathConf> GetPathConf(const Cred& cred, const FileHandle& fh,
                                       std::optional<Attributes>* attributes) override;
  absl::StatusOr<Verifier> Commit(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, Wcc* wcc) override;
  Verifier WriteVerifier() const override { return inner_->WriteVerifier(); }

  // Runs `call` on a thread of this object, waiting at most the timeout (see
  // above); for calls of the wrapped backend outside the Backend interface
  // (e.g. CephFS locks). `call` must own what it uses.
  absl::Status Run(std::function<absl::Status()> call);

 private:
  struct Job;
  // Runs call as described above; *ran: it finished in time (else the
  // status says why not).
  absl::Status RunTask(std::function<void()> call, bool syncs, bool* ran);
  template <typename R, typename... Outs>
  R Call(std::type_identity_t<std::function<R(Backend*, Outs*...)>> call, bool syncs,
         Outs*... outs);
  void Loop();
  void Finished(Job& job);

  Backend* const inner_;
  const DeadlineOptions options_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Job>> queue_ ABSL_GUARDED_BY(mu_);
  size_t overrun_ ABSL_GUARDED_BY(mu_) = 0;  // calls running past their caller's deadline
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_DEADLINE_BACKEND_H_
