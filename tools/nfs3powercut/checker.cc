#include "tools/nfs3powercut/checker.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include "tools/nfs3bench/pattern.h"
#include "tools/nfs3powercut/journal.h"
#include "tools/nfs3powercut/nfs_calls.h"
#include "xdr/nfs3_client_codec.h"

namespace nfs3d::powercut {
namespace {

using Seen = std::map<std::string, Found>;  // what LOOKUP shows for each name

// How the names the server shows differ from the state m.
std::vector<std::string> Differences(const Model& m, const Seen& seen) {
  std::vector<std::string> out;
  for (const auto& [name, found] : seen) {
    auto it = m.names.find(name);
    if (it == m.names.end()) {
      if (found.exists) out.push_back(absl::StrCat(name, ": present, was removed or renamed"));
      continue;
    }
    if (!found.exists) {
      out.push_back(absl::StrCat(name, ": missing"));
      continue;
    }
    const Object& o = m.objects.at(it->second);
    const nfs3::fattr3& a = found.attrs;
    if (o.fileid != 0 && o.fileid != a.fileid) {
      out.push_back(absl::StrCat(name, ": fileid ", a.fileid, ", want ", o.fileid));
    }
    if ((a.mode & 07777) != o.mode) {
      out.push_back(absl::StrFormat("%s: mode %o, want %o", name, a.mode & 07777, o.mode));
    }
    if (a.nlink != m.LinkCount(it->second)) {
      out.push_back(absl::StrCat(name, ": nlink ", a.nlink, ", want ", m.LinkCount(it->second)));
    }
  }
  return out;
}

class Checker {
 public:
  Checker(bench::Session& s, const Replay& r) : s_(s), r_(r) {}

  absl::StatusOr<CheckReport> Run() {
    report_.namespace_changes = r_.acked.namespace_changes;
    if (r_.dir.empty()) return report_;  // cut before the writer's directory existed
    absl::StatusOr<Found> dir = LookupName(s_, s_.root(), r_.dir);
    if (!dir.ok()) return dir.status();
    if (!dir->exists) {
      report_.namespace_lost = r_.acked.namespace_changes + 1;
      report_.problems.push_back(
          absl::StrCat("directory ", r_.dir, " (MKDIR acknowledged) missing"));
      for (const auto& [name, f] : r_.acked.data) report_.stable_bytes_lost += f.stable_bytes();
      return report_;
    }
    dir_ = dir->fh;
    const Model* state = nullptr;
    if (absl::Status st = CheckNamespace(&state); !st.ok()) return st;
    if (absl::Status st = CheckHandles(*state); !st.ok()) return st;
    for (const auto& [name, file] : r_.acked.data) {
      if (absl::Status st = CheckData(name, file); !st.ok()) return st;
    }
    // Whether the verifier changed, also when no UNSTABLE write asked.
    nfs3::nfs_fh3 fh;
    if (!r_.acked.data.empty() &&
        FhFromHex(r_.acked.objects.at(r_.acked.data.begin()->first).fh, &fh)) {
      if (absl::StatusOr<std::string> now = VerifierNow(fh); !now.ok()) return now.status();
    }
    // Last: these change what the server holds.
    if (absl::Status st = CheckRetransmissions(*state); !st.ok()) return st;
    return report_;
  }

 private:
  // Compares every name the journal mentions with the acknowledged state, or
  // else with that state plus the call in flight; *state is the one matched.
  absl::Status CheckNamespace(const Model** state) {
    Seen seen;
    for (const std::string& name : r_.all_names) {
      absl::StatusOr<Found> f = LookupName(s_, dir_, name);
      if (!f.ok()) return f.status();
      seen[name] = *f;
    }
    *state = &r_.acked;
    std::vector<std::string> diff = Differences(r_.acked, seen);
    if (!diff.empty() && r_.with_pending && Differences(*r_.with_pending, seen).empty()) {
      *state = &*r_.with_pending;
      report_.in_flight_applied = true;
      diff.clear();
    }
    report_.namespace_lost = diff.size();
    for (std::string& d : diff) report_.problems.push_back(std::move(d));
    return absl::OkStatus();
  }

  // Every handle CREATE returned for an object that still has a name must
  // still resolve to it.
  absl::Status CheckHandles(const Model& state) {
    for (const auto& [key, o] : state.objects) {
      nfs3::nfs_fh3 fh;
      if (o.fh.empty() || state.LinkCount(key) == 0 || !FhFromHex(o.fh, &fh)) continue;
      ++report_.handles_checked;
      absl::StatusOr<nfs3::fattr3> attrs = s_.Getattr(fh);
      if (!attrs.ok() && !absl::IsFailedPrecondition(attrs.status())) return attrs.status();
      if (!attrs.ok() || attrs->fileid != o.fileid) {
        ++report_.handles_stale;
        report_.problems.push_back(absl::StrCat(
            "handle of ", key,
            " does not resolve: ", attrs.ok() ? "another file" : attrs.status().message()));
      }
    }
    return absl::OkStatus();
  }

  // Sends again, with its xid, the last acknowledged call of each kind and
  // the call in flight, as a client does that never saw their replies (a
  // reply lost with the machine). The duplicate request cache died with
  // the server, so each runs again: REMOVE answers NOENT, and so on; those
  // answers are reported. Of each kind the last call whose names no later
  // call (nor the call in flight) used, so that the answers do not depend
  // on one another. An acknowledged CREATE EXCLUSIVE must answer OK with
  // its own file, whose verifier the server keeps with it (RFC 1813 3.3.8);
  // one in flight is only reported: the cut may fall between making the
  // file and storing the verifier (docs/durability.md).
  absl::Status CheckRetransmissions(const Model& state) {
    std::set<std::string> used_later;
    auto use = [&](const SentCall& c) {
      if (c.op == "chmod") return;  // changes no name (nor a verifier)
      used_later.insert(c.name);
      if (!c.to.empty()) used_later.insert(c.to);
    };
    if (r_.in_flight_call) use(*r_.in_flight_call);
    std::map<std::string, const SentCall*> last;
    for (auto it = r_.acked_calls.rbegin(); it != r_.acked_calls.rend(); ++it) {
      const SentCall& c = *it;
      const bool untouched = !used_later.count(c.name) && !used_later.count(c.to);
      auto named = state.names.find(c.name);
      const bool own = c.op != "xcreate" || (named != state.names.end() && named->second == c.name);
      // SETATTR without a guard: harmless again.
      if (c.op != "chmod" && untouched && own && !last.count(c.op)) last[c.op] = &c;
      use(c);
    }
    for (const auto& [op, call] : last) {
      const std::optional<uint64_t> fileid =
          op == "xcreate" ? std::optional<uint64_t>(state.objects.at(call->name).fileid)
                          : std::nullopt;
      if (absl::Status st = ResendOne(*call, op, fileid); !st.ok()) return st;
    }
    if (r_.in_flight_call && r_.in_flight_call->op != "chmod") {
      return ResendOne(*r_.in_flight_call, "inflight_" + r_.in_flight_call->op, std::nullopt);
    }
    return absl::OkStatus();
  }

  // fileid: the file an exclusive create must answer with; none for one in
  // flight, whose answer is only reported.
  absl::Status ResendOne(const SentCall& call, const std::string& kind,
                         std::optional<uint64_t> fileid) {
    absl::StatusOr<client::RpcReply> reply = Resend(s_, call.xid, call.proc, call.args);
    if (!reply.ok()) return reply.status();
    xdr::Decoder d(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(reply->results.data()),
                                       reply->results.size()));
    if (reply->reply_stat != 0 || reply->accept_stat != 0 || reply->results.size() < 4) {
      return absl::DataLossError(absl::StrCat(kind, " resent: the call was not accepted"));
    }
    const auto status = static_cast<nfs3::nfsstat3>(d.U32());
    report_.resent.push_back(absl::StrCat(kind, "=", nfs3::StatusName(status)));
    if (call.op != "xcreate" || !fileid) return absl::OkStatus();
    std::string why;
    if (status != nfs3::NFS3_OK) {
      why = nfs3::StatusName(status);
    } else if (absl::StatusOr<Found> f = LookupName(s_, dir_, call.name); !f.ok()) {
      return f.status();
    } else if (!f->exists || f->attrs.fileid != *fileid) {
      why = f->exists ? absl::StrCat("another file (fileid ", f->attrs.fileid, ")") : "no file";
    }
    if (!why.empty()) {
      ++report_.exclusive_failed;
      report_.problems.push_back(
          absl::StrCat("CREATE EXCLUSIVE of ", call.name, " sent again after the cut: ", why));
    }
    return absl::OkStatus();
  }

  // The server's write verifier now (COMMIT's), once.
  absl::StatusOr<std::string> VerifierNow(const nfs3::nfs_fh3& fh) {
    if (!verf_now_.empty()) return verf_now_;
    nfs3::COMMIT3res res;
    if (absl::Status st = Call(s_, nfs3::kCommit, nfs3::COMMIT3args{fh, 0, 0}, &res); !st.ok()) {
      return st;
    }
    if (res.status != nfs3::NFS3_OK) return NfsFailure("COMMIT", res.status, "after the cut");
    verf_now_ = Hex(res.verf);
    report_.verifier_changes += !r_.last_verf.empty() && verf_now_ != r_.last_verf;
    return verf_now_;
  }

  // Bytes of r that the server holds as the file's pattern.
  absl::StatusOr<uint64_t> Matching(const nfs3::nfs_fh3& fh, const bench::Pattern& p, Range r) {
    uint64_t same = 0;
    std::string data;
    std::vector<uint8_t> want;
    for (uint64_t done = 0; done < r.length;) {
      const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(r.length - done, s_.rtmax()));
      if (absl::Status st = ReadAt(s_, fh, r.offset + done, n, &data); !st.ok()) return st;
      want.resize(n);
      p.Fill(r.offset + done, absl::MakeSpan(want));
      for (size_t i = 0; i < std::min<size_t>(n, data.size()); ++i) {
        same += static_cast<uint8_t>(data[i]) == want[i];
      }
      done += n;
    }
    return same;
  }

  absl::Status CheckData(const std::string& name, const DataFile& file) {
    auto it = r_.acked.objects.find(name);
    nfs3::nfs_fh3 fh;
    if (it == r_.acked.objects.end() || !FhFromHex(it->second.fh, &fh)) {
      return absl::DataLossError(absl::StrCat("journal has writes to ", name, " but no handle"));
    }
    const bench::Pattern pattern(DataSeed(r_.seed, name));
    std::vector<Range> required = file.stable;
    if (!file.uncommitted.empty()) {
      absl::StatusOr<std::string> now = VerifierNow(fh);
      if (!now.ok()) return now.status();
      for (const UncommittedWrite& w : file.uncommitted) {
        if (w.verf == *now) {  // same server instance claimed: the data must be there
          required.push_back(w.range);
          continue;
        }
        absl::StatusOr<uint64_t> same = Matching(fh, pattern, w.range);
        if (!same.ok()) return same.status();
        report_.uncommitted_bytes += w.range.length;
        report_.uncommitted_present += *same;
      }
    }
    for (const Range& r : required) {
      absl::StatusOr<uint64_t> same = Matching(fh, pattern, r);
      if (!same.ok()) return same.status();
      report_.bytes_verified += *same;
      if (*same != r.length) {
        report_.stable_bytes_lost += r.length - *same;
        report_.problems.push_back(absl::StrCat(name, " [", r.offset, ", +", r.length, "): ",
                                                r.length - *same, " acknowledged bytes lost"));
      }
    }
    return absl::OkStatus();
  }

  bench::Session& s_;
  const Replay& r_;
  CheckReport report_;
  nfs3::nfs_fh3 dir_;
  std::string verf_now_;
};

}  // namespace

std::string CheckReport::Summary() const {
  return absl::StrCat(
      "bytes_verified=", bytes_verified, " stable_bytes_lost=", stable_bytes_lost,
      " uncommitted_bytes=", uncommitted_bytes, " uncommitted_present=", uncommitted_present,
      " verifier_changes=", verifier_changes, " namespace_changes=", namespace_changes,
      " namespace_lost=", namespace_lost, " handles_checked=", handles_checked,
      " handles_stale=", handles_stale, " in_flight_applied=", in_flight_applied ? 1 : 0,
      " exclusive_failed=", exclusive_failed, resent.empty() ? "" : " resent_",
      absl::StrJoin(resent, " resent_"));
}

absl::StatusOr<CheckReport> RunCheck(bench::Session& session, const Replay& replay) {
  return Checker(session, replay).Run();
}

}  // namespace nfs3d::powercut
