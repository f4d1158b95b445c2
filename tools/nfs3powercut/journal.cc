#include "tools/nfs3powercut/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace nfs3d::powercut {

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) close(fd_);
}

absl::Status JournalWriter::Open(const std::string& path) {
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return absl::InternalError(absl::StrCat(path, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

absl::Status JournalWriter::Append(const Line& tokens) {
  const std::string line = absl::StrCat(absl::StrJoin(tokens, " "), "\n");
  ssize_t n = write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    return absl::InternalError(absl::StrCat("journal write: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Line>> ReadJournal(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read journal ", path));
  std::vector<Line> lines;
  std::string text;
  while (std::getline(in, text)) {
    // A line cut short when the writer was killed has no newline: getline
    // still returns it, but eof() tells it apart; it is dropped.
    if (in.eof()) break;
    if (!text.empty()) lines.push_back(absl::StrSplit(text, ' ', absl::SkipEmpty()));
  }
  return lines;
}

std::string Hex(absl::Span<const uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

bool FromHex(const std::string& text, std::vector<uint8_t>* out) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() % 2) return false;
  out->clear();
  for (size_t i = 0; i < text.size(); i += 2) {
    int hi = digit(text[i]), lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  return true;
}

}  // namespace nfs3d::powercut
