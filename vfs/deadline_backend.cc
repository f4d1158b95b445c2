#include "vfs/deadline_backend.h"

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

#include "common/log.h"

namespace nfs3d::vfs {

namespace {

// Set by FailFastScope.
thread_local bool t_fail_fast = false;
// The slot of the DeadlineBackend whose id_ is `backend`, for this thread.
struct SlotCache {
  uint64_t backend = 0;
  void* slot = nullptr;
};
thread_local SlotCache t_slot;
std::atomic<uint64_t> next_backend_id{1};
constexpr uint64_t kOverrunBit = 1;

}  // namespace

// A handed-off call. Lock order: a Job's mu before the backend's mu_.
struct DeadlineBackend::Job {
  std::function<void()> call;
  bool syncs = false;
  absl::Mutex mu;
  bool started ABSL_GUARDED_BY(mu) = false;
  bool done ABSL_GUARDED_BY(mu) = false;
  bool abandoned ABSL_GUARDED_BY(mu) = false;  // its caller answered without it
};

// One thread's inline calls. Lock order: mu_ before a Slot's mu.
struct DeadlineBackend::Slot {
  std::thread::id thread;
  // 0: no call; else the tick at the call's start << 1, | kOverrunBit once
  // the watchdog took it as overrun.
  std::atomic<uint64_t> state{0};
  // Of the running call; written by its thread before `state`.
  void* request = nullptr;
  bool syncs = false;
  absl::Mutex mu;  // held by the watchdog while it answers the slot's request
};

DeadlineBackend::FailFastScope::FailFastScope() : outer_(t_fail_fast) { t_fail_fast = true; }
DeadlineBackend::FailFastScope::~FailFastScope() { t_fail_fast = outer_; }

DeadlineBackend::DeadlineBackend(Backend* inner, DeadlineOptions options)
    : inner_(inner),
      options_(std::move(options)),
      id_(next_backend_id.fetch_add(1, std::memory_order_relaxed)) {
  const size_t n = options_.threads == 0 ? 1 : options_.threads;
  threads_.reserve(n);
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { Loop(); });
  if (options_.rescuer != nullptr) watchdog_ = std::thread([this] { Watch(); });
}

DeadlineBackend::~DeadlineBackend() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (watchdog_.joinable()) watchdog_.join();
  for (std::thread& t : threads_) t.join();
}

absl::Status DeadlineBackend::Refusal() const {
  if (t_fail_fast) {
    return ErrnoError(kErrJukebox, absl::StrCat(options_.name, ": answered without waiting"));
  }
  if (overrun_.load(std::memory_order_acquire) > 0) {
    return ErrnoError(kErrJukebox, absl::StrCat(options_.name, " is not answering"));
  }
  return absl::OkStatus();
}

void DeadlineBackend::NoteOverrun() {
  if (overrun_.fetch_add(1, std::memory_order_acq_rel) == 0) {
    NFS3D_LOG_WARNING("%s did not answer within %s: calls fail with JUKEBOX until it does",
                      options_.name.c_str(), absl::FormatDuration(options_.timeout).c_str());
  }
}

void DeadlineBackend::NoteOverrunReturned() {
  if (overrun_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    NFS3D_LOG_WARNING("%s answers again: calls resume", options_.name.c_str());
  }
}

DeadlineBackend::Slot* DeadlineBackend::SlotHere() {
  if (t_slot.backend == id_) return static_cast<Slot*>(t_slot.slot);
  const std::thread::id me = std::this_thread::get_id();
  Slot* slot = nullptr;
  absl::MutexLock lock(&mu_);
  for (const std::unique_ptr<Slot>& s : slots_) {
    if (s->thread == me) slot = s.get();
  }
  if (slot == nullptr) {
    slots_.push_back(std::make_unique<Slot>());
    slot = slots_.back().get();
    slot->thread = me;
  }
  t_slot = {id_, slot};
  return slot;
}

template <typename R, typename F>
std::optional<R> DeadlineBackend::Inline(bool syncs, F&& call) {
  void* request = options_.rescuer != nullptr ? options_.rescuer->Current() : nullptr;
  if (request == nullptr && !t_fail_fast) return std::nullopt;
  if (absl::Status refused = Refusal(); !refused.ok()) return R(std::move(refused));
  Slot* slot = SlotHere();
  // A call inside a call (none today): the outer one is watched.
  if (slot->state.load(std::memory_order_relaxed) != 0) return R(call());
  slot->request = request;
  slot->syncs = syncs;
  slot->state.store(tick_.load(std::memory_order_relaxed) << 1, std::memory_order_release);
  R result = call();
  if (slot->state.exchange(0, std::memory_order_acq_rel) & kOverrunBit) OverrunReturned(slot);
  return result;
}

void DeadlineBackend::OverrunReturned(Slot* slot) {
  { absl::MutexLock wait(&slot->mu); }  // until the watchdog has answered the request
  NoteOverrunReturned();
}

void DeadlineBackend::Watch() {
  const absl::Duration tick = options_.timeout / static_cast<int64_t>(kTicks);
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), tick)) {
    const uint64_t now = tick_.fetch_add(1, std::memory_order_relaxed) + 1;
    for (const std::unique_ptr<Slot>& slot : slots_) {
      uint64_t state = slot->state.load(std::memory_order_acquire);
      // Began at tick `state >> 1`, anywhere within it: overrun once kTicks
      // whole ticks have passed since.
      if (state == 0 || (state & kOverrunBit) != 0 || (state >> 1) + kTicks + 1 > now) continue;
      absl::MutexLock answering(&slot->mu);
      if (!slot->state.compare_exchange_strong(state, state | kOverrunBit,
                                               std::memory_order_acq_rel)) {
        continue;  // it returned meanwhile
      }
      NoteOverrun();
      if (slot->syncs && options_.sync_unknown) options_.sync_unknown();
      options_.rescuer->AnswerNow(slot->request);
    }
  }
}

void DeadlineBackend::Loop() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](DeadlineBackend* b)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(b->mu_) { return b->stopping_ || !b->queue_.empty(); },
          this));
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    {
      absl::MutexLock lock(&job->mu);
      if (job->abandoned) continue;  // expired while queued: never runs
      job->started = true;
    }
    job->call();
    Finished(*job);
  }
}

void DeadlineBackend::Finished(Job& job) {
  absl::MutexLock lock(&job.mu);
  job.done = true;
  if (job.abandoned) NoteOverrunReturned();
}

absl::Status DeadlineBackend::RunTask(std::function<void()> call, bool syncs, bool* ran) {
  *ran = false;
  const absl::Time deadline = absl::Now() + options_.timeout;
  if (absl::Status refused = Refusal(); !refused.ok()) return refused;
  auto job = std::make_shared<Job>();
  job->call = std::move(call);
  job->syncs = syncs;
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(job);
  }
  absl::MutexLock lock(&job->mu);
  if (job->mu.AwaitWithDeadline(absl::Condition(&job->done), deadline)) {
    *ran = true;
    return absl::OkStatus();
  }
  job->abandoned = true;
  if (!job->started) {
    return ErrnoError(kErrJukebox, absl::StrCat(options_.name, ": too many calls waiting"));
  }
  NoteOverrun();
  if (job->syncs && options_.sync_unknown) options_.sync_unknown();
  return ErrnoError(kErrJukebox, absl::StrCat(options_.name, " did not answer in time"));
}

namespace {

// call(inner, a pointer to each out copy the caller asked for).
template <typename R, typename Fn, typename Tuple, size_t... I>
R Apply(const Fn& call, Backend* inner, Tuple& outs, const std::array<bool, sizeof...(I)>& wanted,
        std::index_sequence<I...>) {
  return call(inner, (wanted[I] ? &std::get<I>(outs) : nullptr)...);
}

template <typename Tuple, typename... Outs, size_t... I>
void CopyBack(Tuple& outs, std::index_sequence<I...>, Outs*... dest) {
  ((dest ? (void)(*dest = std::move(std::get<I>(outs))) : void()), ...);
}

}  // namespace

// Runs call with copies of the out-parameters (nullptr where the caller gave
// none) that live as long as the job; copies them back when it answered.
template <typename R, typename... Outs>
R DeadlineBackend::Call(std::type_identity_t<std::function<R(Backend*, Outs*...)>> call, bool syncs,
                        Outs*... outs) {
  auto box = std::make_shared<std::pair<std::optional<R>, std::tuple<Outs...>>>();
  const std::array<bool, sizeof...(Outs)> wanted{(outs != nullptr)...};
  bool ran = false;
  absl::Status st = RunTask(
      [box, wanted, call = std::move(call), inner = inner_]() {
        box->first.emplace(
            Apply<R>(call, inner, box->second, wanted, std::index_sequence_for<Outs...>()));
      },
      syncs, &ran);
  if (!ran) return st;
  CopyBack(box->second, std::index_sequence_for<Outs...>(), outs...);
  return std::move(*box->first);
}

absl::Status DeadlineBackend::Run(std::function<absl::Status()> call) {
  return Call<absl::Status>([call = std::move(call)](Backend*) { return call(); }, false);
}

absl::StatusOr<FileHandle> DeadlineBackend::RootHandle(uint32_t export_id) {
  if (std::optional<absl::StatusOr<FileHandle>> r = Inline<absl::StatusOr<FileHandle>>(
          false, [&] { return inner_->RootHandle(export_id); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<FileHandle>>(
      [export_id](Backend* b) { return b->RootHandle(export_id); }, false);
}

absl::Status DeadlineBackend::RefreshExport(uint32_t export_id) {
  if (std::optional<absl::Status> r =
          Inline<absl::Status>(false, [&] { return inner_->RefreshExport(export_id); })) {
    return std::move(*r);
  }
  return Call<absl::Status>([export_id](Backend* b) { return b->RefreshExport(export_id); }, false);
}

absl::StatusOr<std::optional<Quota>> DeadlineBackend::GetQuota(uint32_t export_id, QuotaKind kind,
                                                               uint32_t id) {
  using R = absl::StatusOr<std::optional<Quota>>;
  if (std::optional<R> r =
          Inline<R>(false, [&] { return inner_->GetQuota(export_id, kind, id); })) {
    return std::move(*r);
  }
  return Call<R>([export_id, kind, id](Backend* b) { return b->GetQuota(export_id, kind, id); },
                 false);
}

absl::StatusOr<uint32_t> DeadlineBackend::ExportOf(const FileHandle& fh) {
  return inner_->ExportOf(fh);  // decodes the handle; never waits
}

absl::StatusOr<Attributes> DeadlineBackend::GetAttr(const Cred& cred, const FileHandle& fh) {
  if (std::optional<absl::StatusOr<Attributes>> r =
          Inline<absl::StatusOr<Attributes>>(false, [&] { return inner_->GetAttr(cred, fh); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<Attributes>>([cred, fh](Backend* b) { return b->GetAttr(cred, fh); },
                                          false);
}

absl::Status DeadlineBackend::SetAttr(const Cred& cred, const FileHandle& fh,
                                      const SetAttributes& attrs, std::optional<Time> guard_ctime,
                                      Wcc* wcc) {
  if (std::optional<absl::Status> r = Inline<absl::Status>(
          false, [&] { return inner_->SetAttr(cred, fh, attrs, guard_ctime, wcc); })) {
    return std::move(*r);
  }
  return Call<absl::Status, Wcc>(
      [cred, fh, attrs, guard_ctime](Backend* b, Wcc* w) {
        return b->SetAttr(cred, fh, attrs, guard_ctime, w);
      },
      false, wcc);
}

absl::StatusOr<LookupResult> DeadlineBackend::Lookup(const Cred& cred, const FileHandle& dir,
                                                     std::string_view name,
                                                     std::optional<Attributes>* dir_attributes) {
  if (std::optional<absl::StatusOr<LookupResult>> r = Inline<absl::StatusOr<LookupResult>>(
          false, [&] { return inner_->Lookup(cred, dir, name, dir_attributes); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<LookupResult>, std::optional<Attributes>>(
      [cred, dir, n = std::string(name)](Backend* b, std::optional<Attributes>* a) {
        return b->Lookup(cred, dir, n, a);
      },
      false, dir_attributes);
}

std::vector<absl::StatusOr<LookupResult>> DeadlineBackend::LookupEach(
    const Cred& cred, const FileHandle& dir, absl::Span<const std::string_view> names) {
  using Results = std::vector<absl::StatusOr<LookupResult>>;
  if (std::optional<absl::StatusOr<Results>> r = Inline<absl::StatusOr<Results>>(
          false, [&] { return absl::StatusOr<Results>(inner_->LookupEach(cred, dir, names)); })) {
    if (!r->ok()) return Results(names.size(), r->status());
    return std::move(**r);
  }
  auto out = std::make_shared<Results>();
  std::vector<std::string> own(names.begin(), names.end());
  absl::Status st = Run([inner = inner_, cred, dir, own = std::move(own), out] {
    const std::vector<std::string_view> views(own.begin(), own.end());
    *out = inner->LookupEach(cred, dir, views);
    return absl::OkStatus();
  });
  if (!st.ok()) return Results(names.size(), st);
  return std::move(*out);
}

absl::StatusOr<AccessResult> DeadlineBackend::Access(const Cred& cred, const FileHandle& fh,
                                                     uint32_t requested,
                                                     std::optional<Attributes>* attributes) {
  if (std::optional<absl::StatusOr<AccessResult>> r = Inline<absl::StatusOr<AccessResult>>(
          false, [&] { return inner_->Access(cred, fh, requested, attributes); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<AccessResult>, std::optional<Attributes>>(
      [cred, fh, requested](Backend* b, std::optional<Attributes>* a) {
        return b->Access(cred, fh, requested, a);
      },
      false, attributes);
}

absl::StatusOr<std::string> DeadlineBackend::Readlink(const Cred& cred, const FileHandle& fh,
                                                      std::optional<Attributes>* attributes) {
  if (std::optional<absl::StatusOr<std::string>> r = Inline<absl::StatusOr<std::string>>(
          false, [&] { return inner_->Readlink(cred, fh, attributes); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<std::string>, std::optional<Attributes>>(
      [cred, fh](Backend* b, std::optional<Attributes>* a) { return b->Readlink(cred, fh, a); },
      false, attributes);
}

absl::StatusOr<ReadResult> DeadlineBackend::Read(const Cred& cred, const FileHandle& fh,
                                                 uint64_t offset, uint32_t count, uint8_t* buf) {
  if (std::optional<absl::StatusOr<ReadResult>> r = Inline<absl::StatusOr<ReadResult>>(
          false, [&] { return inner_->Read(cred, fh, offset, count, buf); })) {
    return std::move(*r);
  }
  std::shared_ptr<uint8_t[]> data(new uint8_t[count]);  // the call's own buffer
  absl::StatusOr<ReadResult> r = Call<absl::StatusOr<ReadResult>>(
      [cred, fh, offset, count, data](Backend* b) {
        return b->Read(cred, fh, offset, count, data.get());
      },
      false);
  if (r.ok()) std::copy_n(data.get(), std::min(r->count, count), buf);
  return r;
}

absl::StatusOr<WriteResult> DeadlineBackend::Write(const Cred& cred, const FileHandle& fh,
                                                   uint64_t offset, absl::Span<const uint8_t> data,
                                                   StableHow stable, Wcc* wcc) {
  if (std::optional<absl::StatusOr<WriteResult>> r = Inline<absl::StatusOr<WriteResult>>(
          stable != StableHow::kUnstable,
          [&] { return inner_->Write(cred, fh, offset, data, stable, wcc); })) {
    return std::move(*r);
  }
  auto copy = std::make_shared<std::vector<uint8_t>>(data.begin(), data.end());
  return Call<absl::StatusOr<WriteResult>, Wcc>(
      [cred, fh, offset, copy, stable](Backend* b, Wcc* w) {
        return b->Write(cred, fh, offset, *copy, stable, w);
      },
      stable != StableHow::kUnstable, wcc);
}

absl::StatusOr<CreateResult> DeadlineBackend::Create(const Cred& cred, const FileHandle& dir,
                                                     std::string_view name, CreateMode mode,
                                                     const SetAttributes& attrs,
                                                     const Verifier& verifier, Wcc* dir_wcc) {
  if (std::optional<absl::StatusOr<CreateResult>> r = Inline<absl::StatusOr<CreateResult>>(
          false, [&] { return inner_->Create(cred, dir, name, mode, attrs, verifier, dir_wcc); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<CreateResult>, Wcc>(
      [cred, dir, n = std::string(name), mode, attrs, verifier](Backend* b, Wcc* w) {
        return b->Create(cred, dir, n, mode, attrs, verifier, w);
      },
      false, dir_wcc);
}

absl::StatusOr<CreateResult> DeadlineBackend::Mkdir(const Cred& cred, const FileHandle& dir,
                                                    std::string_view name,
                                                    const SetAttributes& attrs, Wcc* dir_wcc) {
  if (std::optional<absl::StatusOr<CreateResult>> r = Inline<absl::StatusOr<CreateResult>>(
          false, [&] { return inner_->Mkdir(cred, dir, name, attrs, dir_wcc); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<CreateResult>, Wcc>(
      [cred, dir, n = std::string(name), attrs](Backend* b, Wcc* w) {
        return b->Mkdir(cred, dir, n, attrs, w);
      },
      false, dir_wcc);
}

absl::StatusOr<CreateResult> DeadlineBackend::Symlink(const Cred& cred, const FileHandle& dir,
                                                      std::string_view name,
                                                      std::string_view target,
                                                      const SetAttributes& attrs, Wcc* dir_wcc) {
  if (std::optional<absl::StatusOr<CreateResult>> r = Inline<absl::StatusOr<CreateResult>>(
          false, [&] { return inner_->Symlink(cred, dir, name, target, attrs, dir_wcc); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<CreateResult>, Wcc>(
      [cred, dir, n = std::string(name), t = std::string(target), attrs](Backend* b, Wcc* w) {
        return b->Symlink(cred, dir, n, t, attrs, w);
      },
      false, dir_wcc);
}

absl::StatusOr<CreateResult> DeadlineBackend::Mknod(const Cred& cred, const FileHandle& dir,
                                                    std::string_view name, FileType type,
                                                    uint32_t major, uint32_t minor,
                                                    const SetAttributes& attrs, Wcc* dir_wcc) {
  if (std::optional<absl::StatusOr<CreateResult>> r = Inline<absl::StatusOr<CreateResult>>(
          false,
          [&] { return inner_->Mknod(cred, dir, name, type, major, minor, attrs, dir_wcc); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<CreateResult>, Wcc>(
      [cred, dir, n = std::string(name), type, major, minor, attrs](Backend* b, Wcc* w) {
        return b->Mknod(cred, dir, n, type, major, minor, attrs, w);
      },
      false, dir_wcc);
}

absl::Status DeadlineBackend::Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                                     Wcc* dir_wcc) {
  if (std::optional<absl::Status> r =
          Inline<absl::Status>(false, [&] { return inner_->Remove(cred, dir, name, dir_wcc); })) {
    return std::move(*r);
  }
  return Call<absl::Status, Wcc>(
      [cred, dir, n = std::string(name)](Backend* b, Wcc* w) { return b->Remove(cred, dir, n, w); },
      false, dir_wcc);
}

absl::Status DeadlineBackend::Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                                    Wcc* dir_wcc) {
  if (std::optional<absl::Status> r =
          Inline<absl::Status>(false, [&] { return inner_->Rmdir(cred, dir, name, dir_wcc); })) {
    return std::move(*r);
  }
  return Call<absl::Status, Wcc>(
      [cred, dir, n = std::string(name)](Backend* b, Wcc* w) { return b->Rmdir(cred, dir, n, w); },
      false, dir_wcc);
}

absl::Status DeadlineBackend::Rename(const Cred& cred, const FileHandle& from_dir,
                                     std::string_view from_name, const FileHandle& to_dir,
                                     std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  if (std::optional<absl::Status> r = Inline<absl::Status>(false, [&] {
        return inner_->Rename(cred, from_dir, from_name, to_dir, to_name, from_wcc, to_wcc);
      })) {
    return std::move(*r);
  }
  return Call<absl::Status, Wcc, Wcc>(
      [cred, from_dir, f = std::string(from_name), to_dir, t = std::string(to_name)](
          Backend* b, Wcc* fw, Wcc* tw) { return b->Rename(cred, from_dir, f, to_dir, t, fw, tw); },
      false, from_wcc, to_wcc);
}

absl::Status DeadlineBackend::Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                                   std::string_view name,
                                   std::optional<Attributes>* file_attributes, Wcc* dir_wcc) {
  if (std::optional<absl::Status> r = Inline<absl::Status>(
          false, [&] { return inner_->Link(cred, fh, dir, name, file_attributes, dir_wcc); })) {
    return std::move(*r);
  }
  return Call<absl::Status, std::optional<Attributes>, Wcc>(
      [cred, fh, dir, n = std::string(name)](Backend* b, std::optional<Attributes>* a, Wcc* w) {
        return b->Link(cred, fh, dir, n, a, w);
      },
      false, file_attributes, dir_wcc);
}

namespace {

struct GatheredEntry {
  uint64_t fileid;
  std::string name;
  uint64_t cookie;
};

}  // namespace

absl::Status DeadlineBackend::ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie,
                                      Verifier* verifier,
                                      const std::function<bool(const DirEntry&)>& emit, bool* eof,
                                      std::optional<Attributes>* dir_attributes) {
  if (std::optional<absl::Status> r = Inline<absl::Status>(false, [&] {
        return inner_->ReadDir(cred, dir, cookie, verifier, emit, eof, dir_attributes);
      })) {
    return std::move(*r);
  }
  auto entries = std::make_shared<std::vector<GatheredEntry>>();
  Verifier in = verifier ? *verifier : Verifier{};
  bool inner_eof = false;
  absl::Status st = Call<absl::Status, Verifier, bool, std::optional<Attributes>>(
      [cred, dir, cookie, in, entries](Backend* b, Verifier* v, bool* e,
                                       std::optional<Attributes>* a) {
        if (v) *v = in;
        return b->ReadDir(
            cred, dir, cookie, v,
            [entries](const DirEntry& entry) {
              if (entries->size() >= kReadDirBatch) return false;
              entries->push_back({entry.fileid, std::string(entry.name), entry.cookie});
              return true;
            },
            e, a);
      },
      false, verifier, &inner_eof, dir_attributes);
  *eof = false;
  if (!st.ok()) return st;
  for (const GatheredEntry& g : *entries) {
    if (!emit(DirEntry{g.fileid, g.name, g.cookie})) return absl::OkStatus();
  }
  *eof = inner_eof;
  return absl::OkStatus();
}

absl::StatusOr<FsStat> DeadlineBackend::StatFs(const Cred& cred, const FileHandle& fh,
                                               std::optional<Attributes>* attributes) {
  if (std::optional<absl::StatusOr<FsStat>> r = Inline<absl::StatusOr<FsStat>>(
          false, [&] { return inner_->StatFs(cred, fh, attributes); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<FsStat>, std::optional<Attributes>>(
      [cred, fh](Backend* b, std::optional<Attributes>* a) { return b->StatFs(cred, fh, a); },
      false, attributes);
}

absl::StatusOr<AclPair> DeadlineBackend::GetAcl(const Cred& cred, const FileHandle& fh,
                                                std::optional<Attributes>* attributes) {
  if (std::optional<absl::StatusOr<AclPair>> r = Inline<absl::StatusOr<AclPair>>(
          false, [&] { return inner_->GetAcl(cred, fh, attributes); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<AclPair>, std::optional<Attributes>>(
      [cred, fh](Backend* b, std::optional<Attributes>* a) { return b->GetAcl(cred, fh, a); },
      false, attributes);
}

absl::Status DeadlineBackend::SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                                     const Acl* default_acl,
                                     std::optional<Attributes>* attributes) {
  if (std::optional<absl::Status> r = Inline<absl::Status>(
          false, [&] { return inner_->SetAcl(cred, fh, access, default_acl, attributes); })) {
    return std::move(*r);
  }
  // A handed-off call owns copies of the ACLs.
  std::optional<Acl> a = access ? std::optional<Acl>(*access) : std::nullopt;
  std::optional<Acl> d = default_acl ? std::optional<Acl>(*default_acl) : std::nullopt;
  return Call<absl::Status, std::optional<Attributes>>(
      [cred, fh, a, d](Backend* b, std::optional<Attributes>* out) {
        return b->SetAcl(cred, fh, a ? &*a : nullptr, d ? &*d : nullptr, out);
      },
      false, attributes);
}

absl::StatusOr<PathConf> DeadlineBackend::GetPathConf(const Cred& cred, const FileHandle& fh,
                                                      std::optional<Attributes>* attributes) {
  if (std::optional<absl::StatusOr<PathConf>> r = Inline<absl::StatusOr<PathConf>>(
          false, [&] { return inner_->GetPathConf(cred, fh, attributes); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<PathConf>, std::optional<Attributes>>(
      [cred, fh](Backend* b, std::optional<Attributes>* a) { return b->GetPathConf(cred, fh, a); },
      false, attributes);
}

absl::StatusOr<Verifier> DeadlineBackend::Commit(const Cred& cred, const FileHandle& fh,
                                                 uint64_t offset, uint32_t count, Wcc* wcc) {
  if (std::optional<absl::StatusOr<Verifier>> r = Inline<absl::StatusOr<Verifier>>(
          true, [&] { return inner_->Commit(cred, fh, offset, count, wcc); })) {
    return std::move(*r);
  }
  return Call<absl::StatusOr<Verifier>, Wcc>(
      [cred, fh, offset, count](Backend* b, Wcc* w) {
        return b->Commit(cred, fh, offset, count, w);
      },
      true, wcc);
}

}  // namespace nfs3d::vfs
