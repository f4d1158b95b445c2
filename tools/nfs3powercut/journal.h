// nfs3powercut's journal: one line per event, written with write(2) the
// moment the server's reply arrives, so a power cut of the server (not of
// this host) leaves in it exactly what the server acknowledged. "begin OP"
// is written before a call is sent and "done OP RESULTS" after its OK reply;
// a begin without its done is the one call in flight at the cut.
#ifndef NFS3D_TOOLS_NFS3POWERCUT_JOURNAL_H_
#define NFS3D_TOOLS_NFS3POWERCUT_JOURNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace nfs3d::powercut {

using Line = std::vector<std::string>;  // a journal line split at spaces

class JournalWriter {
 public:
  JournalWriter() = default;
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Creates (truncates) the journal at path.
  absl::Status Open(const std::string& path);
  // Appends one line (the tokens joined by spaces) with a single write(2).
  absl::Status Append(const Line& tokens);

 private:
  int fd_ = -1;
};

absl::StatusOr<std::vector<Line>> ReadJournal(const std::string& path);

std::string Hex(absl::Span<const uint8_t> bytes);
// False when text is not an even number of hex digits.
bool FromHex(const std::string& text, std::vector<uint8_t>* out);

}  // namespace nfs3d::powercut

#endif  // NFS3D_TOOLS_NFS3POWERCUT_JOURNAL_H_
