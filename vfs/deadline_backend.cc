#include "vfs/deadline_backend.h"

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace nfs3d::vfs {

// One call. Lock order: a Job's mu before the backend's mu_.
struct DeadlineBackend::Job {
  std::function<void()> call;
  bool syncs = false;
  absl::Mutex mu;
  bool started ABSL_GUARDED_BY(mu) = false;
  bool done ABSL_GUARDED_BY(mu) = false;
  bool abandoned ABSL_GUARDED_BY(mu) = false;  // its caller answered without it
};

DeadlineBackend::DeadlineBackend(Backend* inner, DeadlineOptions options)
    : inner_(inner), options_(std::move(options)) {
  const size_t n = options_.threads == 0 ? 1 : options_.threads;
  threads_.reserve(n);
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { Loop(); });
}

DeadlineBackend::~DeadlineBackend() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool DeadlineBackend::stalled() const {
  absl::MutexLock lock(&mu_);
  return overrun_ > 0;
}

void DeadlineBackend::Loop() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](DeadlineBackend* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(b->mu_) {
            return b->stopping_ || !b->queue_.empty();
          },
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
  if (!job.abandoned) return;
  absl::MutexLock backend_lock(&mu_);
  if (--overrun_ == 0) {
    NFS3D_LOG_WARNING("%s answers again: calls resume", options_.name.c_str());
  }
}

absl::Status DeadlineBackend::RunTask(std::function<void()> call, bool syncs, bool* ran) {
  *ran = false;
  const absl::Time deadline = absl::Now() + options_.timeout;
  auto job = std::make_shared<Job>();
  job->call = std::move(call);
  job->syncs = syncs;
  {
    absl::MutexLock lock(&mu_);
    if (overrun_ > 0) {
      return ErrnoError(kErrJukebox, absl::StrCat(options_.name, " is not answering"));
    }
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
  {
    absl::MutexLock backend_lock(&mu_);
    if (overrun_++ == 0) {
      NFS3D_LOG_WARNING("%s did not answer within %s: calls fail with JUKEBOX until it does",
                        options_.name.c_str(), absl::FormatDuration(options_.timeout).c_str());
    }
  }
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
R DeadlineBackend::Call(std::type_identity_t<std::function<R(Backend*, Outs*...)>> call,
                        bool syncs, Outs*... outs) {
  auto box = std::make_shared<std::pair<std::optional<R>, std::tuple<Outs...>>>();
  const std::array<bool, sizeof...(Outs)> wanted{(outs != nullptr)...};
  bool ran = false;
  absl::Status st = RunTask(
      [box, wanted, call = std::move(call), inner = inner_]() {
        box->first.emplace(Apply<R>(call, inner, box->second, wanted,
                                    std::index_sequence_for<Outs...>()));
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
  return Call<absl::StatusOr<FileHandle>>(
      [export_id](Backend* b) { return b->RootHandle(export_id); }, false);
}

absl::Status DeadlineBackend::RefreshExport(uint32_t export_id) {
  return Call<absl::Status>([export_id](Backend* b) { return b->RefreshExport(export_id); },
                            false);
}

absl::StatusOr<uint32_t> DeadlineBackend::ExportOf(const FileHandle& fh) {
  return inner_->ExportOf(fh);  // decodes the handle; never waits
}

absl::StatusOr<Attributes> DeadlineBackend::GetAttr(const Cred& cred, const FileHandle& fh) {
  return Call<absl::StatusOr<Attributes>>(
      [cred, fh](Backend* b) { return b->GetAttr(cred, fh); }, false);
}

absl::Status DeadlineBackend::SetAttr(const Cred& cred, const FileHandle& fh,
                                      const SetAttributes& attrs,
                                      std::optional<Time> guard_ctime, Wcc* wcc) {
  return Call<absl::Status, Wcc>(
      [cred, fh, attrs, guard_ctime](Backend* b, Wcc* w) {
        return b->SetAttr(cred, fh, attrs, guard_ctime, w);
      },
      false, wcc);
}

absl::StatusOr<LookupResult> DeadlineBackend::Lookup(const Cred& cred, const FileHandle& dir,
                                                     std::string_view name,
                                                     std::optional<Attributes>* dir_attributes) {
  return Call<absl::StatusOr<LookupResult>, std::optional<Attributes>>(
      [cred, dir, n = std::string(name)](Backend* b, std::optional<Attributes>* a) {
        return b->Lookup(cred, dir, n, a);
      },
      false, dir_attributes);
}

std::vector<absl::StatusOr<LookupResult>> DeadlineBackend::LookupEach(
    const Cred& cred, const FileHandle& dir, absl::Span<const std::string_view> names) {
  using Results = std::vector<absl::StatusOr<LookupResult>>;
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
  return Call<absl::StatusOr<AccessResult>, std::optional<Attributes>>(
      [cred, fh, requested](Backend* b, std::optional<Attributes>* a) {
        return b->Access(cred, fh, requested, a);
      },
      false, attributes);
}

absl::StatusOr<std::string> DeadlineBackend::Readlink(const Cred& cred, const FileHandle& fh,
                                                      std::optional<Attributes>* attributes) {
  return Call<absl::StatusOr<std::string>, std::optional<Attributes>>(
      [cred, fh](Backend* b, std::optional<Attributes>* a) { return b->Readlink(cred, fh, a); },
      false, attributes);
}

absl::StatusOr<ReadResult> DeadlineBackend::Read(const Cred& cred, const FileHandle& fh,
                                                 uint64_t offset, uint32_t count, uint8_t* buf) {
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
                                                   uint64_t offset,
                                                   absl::Span<const uint8_t> data,
                                                   StableHow stable, Wcc* wcc) {
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
  return Call<absl::StatusOr<CreateResult>, Wcc>(
      [cred, dir, n = std::string(name), mode, attrs, verifier](Backend* b, Wcc* w) {
        return b->Create(cred, dir, n, mode, attrs, verifier, w);
      },
      false, dir_wcc);
}

absl::StatusOr<CreateResult> DeadlineBackend::Mkdir(const Cred& cred, const FileHandle& dir,
                                                    std::string_view name,
                                                    const SetAttributes& attrs, Wcc* dir_wcc) {
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
  return Call<absl::StatusOr<CreateResult>, Wcc>(
      [cred, dir, n = std::string(name), type, major, minor, attrs](Backend* b, Wcc* w) {
        return b->Mknod(cred, dir, n, type, major, minor, attrs, w);
      },
      false, dir_wcc);
}

absl::Status DeadlineBackend::Remove(const Cred& cred, const FileHandle& dir,
                                     std::string_view name, Wcc* dir_wcc) {
  return Call<absl::Status, Wcc>(
      [cred, dir, n = std::string(name)](Backend* b, Wcc* w) { return b->Remove(cred, dir, n, w); },
      false, dir_wcc);
}

absl::Status DeadlineBackend::Rmdir(const Cred& cred, const FileHandle& dir,
                                    std::string_view name, Wcc* dir_wcc) {
  return Call<absl::Status, Wcc>(
      [cred, dir, n = std::string(name)](Backend* b, Wcc* w) { return b->Rmdir(cred, dir, n, w); },
      false, dir_wcc);
}

absl::Status DeadlineBackend::Rename(const Cred& cred, const FileHandle& from_dir,
                                     std::string_view from_name, const FileHandle& to_dir,
                                     std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  return Call<absl::Status, Wcc, Wcc>(
      [cred, from_dir, f = std::string(from_name), to_dir, t = std::string(to_name)](
          Backend* b, Wcc* fw, Wcc* tw) { return b->Rename(cred, from_dir, f, to_dir, t, fw, tw); },
      false, from_wcc, to_wcc);
}

absl::Status DeadlineBackend::Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                                   std::string_view name,
                                   std::optional<Attributes>* file_attributes, Wcc* dir_wcc) {
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
  return Call<absl::StatusOr<FsStat>, std::optional<Attributes>>(
      [cred, fh](Backend* b, std::optional<Attributes>* a) { return b->StatFs(cred, fh, a); },
      false, attributes);
}

absl::StatusOr<PathConf> DeadlineBackend::GetPathConf(const Cred& cred, const FileHandle& fh,
                                                      std::optional<Attributes>* attributes) {
  return Call<absl::StatusOr<PathConf>, std::optional<Attributes>>(
      [cred, fh](Backend* b, std::optional<Attributes>* a) { return b->GetPathConf(cred, fh, a); },
      false, attributes);
}

absl::StatusOr<Verifier> DeadlineBackend::Commit(const Cred& cred, const FileHandle& fh,
                                                 uint64_t offset, uint32_t count, Wcc* wcc) {
  return Call<absl::StatusOr<Verifier>, Wcc>(
      [cred, fh, offset, count](Backend* b, Wcc* w) { return b->Commit(cred, fh, offset, count, w); },
      true, wcc);
}

}  // namespace nfs3d::vfs
