#include "vfs/deadline_backend.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"
#include "vfs/backend_router.h"
#include "vfs/posix/posix_backend.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

constexpr uint32_t kExport = 1;
const Cred kRoot{0, 0, {}};

// A POSIX export whose GETATTR, CREATE and COMMIT can be made to hang, as
// calls do in libcephfs while a cluster daemon is stopped.
class StallingBackend : public BackendRouter {
 public:
  explicit StallingBackend(Backend* inner) : BackendRouter(inner) {}
  void Stall() {
    absl::MutexLock lock(&mu_);
    gate_ = std::make_shared<absl::Notification>();
  }
  void Resume() {
    absl::MutexLock lock(&mu_);
    if (gate_ && !gate_->HasBeenNotified()) gate_->Notify();
  }

  absl::StatusOr<Attributes> GetAttr(const Cred& cred, const FileHandle& fh) override {
    last_thread_ = std::this_thread::get_id();
    Wait();
    return BackendRouter::GetAttr(cred, fh);
  }
  // The thread the last GETATTR ran on.
  std::thread::id last_thread() const { return last_thread_; }
  absl::StatusOr<CreateResult> Create(const Cred& cred, const FileHandle& dir,
                                      std::string_view name, CreateMode mode,
                                      const SetAttributes& attrs, const Verifier& verifier,
                                      Wcc* dir_wcc) override {
    Wait();
    return BackendRouter::Create(cred, dir, name, mode, attrs, verifier, dir_wcc);
  }
  absl::StatusOr<Verifier> Commit(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, Wcc* wcc) override {
    Wait();
    return BackendRouter::Commit(cred, fh, offset, count, wcc);
  }

 private:
  void Wait() {
    std::shared_ptr<absl::Notification> gate;
    {
      absl::MutexLock lock(&mu_);
      gate = gate_;
    }
    if (gate) gate->WaitForNotification();
  }
  absl::Mutex mu_;
  std::shared_ptr<absl::Notification> gate_ ABSL_GUARDED_BY(mu_);
  std::atomic<std::thread::id> last_thread_;
};

// The RPC layer's part, faked: a thread serves the request it names with
// Serving; AnswerNow records the requests answered early.
class FakeRescuer : public RequestRescuer {
 public:
  class Serving {
   public:
    explicit Serving(int* request) { current_ = request; }
    ~Serving() { current_ = nullptr; }
  };
  void* Current() const override { return current_; }
  void AnswerNow(void* request) override {
    absl::MutexLock lock(&mu_);
    answered_.push_back(static_cast<int*>(request));
  }
  // Waits (hang guard 10 s) until `request` was answered early.
  bool Answered(int* request) {
    absl::MutexLock lock(&mu_);
    waiting_for_ = request;
    return mu_.AwaitWithTimeout(absl::Condition(this, &FakeRescuer::WaitedForIsAnswered),
                                absl::Seconds(10));
  }
  size_t answered() {
    absl::MutexLock lock(&mu_);
    return answered_.size();
  }

 private:
  bool WaitedForIsAnswered() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return std::find(answered_.begin(), answered_.end(), waiting_for_) != answered_.end();
  }
  static thread_local int* current_;
  mutable absl::Mutex mu_;
  std::vector<int*> answered_ ABSL_GUARDED_BY(mu_);
  int* waiting_for_ ABSL_GUARDED_BY(mu_) = nullptr;
};
thread_local int* FakeRescuer::current_ = nullptr;

class DeadlineBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (the POSIX backend sets credentials)";
    tmp_ = std::make_unique<test_support::TempDir>("nfs3d_deadline_test");
    const std::string& dir = tmp_->path();
    ASSERT_FALSE(dir.empty());
    ASSERT_EQ(mkdir((dir + "/export").c_str(), 0755), 0);
    auto posix = PosixBackend::Create(PosixBackendOptions{dir + "/state"});
    ASSERT_TRUE(posix.ok()) << posix.status();
    posix_ = std::move(*posix);
    ASSERT_TRUE(posix_->AddExport(kExport, dir + "/export").ok());
    stalling_ = std::make_unique<StallingBackend>(posix_.get());
    DeadlineOptions options;
    options.timeout = absl::Milliseconds(300);
    options.threads = 2;
    options.sync_unknown = [this] { ++sync_unknown_; };
    options.name = "test cluster";
    options.rescuer = rescuer();
    backend_ = std::make_unique<DeadlineBackend>(stalling_.get(), options);
    auto root = backend_->RootHandle(kExport);
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = *root;
  }
  void TearDown() override {
    if (stalling_) stalling_->Resume();  // a failed test must not hang the threads
    backend_.reset();
    stalling_.reset();
    posix_.reset();
  }
  virtual RequestRescuer* rescuer() { return nullptr; }
  void ExpectResultsAndOutParametersPassThrough();
  absl::StatusOr<CreateResult> Create(const std::string& name, Wcc* wcc = nullptr) {
    return backend_->Create(kRoot, root_, name, CreateMode::kGuarded, {}, {}, wcc);
  }
  // Waits (hang guard 10 s) until the backend no longer counts as stalled.
  bool Recovers() {
    for (int i = 0; i < 1000 && backend_->stalled(); ++i) usleep(10000);
    return !backend_->stalled();
  }

  std::unique_ptr<test_support::TempDir> tmp_;  // removed last
  std::unique_ptr<PosixBackend> posix_;
  std::unique_ptr<StallingBackend> stalling_;
  std::unique_ptr<DeadlineBackend> backend_;
  std::atomic<int> sync_unknown_{0};
  FileHandle root_;
};

// The same, with a rescuer: calls made while serving a request run inline.
class InlineDeadlineBackendTest : public DeadlineBackendTest {
 protected:
  RequestRescuer* rescuer() override { return &rescuer_; }
  FakeRescuer rescuer_;
};

TEST_F(DeadlineBackendTest, AnsweredCallsPassResultsAndOutParametersThrough) {
  ExpectResultsAndOutParametersPassThrough();
}

TEST_F(InlineDeadlineBackendTest, InlineCallsPassResultsAndOutParametersThrough) {
  int request = 0;
  FakeRescuer::Serving serving(&request);
  ExpectResultsAndOutParametersPassThrough();
  EXPECT_EQ(rescuer_.answered(), 0u);
}

TEST_F(InlineDeadlineBackendTest, CallsRunOnTheCallersThreadOnlyWhileItServesARequest) {
  auto file = Create("f");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(backend_->GetAttr(kRoot, file->handle).ok());
  EXPECT_NE(stalling_->last_thread(), std::this_thread::get_id());  // handed off
  int request = 0;
  FakeRescuer::Serving serving(&request);
  ASSERT_TRUE(backend_->GetAttr(kRoot, file->handle).ok());
  EXPECT_EQ(stalling_->last_thread(), std::this_thread::get_id());
}

TEST_F(InlineDeadlineBackendTest, OverrunInlineCallIsAnsweredEarlyOthersFailFastUntilItReturns) {
  auto file = Create("f");
  ASSERT_TRUE(file.ok());
  stalling_->Stall();
  int stuck = 0;
  absl::StatusOr<Attributes> late = absl::UnknownError("not returned");
  std::thread worker([&] {
    FakeRescuer::Serving serving(&stuck);
    late = backend_->GetAttr(kRoot, file->handle);
  });
  // Past the timeout the watchdog has the stuck call's request answered,
  // while the call itself keeps its thread.
  EXPECT_TRUE(rescuer_.Answered(&stuck));
  EXPECT_TRUE(backend_->stalled());
  EXPECT_EQ(rescuer_.answered(), 1u);
  // Meanwhile calls fail at once, inline or handed off.
  int other = 0;
  {
    FakeRescuer::Serving serving(&other);
    EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, file->handle).status()), kErrJukebox);
    const std::vector<std::string_view> names = {"f"};
    EXPECT_EQ(ErrnoOf(backend_->LookupEach(kRoot, root_, names)[0].status()), kErrJukebox);
  }
  EXPECT_EQ(ErrnoOf(Create("g").status()), kErrJukebox);
  // The backend answers again: the stuck call returns with its own result
  // (its request's reply is the caller's to drop), service resumes.
  stalling_->Resume();
  worker.join();
  EXPECT_TRUE(late.ok()) << late.status();
  ASSERT_TRUE(Recovers());
  {
    FakeRescuer::Serving serving(&other);
    EXPECT_TRUE(backend_->GetAttr(kRoot, file->handle).ok());
  }
  EXPECT_EQ(rescuer_.answered(), 1u);
  EXPECT_EQ(sync_unknown_, 0);
}

TEST_F(InlineDeadlineBackendTest, OverrunInlineCommitMakesTheSyncOutcomeUnknown) {
  auto file = Create("f");
  ASSERT_TRUE(file.ok());
  stalling_->Stall();
  int stuck = 0;
  std::thread worker([&] {
    FakeRescuer::Serving serving(&stuck);
    Wcc wcc;
    (void)backend_->Commit(kRoot, file->handle, 0, 0, &wcc);
  });
  EXPECT_TRUE(rescuer_.Answered(&stuck));
  EXPECT_EQ(sync_unknown_, 1);
  stalling_->Resume();
  worker.join();
  ASSERT_TRUE(Recovers());
}

TEST_F(InlineDeadlineBackendTest, FailFastScopeRefusesCallsWithoutCallingTheBackend) {
  auto file = Create("f");
  ASSERT_TRUE(file.ok());
  stalling_->Stall();  // a call that reached the backend would hang
  int request = 0;
  {
    DeadlineBackend::FailFastScope fail_fast;
    EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, file->handle).status()), kErrJukebox);
    FakeRescuer::Serving serving(&request);
    EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, file->handle).status()), kErrJukebox);
    EXPECT_EQ(ErrnoOf(backend_->Run([] { return absl::OkStatus(); })), kErrJukebox);
  }
  EXPECT_FALSE(backend_->stalled());
  stalling_->Resume();
  EXPECT_TRUE(backend_->GetAttr(kRoot, file->handle).ok());
}

void DeadlineBackendTest::ExpectResultsAndOutParametersPassThrough() {
  Wcc wcc;
  auto created = Create("f", &wcc);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(wcc.before.has_value());
  EXPECT_TRUE(wcc.after.has_value());
  const std::string text = "hello deadline";
  auto written = backend_->Write(kRoot, created->handle, 0,
                                 {reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                                 StableHow::kFileSync, nullptr);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->count, text.size());
  uint8_t buf[64] = {};
  auto read = backend_->Read(kRoot, created->handle, 0, sizeof(buf), buf);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), read->count), text);
  EXPECT_TRUE(read->eof);
  std::optional<Attributes> dir_attrs;
  auto found = backend_->Lookup(kRoot, root_, "f", &dir_attrs);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->handle, created->handle);
  EXPECT_TRUE(dir_attrs.has_value());
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, root_, "missing", nullptr).status()), ENOENT);
  const std::vector<std::string_view> looked_up = {"f", "missing"};
  auto each = backend_->LookupEach(kRoot, root_, looked_up);
  ASSERT_EQ(each.size(), 2u);
  ASSERT_TRUE(each[0].ok()) << each[0].status();
  EXPECT_EQ(each[0]->handle, created->handle);
  EXPECT_EQ(ErrnoOf(each[1].status()), ENOENT);

  std::set<std::string> names;
  bool eof = false;
  Verifier verf{};
  ASSERT_TRUE(backend_
                  ->ReadDir(
                      kRoot, root_, 0, &verf,
                      [&](const DirEntry& e) {
                        names.insert(std::string(e.name));
                        return true;
                      },
                      &eof, nullptr)
                  .ok());
  EXPECT_TRUE(eof);
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "f"}));

  const Acl acl = {{kAclUserObj, kAclUndefinedId, 6},
                   {kAclUser, 1234, 4},
                   {kAclGroupObj, kAclUndefinedId, 4},
                   {kAclMask, kAclUndefinedId, 4},
                   {kAclOther, kAclUndefinedId, 0}};
  std::optional<Attributes> acl_attrs;
  absl::Status set = backend_->SetAcl(kRoot, created->handle, &acl, nullptr, &acl_attrs);
  ASSERT_TRUE(set.ok()) << set;
  EXPECT_TRUE(acl_attrs.has_value());
  acl_attrs.reset();
  auto acls = backend_->GetAcl(kRoot, created->handle, &acl_attrs);
  ASSERT_TRUE(acls.ok()) << acls.status();
  EXPECT_EQ(acls->access, acl);
  EXPECT_TRUE(acl_attrs.has_value());
  EXPECT_FALSE(backend_->stalled());
}

TEST_F(DeadlineBackendTest, StalledCallGivesJukeboxThenOthersFailFastUntilItReturns) {
  auto file = Create("f");
  ASSERT_TRUE(file.ok());
  stalling_->Stall();
  // The hanging call is answered with JUKEBOX after the timeout.
  EXPECT_EQ(ErrnoOf(backend_->GetAttr(kRoot, file->handle).status()), kErrJukebox);
  EXPECT_TRUE(backend_->stalled());
  // Meanwhile every call fails at once, also those that would not hang,
  // and no thread is handed to them.
  EXPECT_EQ(ErrnoOf(backend_->Lookup(kRoot, root_, "f", nullptr).status()), kErrJukebox);
  EXPECT_EQ(ErrnoOf(Create("g").status()), kErrJukebox);
  const std::vector<std::string_view> names = {"f"};
  EXPECT_EQ(ErrnoOf(backend_->LookupEach(kRoot, root_, names)[0].status()), kErrJukebox);
  // The backend answers again: the stuck call returns, service resumes.
  stalling_->Resume();
  ASSERT_TRUE(Recovers());
  EXPECT_TRUE(backend_->GetAttr(kRoot, file->handle).ok());
  EXPECT_TRUE(Create("g").ok());
  EXPECT_EQ(sync_unknown_, 0);
}

TEST_F(DeadlineBackendTest, CommitThatOverrunsMakesTheSyncOutcomeUnknown) {
  auto file = Create("f");
  ASSERT_TRUE(file.ok());
  stalling_->Stall();
  Wcc wcc;
  EXPECT_EQ(ErrnoOf(backend_->Commit(kRoot, file->handle, 0, 0, &wcc).status()), kErrJukebox);
  EXPECT_FALSE(wcc.after.has_value());  // the stuck call's copy, not the caller's
  EXPECT_EQ(sync_unknown_, 1);
  stalling_->Resume();
  ASSERT_TRUE(Recovers());
  EXPECT_TRUE(backend_->Commit(kRoot, file->handle, 0, 0, nullptr).ok());
}

TEST_F(DeadlineBackendTest, CallsBeyondTheThreadsExpireInTheQueueWithoutRunning) {
  stalling_->Stall();
  // Two threads: two creates hang, the third waits in the queue and expires.
  std::vector<std::thread> callers;
  std::atomic<int> jukebox{0};
  for (const char* name : {"a", "b", "c"}) {
    callers.emplace_back([&, name] {
      if (ErrnoOf(Create(name).status()) == kErrJukebox) ++jukebox;
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(jukebox, 3);
  stalling_->Resume();
  ASSERT_TRUE(Recovers());
  // At most the two that got a thread made their files.
  int made = 0;
  for (const char* name : {"a", "b", "c"}) {
    made += backend_->Lookup(kRoot, root_, name, nullptr).ok() ? 1 : 0;
  }
  EXPECT_LE(made, 2);
}

}  // namespace
}  // namespace nfs3d::vfs
