// A Backend that gives every call of another backend a deadline. For
// backends whose calls can wait without bound on something remote:
// libcephfs waits as long as an MDS or OSD does not answer and cannot cancel
// a call, so a stopped cluster daemon would otherwise hold every worker (and
// the io thread answering GETATTR inline) of the whole server.
//
// Two ways to run a call:
//  - Inline, on the caller's own thread, when options.rescuer knows the
//    request that thread serves (an RPC call on a worker): no thread
//    hand-off, no copies (a hand-off cost 15-45 us of server CPU per
//    GETATTR on a virtualised host, more than the call). A watchdog thread
//    looks at the running calls every timeout / kTicks; one past the
//    timeout is marked overrun and its request answered by the rescuer (the
//    RPC layer runs the call again under FailFastScope: NFS3ERR_JUKEBOX, and
//    drops the late reply), while the call keeps its thread, and the
//    caller's buffers, until the cluster answers.
//  - Handed off, for a caller the rescuer knows nothing of (Run, CephFS
//    locks, background threads): the call runs on one of this object's
//    threads while the caller waits at most `timeout`. Answered in time: the
//    caller gets the result and the out-parameters as if it had made the
//    call itself. Not: the caller gets kErrJukebox; the call keeps its
//    thread, owns copies of everything it uses (arguments, WRITE data, READ
//    buffer, out-parameters) and its result is dropped. At most
//    options.threads calls run at once; more wait in a queue, and a call
//    whose deadline passes there never runs (kErrJukebox, no stall).
// Either way:
//  - A call that overran marks the backend stalled: new calls fail at once
//    with kErrJukebox, so no further thread waits on it, until every overrun
//    call has returned (the cluster answers again). Service resumes by itself.
//  - A COMMIT or stable WRITE that overran leaves the sync's outcome unknown:
//    options.sync_unknown is called (the CephFS backend changes its write
//    verifier), so clients resend what they wrote UNSTABLE.
//  - Handed-off READDIR entries are gathered on the call's thread (at most
//    kReadDirBatch per call) and handed to `emit` by the caller; READDIRPLUS
//    looks its entries up with one LookupEach, so one hand-off for all.
// Destruction waits for handed-off calls still inside the backend; inline
// ones belong to their callers.
#ifndef NFS3D_VFS_DEADLINE_BACKEND_H_
#define NFS3D_VFS_DEADLINE_BACKEND_H_

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "vfs/backend.h"
#include "vfs/request_rescuer.h"

namespace nfs3d::vfs {

struct DeadlineOptions {
  absl::Duration timeout = absl::Seconds(30);
  size_t threads = 16;
  std::function<void()> sync_unknown;  // null: nothing to do
  std::string name = "backend";        // for logs, e.g. the cluster
  // Knows the requests threads serve; null: every call is handed off. Must
  // outlive the backend.
  RequestRescuer* rescuer = nullptr;
};

class DeadlineBackend : public Backend {
 public:
  static constexpr size_t kReadDirBatch = 4096;
  // The watchdog looks at inline calls this many times per timeout: one is
  // answered between 1 and 1 + 1 / kTicks timeouts after it began.
  static constexpr uint64_t kTicks = 8;

  // While one exists on a thread, calls of every DeadlineBackend made there
  // fail at once with kErrJukebox: for answering a request whose call
  // overran (its answer must never depend on the backend).
  class FailFastScope {
   public:
    FailFastScope();
    ~FailFastScope();
    FailFastScope(const FailFastScope&) = delete;
    FailFastScope& operator=(const FailFastScope&) = delete;

   private:
    bool outer_;
  };

  // `inner` outlives this object.
  DeadlineBackend(Backend* inner, DeadlineOptions options);
  ~DeadlineBackend() override;
  DeadlineBackend(const DeadlineBackend&) = delete;
  DeadlineBackend& operator=(const DeadlineBackend&) = delete;

  // True while calls fail at once (a call overran and has not returned).
  bool stalled() const { return overrun_.load(std::memory_order_acquire) > 0; }

  absl::StatusOr<FileHandle> RootHandle(uint32_t export_id) override;
  absl::Status RefreshExport(uint32_t export_id) override;
  absl::StatusOr<std::optional<Quota>> GetQuota(uint32_t export_id, QuotaKind kind,
                                                uint32_t id) override;
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
  absl::StatusOr<CreateResult> Mkdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                                     const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Symlink(const Cred& cred, const FileHandle& dir,
                                       std::string_view name, std::string_view target,
                                       const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Mknod(const Cred& cred, const FileHandle& dir, std::string_view name,
                                     FileType type, uint32_t major, uint32_t minor,
                                     const SetAttributes& attrs, Wcc* dir_wcc) override;
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
  absl::Status ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie, Verifier* verifier,
                       const std::function<bool(const DirEntry&)>& emit, bool* eof,
                       std::optional<Attributes>* dir_attributes) override;
  absl::StatusOr<FsStat> StatFs(const Cred& cred, const FileHandle& fh,
                                std::optional<Attributes>* attributes) override;
  absl::StatusOr<PathConf> GetPathConf(const Cred& cred, const FileHandle& fh,
                                       std::optional<Attributes>* attributes) override;
  absl::StatusOr<Verifier> Commit(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, Wcc* wcc) override;
  Verifier WriteVerifier() const override { return inner_->WriteVerifier(); }
  absl::StatusOr<AclPair> GetAcl(const Cred& cred, const FileHandle& fh,
                                 std::optional<Attributes>* attributes) override;
  absl::Status SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                      const Acl* default_acl, std::optional<Attributes>* attributes) override;

  // Runs `call` on a thread of this object, waiting at most the timeout (see
  // above); for calls of the wrapped backend outside the Backend interface
  // (e.g. CephFS locks). `call` must own what it uses.
  absl::Status Run(std::function<absl::Status()> call);

 private:
  struct Job;
  struct Slot;
  // Why a call must fail at once; OK: it may run.
  absl::Status Refusal() const;
  // Runs call() inline if the rescuer knows this thread's request (see
  // above); nullopt: hand it off instead.
  template <typename R, typename F>
  std::optional<R> Inline(bool syncs, F&& call);
  // This thread's slot, made at its first inline call.
  Slot* SlotHere();
  // An inline call the watchdog marked overrun has returned.
  void OverrunReturned(Slot* slot);
  void Watch();
  // One more overrun call; logs when the backend becomes stalled.
  void NoteOverrun();
  void NoteOverrunReturned();
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
  std::atomic<size_t> overrun_{0};  // calls running past their deadline
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
  // Inline calls: the watchdog's clock (ticks since start) and every thread's
  // slot.
  const uint64_t id_;  // tells this object's slots from another's
  std::atomic<uint64_t> tick_{1};
  std::vector<std::unique_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  std::thread watchdog_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_DEADLINE_BACKEND_H_
