#include "tools/nfs3bench/workloads.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "tools/nfs3bench/crowd.h"
#include "xdr/encoder.h"
#include "xdr/nfs3_client_codec.h"

namespace nfs3d::bench {
namespace {

using nfs3::nfs_fh3;

constexpr absl::Duration kPollSlice = absl::Milliseconds(100);
constexpr uint32_t kProg = nfs3::kProgram;
constexpr uint32_t kVers = nfs3::kVersion;

std::string NfsFailure(const char* proc, const std::string& detail, nfs3::nfsstat3 status) {
  return absl::StrCat(proc, " ", detail, ": ", nfs3::StatusName(status));
}

// Keeps up to `depth` operations in flight. issue() starts one operation
// whose completion calls Done(); it returns false when nothing is left.
class Pipeline {
 public:
  Pipeline(client::AsyncRpcClient* rpc, int depth, const std::atomic<bool>* stop)
      : rpc_(rpc), depth_(std::max(depth, 1)), stop_(stop) {}

  void Run(std::function<bool()> issue, absl::Time end) {
    issue_ = std::move(issue);
    Fill();
    while (inflight_ > 0) {
      if ((stop_ && stop_->load()) || absl::Now() >= end) {
        if (stop_ && stop_->load()) Fail("interrupted");
        stopping_ = true;
      }
      absl::Status s = rpc_->Poll(kPollSlice);
      if (!s.ok()) Fail(std::string(s.message()));  // callbacks drain the rest
    }
    if (stop_ && stop_->load()) Fail("interrupted");
  }
  void Done() {
    --inflight_;
    Fill();
  }
  void Fail(const std::string& message) {
    if (error_.empty()) error_ = message;
    stopping_ = true;
  }
  const std::string& error() const { return error_; }
  bool failed() const { return !error_.empty(); }

 private:
  void Fill() {
    while (!stopping_ && inflight_ < depth_) {
      if (!issue_()) {
        stopping_ = true;
        break;
      }
      ++inflight_;
    }
  }

  client::AsyncRpcClient* rpc_;
  int depth_;
  const std::atomic<bool>* stop_;
  std::function<bool()> issue_;
  int inflight_ = 0;
  bool stopping_ = false;
  std::string error_;
};

nfs3::stable_how WireStable(StableMode m) {
  switch (m) {
    case StableMode::kUnstable:
      return nfs3::UNSTABLE;
    case StableMode::kDataSync:
      return nfs3::DATA_SYNC;
    default:
      return nfs3::FILE_SYNC;
  }
}

}  // namespace

bool ParseStableMode(const std::string& text, StableMode* out) {
  if (text == "unstable")
    *out = StableMode::kUnstable;
  else if (text == "datasync")
    *out = StableMode::kDataSync;
  else if (text == "filesync")
    *out = StableMode::kFileSync;
  else if (text == "sync")
    *out = StableMode::kSyncMount;
  else
    return false;
  return true;
}

const char* StableModeName(StableMode mode) {
  switch (mode) {
    case StableMode::kUnstable:
      return "unstable";
    case StableMode::kDataSync:
      return "datasync";
    case StableMode::kFileSync:
      return "filesync";
    case StableMode::kSyncMount:
      return "sync";
  }
  return "?";
}

bool IsWorkloadName(const std::string& n) {
  for (const char* w : {"write", "read", "randread", "randwrite", "getattr", "lookup", "create",
                        "readdirplus", "meta", "null", "createsetattr"}) {
    if (n == w) return true;
  }
  return false;
}

std::vector<std::string> ExpandWorkloads(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n == "meta") {
      for (const char* m : {"getattr", "lookup", "create", "readdirplus"}) out.push_back(m);
    } else {
      out.push_back(n);
    }
  }
  return out;
}

namespace {

// utime+stime of a local process in seconds (/proc/PID/stat fields 14, 15);
// -1 when unreadable. Lets a benchmark charge server CPU to the timed part only.
double ProcessCpuSeconds(int pid) {
  if (pid <= 0) return -1;
  FILE* f = std::fopen(absl::StrCat("/proc/", pid, "/stat").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');  // comm may contain spaces
  if (p == nullptr) return -1;
  unsigned long long utime = 0, stime = 0;
  // After ")": state(3) ... utime(14) stime(15).
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) !=
      2) {
    return -1;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Transfer size of untimed preparation and read-back: the server's maximum,
// at most 1 MiB, and over UDP at most 32 KiB (a server may advertise more
// than a datagram can carry, e.g. ganesha's MaxRead applies to both).
uint32_t UntimedXfer(const char* proto, uint32_t server_max) {
  uint32_t cap = std::string_view(proto) == "udp" ? 32768u : 1u << 20;
  return std::min(server_max, cap);
}

// Busy CPU seconds of the whole machine, all cores (/proc/stat: everything
// but idle and iowait); -1 when unreadable.
double MachineBusySeconds() {
  FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return -1;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                     steal = 0;
  int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system,
                      &idle, &iowait, &irq, &softirq, &steal);
  std::fclose(f);
  if (n != 8) return -1;
  return static_cast<double>(user + nice + system + irq + softirq + steal) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU seconds used so far by the server, nfs3bench and the whole machine, so
// a run is charged with what its timed part cost.
struct CpuSample {
  double server = -1, client = -1, machine = -1;
};

CpuSample SampleCpu(int server_pid) {
  return {ProcessCpuSeconds(server_pid), ProcessCpuSeconds(getpid()), MachineBusySeconds()};
}

void ChargeCpu(const CpuSample& start, int server_pid, RunResult* r) {
  const CpuSample now = SampleCpu(server_pid);
  auto since = [](double now, double start) { return now < 0 || start < 0 ? -1 : now - start; };
  r->server_cpu_sec = since(now.server, start.server);
  r->client_cpu_sec = since(now.client, start.client);
  r->machine_cpu_sec = since(now.machine, start.machine);
}

}  // namespace

// ---- READ/WRITE runs.

class IoRun {
 public:
  IoRun(BenchContext* ctx, const WorkloadOptions& o, RunResult* r)
      : ctx_(ctx),
        o_(o),
        r_(r),
        rpc_(&ctx->session_->rpc()),
        pipe_(rpc_,
              o.stable == StableMode::kSyncMount && o.name != "read" && o.name != "randread"
                  ? 1
                  : o.outstanding,
              ctx->stop_),
        rng_(0x5eed ^ getpid()) {}

  // Writes [0, limit) sequentially (wrapping at wrap for timed runs).
  void Write(bool random, uint64_t limit, uint64_t wrap, absl::Time end) {
    const nfs_fh3 fh = *ctx_->file_;
    const uint32_t xfer = r_->xfer;
    uint64_t blocks = std::max<uint64_t>(wrap / xfer, 1);
    nfs3::stable_how stable = WireStable(o_.stable);
    pipe_.Run(
        [&]() -> bool {
          if (limit && issued_ >= limit) return false;
          uint64_t off = random  ? (rng_() % blocks) * xfer
                         : limit ? next_
                                 : next_ % (blocks * xfer);
          uint32_t count = xfer;
          if (limit) count = static_cast<uint32_t>(std::min<uint64_t>(count, limit - issued_));
          next_ += count;
          issued_ += count;
          max_end_ = std::max(max_end_, off + count);
          nfs3::WRITE3args args;
          args.file = fh;
          args.offset = off;
          args.count = count;
          args.stable = stable;
          // The data is not copied into the call: it points into the
          // pattern (Pattern::AppendTo), CPU the server shares here.
          auto encode = [&](xdr::Encoder& e) {
            nfs3::EncodeWriteHeader(e, args);
            e.U32(count);
            ctx_->pattern_.AppendTo(off, count, e.chain());
            const uint8_t zeros[3] = {0, 0, 0};
            e.chain()->Append(zeros, xdr::PadTo4(count) - count);
          };
          rpc_->Start(
              kProg, kVers, nfs3::kWrite, encode,
              [this, off, count, stable](const absl::Status& s, absl::Span<const uint8_t> results) {
                OnWrite(s, results, off, count, stable);
              });
          return true;
        },
        end);
  }

  void OnWrite(const absl::Status& s, absl::Span<const uint8_t> results, uint64_t off,
               uint32_t count, nfs3::stable_how stable) {
    ++calls_;
    std::string where = absl::StrFormat("offset=%d count=%d", off, count);
    if (!s.ok()) {
      pipe_.Fail(absl::StrCat("WRITE ", where, ": ", s.message()));
    } else {
      xdr::Decoder d(results);
      nfs3::WRITE3res res;
      if (!xdr::Decode(d, &res)) {
        pipe_.Fail(absl::StrCat("WRITE ", where, ": malformed reply"));
      } else if (res.status != nfs3::NFS3_OK) {
        pipe_.Fail(NfsFailure("WRITE", where, res.status));
      } else if (res.count != count) {
        pipe_.Fail(absl::StrCat("WRITE ", where, ": short write, server wrote ", res.count));
      } else if (res.committed < stable) {
        pipe_.Fail(absl::StrCat("WRITE ", where, ": asked stable=", stable,
                                ", server committed=", res.committed));
      } else {
        CheckVerf(res.verf, "WRITE");
        done_ += count;
      }
    }
    pipe_.Done();
  }

  void CheckVerf(const uint8_t* verf, const char* proc) {
    if (!have_verf_) {
      std::memcpy(verf_, verf, sizeof(verf_));
      have_verf_ = true;
    } else if (std::memcmp(verf_, verf, sizeof(verf_)) != 0) {
      pipe_.Fail(absl::StrCat(proc, ": write verifier changed (server restarted or lost data)"));
    }
  }

  // COMMIT of the whole file; checks the verifier against the writes'.
  void Commit() {
    if (pipe_.failed()) return;
    nfs3::COMMIT3res res;
    absl::Status s =
        rpc_->CallSync(kProg, kVers, nfs3::kCommit, nfs3::COMMIT3args{*ctx_->file_, 0, 0}, &res);
    ++calls_;
    if (!s.ok()) {
      pipe_.Fail(absl::StrCat("COMMIT: ", s.message()));
    } else if (res.status != nfs3::NFS3_OK) {
      pipe_.Fail(NfsFailure("COMMIT", "offset=0 count=0", res.status));
    } else {
      CheckVerf(res.verf, "COMMIT");
    }
  }

  // Reads [0, limit) sequentially or `limit` bytes at random offsets, all
  // inside [0, wrap). Verifies data against the pattern when asked.
  void Read(bool random, uint64_t limit, uint64_t wrap, absl::Time end, bool verify) {
    const nfs_fh3 fh = *ctx_->file_;
    const uint32_t xfer = r_->xfer;
    uint64_t blocks = std::max<uint64_t>(wrap / xfer, 1);
    uint64_t span = wrap < xfer ? wrap : blocks * xfer;
    pipe_.Run(
        [&]() -> bool {
          if (limit && issued_ >= limit) return false;
          uint64_t off = random ? (rng_() % blocks) * xfer : next_ % span;
          uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(xfer, wrap - off));
          if (limit) count = static_cast<uint32_t>(std::min<uint64_t>(count, limit - issued_));
          next_ += count;
          issued_ += count;
          rpc_->StartCall(
              kProg, kVers, nfs3::kRead, nfs3::READ3args{fh, off, count},
              [this, off, count, verify](const absl::Status& s, absl::Span<const uint8_t> results) {
                OnRead(s, results, off, count, verify);
              });
          return true;
        },
        end);
  }

  void OnRead(const absl::Status& s, absl::Span<const uint8_t> results, uint64_t off,
              uint32_t count, bool verify) {
    ++calls_;
    std::string where = absl::StrFormat("offset=%d count=%d", off, count);
    if (!s.ok()) {
      pipe_.Fail(absl::StrCat("READ ", where, ": ", s.message()));
    } else {
      xdr::Decoder d(results);
      nfs3::READ3res res;
      if (!xdr::Decode(d, &res)) {
        pipe_.Fail(absl::StrCat("READ ", where, ": malformed reply"));
      } else if (res.status != nfs3::NFS3_OK) {
        pipe_.Fail(NfsFailure("READ", where, res.status));
      } else if (res.count != count) {
        pipe_.Fail(absl::StrCat("READ ", where, ": got ", res.count, " bytes (eof=", res.eof,
                                "), file shorter than expected"));
      } else {
        if (verify) {
          std::optional<uint64_t> bad = ctx_->pattern_.Verify(off, res.data);
          if (bad) {
            verify_failed_ = true;
            pipe_.Fail(absl::StrCat("READ ", where, ": data differs from what was written at ",
                                    "file offset ", *bad));
          }
        }
        done_ += count;
      }
    }
    pipe_.Done();
  }

  Pipeline& pipe() { return pipe_; }
  uint64_t done() const { return done_; }
  uint64_t calls() const { return calls_; }
  uint64_t max_end() const { return max_end_; }
  bool verify_failed() const { return verify_failed_; }

 private:
  BenchContext* ctx_;
  const WorkloadOptions& o_;
  RunResult* r_;
  client::AsyncRpcClient* rpc_;
  Pipeline pipe_;
  std::mt19937_64 rng_;
  uint64_t next_ = 0, issued_ = 0, done_ = 0, calls_ = 0, max_end_ = 0;
  bool have_verf_ = false;
  uint8_t verf_[nfs3::kWriteVerfSize] = {};
  bool verify_failed_ = false;
};

absl::Status BenchContext::EnsureDataFile(uint64_t size) {
  if (file_ && file_pattern_size_ >= size) return absl::OkStatus();
  auto fh = session_->CreateTruncate(dir_, kDataFile);
  if (!fh.ok()) return fh.status();
  file_ = *fh;
  file_pattern_size_ = 0;
  // Fill it untimed: unstable writes and a COMMIT, 8 in flight.
  WorkloadOptions o;
  o.name = "write";
  o.outstanding = 8;
  RunResult r;
  r.xfer = UntimedXfer(session_->proto(), session_->wtmax());
  IoRun run(this, o, &r);
  run.Write(false, size, size, absl::InfiniteFuture());
  run.Commit();
  if (run.pipe().failed())
    return absl::InternalError(absl::StrCat("preparing the data file: ", run.pipe().error()));
  file_pattern_size_ = size;
  return absl::OkStatus();
}

// ---- Metadata runs.

class MetaRun {
 public:
  MetaRun(BenchContext* ctx, const WorkloadOptions& o)
      : ctx_(ctx), o_(o), rpc_(&ctx->session_->rpc()), pipe_(rpc_, o.outstanding, ctx->stop_) {}

  static std::string EntryName(uint64_t i) { return absl::StrFormat("f%07d", i); }

  void Run(const std::string& kind, uint64_t limit, absl::Time end) {
    pipe_.Run(
        [&]() -> bool {
          if (limit && issued_ >= limit) return false;
          uint64_t i = issued_++;
          if (kind == "getattr")
            StartGetattr();
          else if (kind == "lookup")
            StartLookup(i);
          else if (kind == "create")
            StartCreate(i);
          else if (kind == "createsetattr")
            StartCreate(i, /*setattr=*/true);
          else if (kind == "null")
            StartNull();
          else if (kind == "readdirplus")
            StartReaddirplus(0, nullptr, 0);
          else if (kind == "mkfiles")
            StartMkfile(i);
          return true;
        },
        end);
  }

  void StartGetattr() {
    rpc_->StartCall(kProg, kVers, nfs3::kGetattr, nfs3::GETATTR3args{*ctx_->meta_dir_},
                    [this](const absl::Status& s, absl::Span<const uint8_t> r) {
                      nfs3::GETATTR3res res;
                      if (Check(s, r, &res, "GETATTR", "meta dir")) ++ops_;
                      pipe_.Done();
                    });
  }

  void StartLookup(uint64_t i) {
    std::string name = EntryName(i % std::max<uint32_t>(ctx_->meta_entries_, 1));
    rpc_->StartCall(kProg, kVers, nfs3::kLookup, nfs3::LOOKUP3args{{*ctx_->meta_dir_, name}},
                    [this, name](const absl::Status& s, absl::Span<const uint8_t> r) {
                      nfs3::LOOKUP3res res;
                      if (Check(s, r, &res, "LOOKUP", name)) ++ops_;
                      pipe_.Done();
                    });
  }

  // NFS NULL: the RPC round trip alone.
  void StartNull() {
    rpc_->Start(
        kProg, kVers, nfs3::kNull, [](xdr::Encoder&) {},
        [this](const absl::Status& s, absl::Span<const uint8_t>) {
          ++calls_;
          if (!s.ok()) {
            pipe_.Fail(absl::StrCat("NULL: ", s.message()));
          } else {
            ++ops_;
          }
          pipe_.Done();
        });
  }

  // CREATE (GUARDED) then REMOVE of a fresh name: one operation. With
  // setattr, a SETATTR (mode + mtime, like touch/chmod after create) runs
  // between the two.
  void StartCreate(uint64_t i, bool setattr = false) {
    std::string name = absl::StrFormat("c.%d.%d", getpid(), i);
    nfs3::CREATE3args args;
    args.where = {*ctx_->meta_dir_, name};
    args.mode = nfs3::GUARDED;
    args.obj_attributes.mode = 0644;
    rpc_->StartCall(kProg, kVers, nfs3::kCreate, args,
                    [this, name, setattr](const absl::Status& s, absl::Span<const uint8_t> r) {
                      nfs3::diropres3 res;
                      if (!Check(s, r, &res, "CREATE", name)) {
                        pipe_.Done();
                        return;
                      }
                      if (setattr && res.obj) {
                        StartSetattrThenRemove(*res.obj, name);
                        return;
                      }
                      StartRemove(name);
                    });
  }

  void StartSetattrThenRemove(const nfs3::nfs_fh3& fh, const std::string& name) {
    nfs3::SETATTR3args args;
    args.object = fh;
    args.new_attributes.mode = 0600;
    args.new_attributes.mtime_how = nfs3::SET_TO_SERVER_TIME;
    rpc_->StartCall(kProg, kVers, nfs3::kSetattr, args,
                    [this, name](const absl::Status& s, absl::Span<const uint8_t> r) {
                      nfs3::SETATTR3res res;
                      if (!Check(s, r, &res, "SETATTR", name)) {
                        pipe_.Done();
                        return;
                      }
                      StartRemove(name);
                    });
  }

  void StartRemove(const std::string& name) {
    rpc_->StartCall(kProg, kVers, nfs3::kRemove, nfs3::REMOVE3args{{*ctx_->meta_dir_, name}},
                    [this, name](const absl::Status& s, absl::Span<const uint8_t> r) {
                      nfs3::REMOVE3res res;
                      if (Check(s, r, &res, "REMOVE", name)) ++ops_;
                      pipe_.Done();
                    });
  }

  void StartMkfile(uint64_t i) {
    std::string name = EntryName(i);
    nfs3::CREATE3args args;
    args.where = {*ctx_->meta_dir_, name};
    args.mode = nfs3::UNCHECKED;
    args.obj_attributes.mode = 0644;
    rpc_->StartCall(kProg, kVers, nfs3::kCreate, args,
                    [this, name](const absl::Status& s, absl::Span<const uint8_t> r) {
                      nfs3::diropres3 res;
                      if (Check(s, r, &res, "CREATE", name)) ++ops_;
                      pipe_.Done();
                    });
  }

  // One whole listing is one operation; each READDIRPLUS continues it.
  void StartReaddirplus(uint64_t cookie, const uint8_t* verf, uint64_t seen) {
    nfs3::READDIRPLUS3args args;
    args.dir = *ctx_->meta_dir_;
    args.cookie = cookie;
    if (verf) std::memcpy(args.cookieverf, verf, nfs3::kCookieVerfSize);
    args.dircount = 16384;
    args.maxcount = std::min<uint32_t>(ctx_->session_->rtmax(), 65536);
    rpc_->StartCall(
        kProg, kVers, nfs3::kReaddirplus, args,
        [this, cookie, seen](const absl::Status& s, absl::Span<const uint8_t> r) {
          nfs3::READDIRPLUS3res res;
          if (!Check(s, r, &res, "READDIRPLUS", absl::StrCat("cookie=", cookie))) {
            pipe_.Done();
            return;
          }
          uint64_t n = seen;
          uint64_t last = cookie;
          for (const nfs3::entryplus3& e : res.entries) {
            if (e.name != "." && e.name != "..") ++n;
            last = e.cookie;
          }
          if (!res.eof && res.entries.empty()) {
            pipe_.Fail(absl::StrCat("READDIRPLUS cookie=", cookie,
                                    ": no entries and no eof (client would loop)"));
            pipe_.Done();
            return;
          }
          if (!res.eof) {
            StartReaddirplus(last, res.cookieverf, n);  // same operation continues
            return;
          }
          if (n != ctx_->meta_entries_) {
            pipe_.Fail(absl::StrCat("READDIRPLUS listed ", n, " entries, the directory has ",
                                    ctx_->meta_entries_));
          } else {
            ++ops_;
          }
          pipe_.Done();
        });
  }

  template <typename Res>
  bool Check(const absl::Status& s, absl::Span<const uint8_t> r, Res* res, const char* proc,
             const std::string& what) {
    ++calls_;
    if (!s.ok()) {
      pipe_.Fail(absl::StrCat(proc, " ", what, ": ", s.message()));
      return false;
    }
    xdr::Decoder d(r);
    if (!xdr::Decode(d, res)) {
      pipe_.Fail(absl::StrCat(proc, " ", what, ": malformed reply"));
      return false;
    }
    if (res->status != nfs3::NFS3_OK) {
      pipe_.Fail(NfsFailure(proc, what, res->status));
      return false;
    }
    return true;
  }

  Pipeline& pipe() { return pipe_; }
  uint64_t ops() const { return ops_; }
  uint64_t calls() const { return calls_; }

 private:
  BenchContext* ctx_;
  const WorkloadOptions& o_;
  client::AsyncRpcClient* rpc_;
  Pipeline pipe_;
  uint64_t issued_ = 0, ops_ = 0, calls_ = 0;
};

absl::Status BenchContext::EnsureMetaDir(uint32_t entries) {
  if (meta_dir_ && meta_entries_ == entries) return absl::OkStatus();
  auto dir = session_->MkdirOrLookup(dir_, kMetaDir);
  if (!dir.ok()) return dir.status();
  meta_dir_ = *dir;
  meta_entries_ = entries;
  WorkloadOptions o;
  o.outstanding = 16;
  MetaRun run(this, o);
  run.Run("mkfiles", entries, absl::InfiniteFuture());
  if (run.pipe().failed()) {
    meta_dir_.reset();
    return absl::InternalError(absl::StrCat("preparing the directory: ", run.pipe().error()));
  }
  return absl::OkStatus();
}

void BenchContext::VerifyWritten(const WorkloadOptions& o, RunResult* r) {
  WorkloadOptions v = o;
  v.name = "read";
  RunResult vr;
  vr.xfer = UntimedXfer(session_->proto(), session_->rtmax());
  IoRun check(this, v, &vr);
  check.Read(false, file_pattern_size_, file_pattern_size_, absl::InfiniteFuture(), true);
  r->verified = check.verify_failed() ? "FAILED" : check.pipe().failed() ? "no" : "ok";
  if (check.pipe().failed()) r->error = absl::StrCat("read-back: ", check.pipe().error());
}

absl::Status BenchContext::Prepare(const WorkloadOptions& o, bool io, bool timed,
                                   uint64_t* file_size) {
  if (o.name == "read" || o.name == "randread" || o.name == "randwrite") {
    // Reuse the file a write run left (reads wrap inside it); else make one.
    if (file_ && file_pattern_size_ > 0) {
      *file_size = file_pattern_size_;
      return absl::OkStatus();
    }
    if (o.name == "read" && !timed && o.size) *file_size = std::min(*file_size, o.size);
    return EnsureDataFile(*file_size);
  }
  return io ? absl::OkStatus() : EnsureMetaDir(o.dir_entries);
}

void BenchContext::RunOnConnections(const WorkloadOptions& o, RunResult* r) {
  CpuSample cpu;  // from when the connections are up
  nfs3::nfs_fh3 object;
  if (o.name == "write") {  // every call rewrites the first block of a new file
    absl::StatusOr<nfs3::nfs_fh3> fh = session_->CreateTruncate(dir_, kDataFile);
    if (!fh.ok()) {
      r->error = std::string(fh.status().message());
      return;
    }
    file_ = object = *fh;
    file_pattern_size_ = 0;
  } else {
    object = *meta_dir_;
  }
  RunCrowdWorkload(*session_, object, o, stop_, r, [&] { cpu = SampleCpu(o.server_pid); });
  ChargeCpu(cpu, o.server_pid, r);
}

RunResult BenchContext::Run(const WorkloadOptions& o) {
  RunResult r;
  r.workload = o.name;
  r.proto = session_->proto();
  r.bs = o.bs;
  r.outstanding = o.stable == StableMode::kSyncMount && (o.name == "write" || o.name == "randwrite")
                      ? 1
                      : o.outstanding;
  r.stable = (o.name == "write" || o.name == "randwrite") ? StableModeName(o.stable) : "-";
  bool io = o.name == "write" || o.name == "read" || o.name == "randread" || o.name == "randwrite";
  bool timed = o.time > absl::ZeroDuration();
  if (io) {
    const bool writes = o.name == "write" || o.name == "randwrite";
    if (o.bs == kPreferredSize) {
      r.xfer = writes ? session_->wtpref() : session_->rtpref();
    } else {
      r.xfer = std::min(o.bs, writes ? session_->wtmax() : session_->rtmax());
    }
  }
  uint64_t file_size = o.file_size;
  if (absl::Status prep = Prepare(o, io, timed, &file_size); !prep.ok()) {
    r.error = std::string(prep.message());
    return r;
  }
  if (o.connections > 0) {
    RunOnConnections(o, &r);
    return r;
  }

  client::AsyncRpcClient& rpc = session_->rpc();
  client::AsyncRpcStats before = rpc.stats();
  CpuSample cpu_start = SampleCpu(o.server_pid);
  absl::Time start = absl::Now();
  absl::Time end = timed ? start + o.time : absl::InfiniteFuture();
  if (io) {
    IoRun run(this, o, &r);
    if (o.name == "write") {
      auto fh = session_->CreateTruncate(dir_, kDataFile);
      if (!fh.ok()) {
        r.error = std::string(fh.status().message());
        return r;
      }
      file_ = *fh;
      file_pattern_size_ = 0;
      cpu_start = SampleCpu(o.server_pid);
      start = absl::Now();
      end = timed ? start + o.time : absl::InfiniteFuture();
      run.Write(false, timed ? 0 : o.size, timed ? o.file_size : o.size, end);
      if (o.stable == StableMode::kUnstable) run.Commit();
    } else if (o.name == "randwrite") {
      run.Write(true, timed ? 0 : o.size, file_size, end);
      if (o.stable == StableMode::kUnstable) run.Commit();
    } else {
      run.Read(o.name == "randread", timed ? 0 : o.size, file_size, end, o.verify);
    }
    r.seconds = absl::ToDoubleSeconds(absl::Now() - start);
    ChargeCpu(cpu_start, o.server_pid, &r);
    r.bytes = run.done();
    r.calls = run.calls();
    r.ops = run.calls();
    r.error = run.pipe().error();
    if (o.name == "write" && r.error.empty()) file_pattern_size_ = run.max_end();
    if (o.name == "read" || o.name == "randread") {
      r.verified = !o.verify             ? "no"
                   : run.verify_failed() ? "FAILED"
                   : r.error.empty()     ? "ok"
                                         : "no";
    }
    bool wrote = o.name == "write" || o.name == "randwrite";
    if (wrote && o.verify && r.error.empty() && file_pattern_size_ > 0) VerifyWritten(o, &r);
  } else {
    MetaRun run(this, o);
    run.Run(o.name, timed ? 0 : (o.ops ? o.ops : 1000), end);
    r.seconds = absl::ToDoubleSeconds(absl::Now() - start);
    ChargeCpu(cpu_start, o.server_pid, &r);
    r.ops = run.ops();
    r.calls = run.calls();
    r.error = run.pipe().error();
  }
  const client::AsyncRpcStats& after = rpc.stats();
  r.retransmits = after.retransmits - before.retransmits;
  r.timeouts = after.timeouts - before.timeouts;
  uint64_t replies = after.replies - before.replies;
  if (replies > 0) {
    r.msec_per_call =
        absl::ToDoubleMilliseconds(after.total_latency - before.total_latency) / replies;
  }
  return r;
}

absl::Status BenchContext::Cleanup(bool keep_data_file) {
  absl::Status status = absl::OkStatus();
  if (meta_dir_) {
    for (uint32_t i = 0; i < meta_entries_; ++i) {
      absl::Status s = session_->Remove(*meta_dir_, MetaRun::EntryName(i));
      if (!s.ok()) {
        status = s;
        break;
      }
    }
    if (status.ok()) status = session_->Rmdir(dir_, kMetaDir);
    meta_dir_.reset();
  }
  if (file_ && !keep_data_file) {
    absl::Status s = session_->Remove(dir_, kDataFile);
    if (status.ok()) status = s;
    file_.reset();
  }
  return status;
}

}  // namespace nfs3d::bench
