#include "nlm/status_store.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace nfs3d::nlm {
namespace {

// FNV-1a: file names for host records (names may be long or contain '/').
uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string HostFile(const std::string& name) { return absl::StrFormat("%016x", Fnv1a(name)); }

}  // namespace

absl::StatusOr<std::unique_ptr<StatusStore>> StatusStore::Open(const std::string& state_dir,
                                                               bool bump) {
  absl::StatusOr<std::unique_ptr<DurableFiles>> nsm = OpenLocalFiles(state_dir + "/nsm");
  if (!nsm.ok()) return nsm.status();
  return Open(std::move(*nsm), bump);
}

absl::StatusOr<bool> StatusStore::HasRecordedHosts(DurableFiles& nsm) {
  absl::StatusOr<std::unique_ptr<DurableFiles>> hosts = nsm.Sub("hosts");
  if (!hosts.ok()) return hosts.status();
  absl::StatusOr<std::vector<std::string>> names = (*hosts)->List();
  if (!names.ok()) return names.status();
  return !names->empty();
}

absl::StatusOr<std::unique_ptr<StatusStore>> StatusStore::Open(std::unique_ptr<DurableFiles> nsm,
                                                               bool bump) {
  absl::StatusOr<std::unique_ptr<DurableFiles>> hosts = nsm->Sub("hosts");
  if (!hosts.ok()) return hosts.status();
  auto store = std::unique_ptr<StatusStore>(new StatusStore(std::move(nsm), std::move(*hosts)));
  DurableFiles* files = store->nsm_.get();

  absl::StatusOr<std::optional<std::string>> text = files->Read("state");
  if (!text.ok()) return text.status();
  int32_t previous = 0;
  if (text->has_value()) {
    std::string trimmed(absl::StripAsciiWhitespace(**text));
    if (!absl::SimpleAtoi(trimmed, &previous) || previous < 0) {
      return absl::DataLossError(absl::StrCat(files->where(), "/state: not a state number"));
    }
  }
  store->state_ = previous;
  if (bump || previous % 2 == 0) {
    if (absl::Status s = store->Bump(); !s.ok()) return s;
  }

  absl::StatusOr<std::vector<std::string>> names = store->hosts_->List();
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    absl::StatusOr<std::optional<std::string>> body = store->hosts_->Read(name);
    if (!body.ok()) return body.status();
    if (!body->has_value()) continue;  // removed meanwhile
    std::vector<std::string> lines = absl::StrSplit(**body, '\n');
    if (lines.size() < 3 || lines[0].empty()) continue;
    MonitoredHost host{lines[0], lines[1], lines[2]};
    if (lines.size() > 3 && !absl::SimpleAtoi(lines[3], &host.nsm_state)) host.nsm_state = 0;
    store->previous_.push_back(std::move(host));
  }
  return store;
}

absl::Status StatusStore::Bump() {
  // Next odd number; wraps before INT32_MAX to stay positive.
  int32_t next = state_ >= INT32_MAX - 2 ? 1 : state_ + 1;
  if (next % 2 == 0) ++next;
  if (absl::Status s = nsm_->Write("state", absl::StrCat(next, "\n")); !s.ok()) return s;
  state_ = next;
  return absl::OkStatus();
}

absl::Status StatusStore::AddHost(const MonitoredHost& host) {
  if (host.name.find('\n') != std::string::npos) {
    return absl::InvalidArgumentError("host name contains a newline");
  }
  return hosts_->Write(HostFile(host.name),
                       absl::StrCat(host.name, "\n", host.address, "\n", host.local_address, "\n",
                                    host.nsm_state, "\n"));
}

absl::Status StatusStore::RemoveHost(const std::string& name) {
  return hosts_->Remove(HostFile(name));
}

}  // namespace nfs3d::nlm
