#include "tools/nfs3powercut/model.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nfs3d::powercut {
namespace {

absl::Status Malformed(const Line& line) {
  return absl::DataLossError(absl::StrCat("bad journal line: ", absl::StrJoin(line, " ")));
}

bool ParseMode(const std::string& text, uint32_t* mode) {
  return absl::numbers_internal::safe_strtou32_base(text, mode, 8);
}

}  // namespace

uint64_t DataFile::stable_bytes() const {
  uint64_t n = 0;
  for (const Range& r : stable) n += r.length;
  return n;
}

bool IsDataFile(const std::string& name) { return !name.empty() && name[0] == 'd'; }

uint64_t DataSeed(uint64_t run_seed, const std::string& name) {
  uint64_t index = 0;
  if (!absl::SimpleAtoi(name.substr(1), &index)) index = 0;
  return run_seed * 64 + index + 1;
}

uint32_t Model::LinkCount(const std::string& key) const {
  uint32_t n = 0;
  for (const auto& [name, k] : names) n += k == key;
  return n;
}

std::vector<std::string> Model::MetaNames() const {
  std::vector<std::string> out;
  for (const auto& [name, key] : names) {
    if (!IsDataFile(name)) out.push_back(name);
  }
  return out;
}

absl::Status Model::Apply(const Line& line, bool acked) {
  if (line.size() < 3) return Malformed(line);
  const std::string& op = line[1];
  if (op == "write") return ApplyWrite(line, acked);
  if (op == "commit") return ApplyCommit(line, acked);
  return ApplyNamespace(line, acked);
}

// done write NAME OFFSET LENGTH COMMITTED VERF (COMMITTED: 0 UNSTABLE,
// 1 DATA_SYNC, 2 FILE_SYNC). A write in flight leaves nothing to require.
absl::Status Model::ApplyWrite(const Line& line, bool acked) {
  if (!acked) return absl::OkStatus();
  Range r;
  uint32_t committed = 0;
  if (line.size() != 7 || !absl::SimpleAtoi(line[3], &r.offset) ||
      !absl::SimpleAtoi(line[4], &r.length) || !absl::SimpleAtoi(line[5], &committed)) {
    return Malformed(line);
  }
  DataFile& f = data[line[2]];
  f.end = std::max(f.end, r.offset + r.length);
  if (committed > 0) {
    f.stable.push_back(r);
  } else {
    f.uncommitted.push_back({r, line[6]});
  }
  return absl::OkStatus();
}

// done commit NAME VERF: the file's UNSTABLE writes that carried VERF are
// stable now; those with another verifier are not (a client resends them).
absl::Status Model::ApplyCommit(const Line& line, bool acked) {
  if (!acked) return absl::OkStatus();
  if (line.size() != 4) return Malformed(line);
  DataFile& f = data[line[2]];
  std::vector<UncommittedWrite> left;
  for (const UncommittedWrite& w : f.uncommitted) {
    if (w.verf == line[3]) {
      f.stable.push_back(w.range);
    } else {
      left.push_back(w);
    }
  }
  f.uncommitted = std::move(left);
  return absl::OkStatus();
}

// create NAME MODE [FILEID FH], xcreate NAME MODE [FILEID FH] VERF (CREATE
// EXCLUSIVE), rename FROM TO, link FROM TO, chmod NAME MODE, remove NAME.
absl::Status Model::ApplyNamespace(const Line& line, bool acked) {
  const std::string& op = line[1];
  const std::string& name = line[2];
  if ((op == "create" && line.size() == (acked ? 6u : 4u)) ||
      (op == "xcreate" && line.size() == (acked ? 7u : 5u))) {
    Object o;
    o.exclusive = op == "xcreate";
    if (!ParseMode(line[3], &o.mode)) return Malformed(line);
    if (acked) {
      if (!absl::SimpleAtoi(line[4], &o.fileid) || o.fileid == 0) return Malformed(line);
      o.fh = line[5];
    }
    names[name] = name;
    objects[name] = o;
  } else if ((op == "rename" || op == "link") && line.size() == 4 && names.count(name)) {
    names[line[3]] = names[name];
    if (op == "rename") names.erase(name);
  } else if (op == "chmod" && line.size() == 4 && names.count(name)) {
    if (!ParseMode(line[3], &objects[names[name]].mode)) return Malformed(line);
  } else if (op == "remove" && line.size() == 3 && names.count(name)) {
    names.erase(name);
  } else {
    return Malformed(line);
  }
  if (acked) ++namespace_changes;
  return absl::OkStatus();
}

// sent XID PROC ARGS, after the begin line of the call.
absl::Status ParseSent(const Line& line, const Line* pending, std::optional<SentCall>* sent) {
  SentCall c;
  if (pending == nullptr || line.size() != 4 || !absl::SimpleAtoi(line[1], &c.xid) ||
      !absl::SimpleAtoi(line[2], &c.proc)) {
    return Malformed(line);
  }
  c.op = (*pending)[1];
  c.name = (*pending)[2];
  if ((c.op == "rename" || c.op == "link") && pending->size() > 3) c.to = (*pending)[3];
  c.args = line[3];
  *sent = std::move(c);
  return absl::OkStatus();
}

absl::StatusOr<Replay> ReplayJournal(const std::vector<Line>& lines) {
  Replay r;
  std::set<std::string> mentioned;
  const Line* pending = nullptr;
  std::optional<SentCall> sent;  // the pending call's
  for (const Line& line : lines) {
    if (!line.empty() && line[0] == "sent") {
      if (absl::Status s = ParseSent(line, pending, &sent); !s.ok()) return s;
      continue;
    }
    if (line.size() == 2 && line[0] == "seed") {
      if (!absl::SimpleAtoi(line[1], &r.seed)) return Malformed(line);
    } else if (line.size() == 2 && line[0] == "dir") {
      r.dir = line[1];
    } else if (line.size() == 1 && line[0] == "ready") {
      r.ready = true;
    } else if (line.size() >= 3 && (line[0] == "begin" || line[0] == "done")) {
      mentioned.insert(line[2]);
      if ((line[1] == "rename" || line[1] == "link") && line.size() >= 4) mentioned.insert(line[3]);
      if (line[0] == "begin") {
        pending = &line;
        sent.reset();
        continue;
      }
      if (absl::Status s = r.acked.Apply(line, true); !s.ok()) return s;
      if (line[1] == "write" || line[1] == "commit") r.last_verf = line.back();
      if (sent) r.acked_calls.push_back(*sent);
      pending = nullptr;
      sent.reset();
    } else {
      return Malformed(line);
    }
  }
  if (pending != nullptr) {
    r.in_flight_call = sent;
    r.with_pending = r.acked;
    if (absl::Status s = r.with_pending->Apply(*pending, false); !s.ok()) return s;
  }
  r.all_names.assign(mentioned.begin(), mentioned.end());
  return r;
}

}  // namespace nfs3d::powercut
