#include "tools/nfs3powercut/writer.h"

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "tools/nfs3bench/pattern.h"
#include "tools/nfs3powercut/journal.h"
#include "tools/nfs3powercut/model.h"
#include "tools/nfs3powercut/nfs_calls.h"
#include "xdr/nfs3_client_codec.h"

namespace nfs3d::powercut {
namespace {

// d0, d1 take FILE_SYNC writes; d2, d3 UNSTABLE writes and COMMITs.
constexpr int kDataFiles = 4;
constexpr uint32_t kMaxWrite = 128 << 10;
constexpr uint32_t kModes[] = {0600, 0604, 0640, 0644, 0660, 0664, 0700, 0755};

class Writer {
 public:
  Writer(bench::Session& s, const WriterOptions& o) : s_(s), o_(o), rng_(o.seed) {}

  absl::Status Run() {
    if (absl::Status st = Setup(); !st.ok()) return st;
    const absl::Time deadline = absl::Now() + o_.time;
    while (absl::Now() < deadline) {
      if (absl::Status st = Step(); !st.ok()) return st;
      ++calls_;
    }
    return absl::OkStatus();
  }
  uint64_t calls() const { return calls_; }

 private:
  absl::Status Journal(Line line) {
    if (line[0] == "done") {
      if (absl::Status st = model_.Apply(line, true); !st.ok()) return st;
    }
    return journal_.Append(line);
  }

  absl::Status Setup() {
    if (absl::Status st = journal_.Open(o_.journal); !st.ok()) return st;
    if (absl::Status st = Journal({"seed", absl::StrCat(o_.seed)}); !st.ok()) return st;
    absl::StatusOr<nfs3::nfs_fh3> dir = s_.MkdirOrLookup(s_.root(), o_.dir);
    if (!dir.ok()) return absl::UnavailableError(dir.status().message());
    dir_ = *dir;
    if (absl::Status st = Journal({"dir", o_.dir}); !st.ok()) return st;
    for (int i = 0; i < kDataFiles; ++i) {
      if (absl::Status st = Create(absl::StrCat("d", i), 0644); !st.ok()) return st;
    }
    return Journal({"ready"});
  }

  absl::Status Step() {
    std::string kind = o_.workload;
    if (kind == "mixed") kind = std::vector<std::string>{"filesync", "unstable", "meta"}[Pick(3)];
    if (kind == "filesync") return Write(absl::StrCat("d", Pick(2)), nfs3::FILE_SYNC);
    if (kind == "unstable") {
      const std::string name = absl::StrCat("d", 2 + Pick(2));
      if (absl::Status st = Write(name, nfs3::UNSTABLE); !st.ok()) return st;
      return Pick(4) == 0 ? Commit(name) : absl::OkStatus();
    }
    return MetaStep();
  }

  uint32_t Pick(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }

  bench::Pattern& PatternOf(const std::string& name) {
    auto& p = patterns_[name];
    if (!p) p = std::make_unique<bench::Pattern>(DataSeed(o_.seed, name));
    return *p;
  }

  nfs3::nfs_fh3 HandleOf(const std::string& name) {
    nfs3::nfs_fh3 fh;
    FhFromHex(model_.objects[model_.names[name]].fh, &fh);
    return fh;
  }

  // Appends a seeded length of the file's pattern.
  absl::Status Write(const std::string& name, nfs3::stable_how stable) {
    const uint64_t offset = model_.data[name].end;
    const uint32_t len = 1 + Pick(std::min(kMaxWrite, s_.wtmax()));
    std::vector<uint8_t> buf(len);
    PatternOf(name).Fill(offset, absl::MakeSpan(buf));
    const std::string where = absl::StrCat(name, " ", offset, " ", len);
    if (absl::Status st = Journal({"begin", "write", name, absl::StrCat(offset), absl::StrCat(len),
                                   absl::StrCat(static_cast<int>(stable))});
        !st.ok()) {
      return st;
    }
    nfs3::WRITE3args args{HandleOf(name), offset, len, stable, absl::MakeConstSpan(buf)};
    nfs3::WRITE3res res;
    if (absl::Status st = Call(s_, nfs3::kWrite, args, &res); !st.ok()) return st;
    if (res.status != nfs3::NFS3_OK) return NfsFailure("WRITE", res.status, where);
    if (res.count != len) return absl::DataLossError(absl::StrCat("WRITE ", where, ": short"));
    if (res.committed < stable) {
      return absl::DataLossError(
          absl::StrCat("WRITE ", where, ": committed ", res.committed, " is less than asked for"));
    }
    return Journal({"done", "write", name, absl::StrCat(offset), absl::StrCat(len),
                    absl::StrCat(static_cast<int>(res.committed)), Hex(res.verf)});
  }

  absl::Status Commit(const std::string& name) {
    if (absl::Status st = Journal({"begin", "commit", name}); !st.ok()) return st;
    nfs3::COMMIT3res res;
    if (absl::Status st = Call(s_, nfs3::kCommit, nfs3::COMMIT3args{HandleOf(name), 0, 0}, &res);
        !st.ok()) {
      return st;
    }
    if (res.status != nfs3::NFS3_OK) return NfsFailure("COMMIT", res.status, name);
    return Journal({"done", "commit", name, Hex(res.verf)});
  }

  absl::Status Create(const std::string& name, uint32_t mode, bool exclusive = false);
  absl::Status MetaStep();
  absl::Status Namespace(const Line& op);

  bench::Session& s_;
  const WriterOptions& o_;
  std::mt19937_64 rng_;
  JournalWriter journal_;
  Model model_;
  nfs3::nfs_fh3 dir_;
  std::map<std::string, std::unique_ptr<bench::Pattern>> patterns_;
  uint64_t next_name_ = 0;
  uint64_t calls_ = 0;
};

// CREATE GUARDED with mode, or EXCLUSIVE with a seeded verifier (the
// server picks the mode: nfs3d 0600; a client would SETATTR next).
absl::Status Writer::Create(const std::string& name, uint32_t mode, bool exclusive) {
  nfs3::CREATE3args args;
  args.where = {dir_, name};
  args.mode = exclusive ? nfs3::EXCLUSIVE : nfs3::GUARDED;
  args.obj_attributes.mode = mode;
  for (uint8_t& b : args.verf) b = exclusive ? static_cast<uint8_t>(Pick(256)) : 0;
  const Line verf = exclusive ? Line{Hex(args.verf)} : Line{};
  Line begin = {"begin", exclusive ? "xcreate" : "create", name,
                absl::StrFormat("%o", exclusive ? 0600 : mode)};
  begin.insert(begin.end(), verf.begin(), verf.end());
  if (absl::Status st = Journal(begin); !st.ok()) return st;
  nfs3::CREATE3res res;
  if (absl::Status st = CallJournaled(s_, journal_, nfs3::kCreate, args, &res); !st.ok()) {
    return st;
  }
  if (res.status != nfs3::NFS3_OK) return NfsFailure("CREATE", res.status, name);
  absl::StatusOr<Found> found = LookupName(s_, dir_, name);
  if (!found.ok()) return found.status();
  if (!found->exists) return absl::DataLossError(absl::StrCat("CREATE ", name, ": not found"));
  // The mode the server gave it (its umask may have applied).
  Line done = {"done",
               begin[1],
               name,
               absl::StrFormat("%o", found->attrs.mode & 07777),
               absl::StrCat(found->attrs.fileid),
               FhHex(res.obj ? *res.obj : found->fh)};
  done.insert(done.end(), verf.begin(), verf.end());
  return Journal(done);
}

// create, rename, link, chmod, remove or an exclusive create, on the
// metadata objects that exist.
absl::Status Writer::MetaStep() {
  const std::vector<std::string> live = model_.MetaNames();
  const uint32_t op = live.size() < 2 ? 0 : Pick(6);
  const std::string fresh = absl::StrCat("m", next_name_++);
  if (op == 0) return Create(fresh, 0640);
  if (op == 5) return Create(fresh, 0600, /*exclusive=*/true);
  const std::string& name = live[Pick(live.size())];
  if (op == 1) return Namespace({"rename", name, fresh});
  if (op == 2) return Namespace({"link", name, fresh});
  if (op == 3) {
    uint32_t mode = kModes[Pick(std::size(kModes))];
    if (mode == model_.objects[model_.names[name]].mode) mode ^= 0004;
    return Namespace({"chmod", name, absl::StrFormat("%o", mode)});
  }
  return Namespace({"remove", name});
}

// One of rename FROM TO, link FROM TO, chmod NAME MODE, remove NAME.
absl::Status Writer::Namespace(const Line& op) {
  Line begin = op;
  begin.insert(begin.begin(), "begin");
  if (absl::Status st = Journal(begin); !st.ok()) return st;
  nfs3::nfsstat3 status = nfs3::NFS3_OK;
  absl::Status st;
  if (op[0] == "rename") {
    nfs3::RENAME3res res;
    st = CallJournaled(s_, journal_, nfs3::kRename, nfs3::RENAME3args{{dir_, op[1]}, {dir_, op[2]}},
                       &res);
    status = res.status;
  } else if (op[0] == "link") {
    nfs3::LINK3res res;
    st = CallJournaled(s_, journal_, nfs3::kLink, nfs3::LINK3args{HandleOf(op[1]), {dir_, op[2]}},
                       &res);
    status = res.status;
  } else if (op[0] == "chmod") {
    nfs3::SETATTR3args args;
    args.object = HandleOf(op[1]);
    uint32_t mode = 0;
    absl::numbers_internal::safe_strtou32_base(op[2], &mode, 8);
    args.new_attributes.mode = mode;
    nfs3::SETATTR3res res;
    st = CallJournaled(s_, journal_, nfs3::kSetattr, args, &res);
    status = res.status;
  } else {
    nfs3::REMOVE3res res;
    st = CallJournaled(s_, journal_, nfs3::kRemove, nfs3::REMOVE3args{{dir_, op[1]}}, &res);
    status = res.status;
  }
  if (!st.ok()) return st;
  if (status != nfs3::NFS3_OK) return NfsFailure(op[0].c_str(), status, op[1]);
  Line done = op;
  done.insert(done.begin(), "done");
  return Journal(done);
}

}  // namespace

absl::Status RunWriter(bench::Session& session, const WriterOptions& options) {
  Writer w(session, options);
  absl::Status st = w.Run();
  std::fprintf(stderr, "nfs3powercut: %llu steps acknowledged, then: %s\n",
               static_cast<unsigned long long>(w.calls()),
               st.ok() ? "time is up" : std::string(st.message()).c_str());
  // The server stopped answering: the cut.
  if (absl::IsUnavailable(st) || absl::IsDeadlineExceeded(st)) return absl::OkStatus();
  return st;
}

}  // namespace nfs3d::powercut
