// What the journal says the server must hold: the state after every
// acknowledged call, built by replaying the journal's "done" lines. The
// writer keeps one to choose its next call; the checker compares the server
// with it after the power cut (and with the same state plus the call that
// was in flight, whose outcome nobody knows).
#ifndef NFS3D_TOOLS_NFS3POWERCUT_MODEL_H_
#define NFS3D_TOOLS_NFS3POWERCUT_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "tools/nfs3powercut/journal.h"

namespace nfs3d::powercut {

struct Object {
  uint64_t fileid = 0;     // 0: created by the call in flight, not known
  bool exclusive = false;  // made by CREATE EXCLUSIVE
  uint32_t mode = 0;
  std::string fh;  // hex, as CREATE returned it
};

struct Range {
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct UncommittedWrite {
  Range range;
  std::string verf;  // hex, as the WRITE reply gave it
};

// A data file: written only by appends, with data from its own pattern.
struct DataFile {
  std::vector<Range> stable;  // FILE_SYNC/DATA_SYNC replies, and committed UNSTABLE writes
  std::vector<UncommittedWrite> uncommitted;
  uint64_t end = 0;  // where the next append goes
  uint64_t stable_bytes() const;
};

// Data files are named "d<index>"; everything else is a metadata object.
bool IsDataFile(const std::string& name);
// The data pattern's seed for one data file of a run.
uint64_t DataSeed(uint64_t run_seed, const std::string& name);

class Model {
 public:
  // Applies a "done" line, or (acked = false) the call of a "begin" line as
  // if it took effect. Unknown or malformed lines are an error.
  absl::Status Apply(const Line& line, bool acked);

  std::map<std::string, std::string> names;  // name -> key of its object
  std::map<std::string, Object> objects;     // key (the name created under) -> object
  std::map<std::string, DataFile> data;
  uint64_t namespace_changes = 0;  // acknowledged create/rename/link/chmod/remove

  // Names that refer to the object of key.
  uint32_t LinkCount(const std::string& key) const;
  // Names of metadata objects, in order.
  std::vector<std::string> MetaNames() const;

 private:
  absl::Status ApplyWrite(const Line& line, bool acked);
  absl::Status ApplyCommit(const Line& line, bool acked);
  absl::Status ApplyNamespace(const Line& line, bool acked);
};

// A namespace call as its "sent" line recorded it, to be sent again.
struct SentCall {
  std::string op;    // create, xcreate (EXCLUSIVE), rename, link, chmod, remove
  std::string name;  // the name it created, renamed, linked, changed or removed
  std::string to;    // rename's and link's new name
  uint32_t xid = 0;
  uint32_t proc = 0;
  std::string args;  // hex
};

// The journal replayed: its header, the acknowledged state, and that state
// with the call in flight applied (when one was).
struct Replay {
  uint64_t seed = 0;
  std::string dir;
  bool ready = false;     // the writer finished its setup
  std::string last_verf;  // hex: the write verifier of the last WRITE or COMMIT reply
  Model acked;
  std::optional<Model> with_pending;
  std::vector<std::string> all_names;  // every name the journal mentions
  std::vector<SentCall> acked_calls;   // acknowledged namespace calls, in order
  std::optional<SentCall> in_flight_call;
};
absl::StatusOr<Replay> ReplayJournal(const std::vector<Line>& lines);

}  // namespace nfs3d::powercut

#endif  // NFS3D_TOOLS_NFS3POWERCUT_MODEL_H_
