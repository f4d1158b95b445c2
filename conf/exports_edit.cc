#include "conf/exports_edit.h"

#include <optional>
#include <vector>

#include "conf/exports.h"
#include "conf/ini_parser.h"

namespace nfs3d::conf {
namespace {

// The physical lines of `text`, each with its newline (the last may lack one).
std::vector<std::string_view> PhysicalLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    size_t len = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(0, len));
    text.remove_prefix(len);
  }
  return lines;
}

bool Continues(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return !line.empty() && line.back() == '\\';
}

// A logical line: the physical lines it spans, and the path it exports
// (none for blank and comment lines).
struct Entry {
  std::string text;
  std::optional<std::string> path;
};

absl::StatusOr<std::vector<Entry>> Entries(std::string_view text) {
  std::vector<Entry> entries;
  Entry current;
  for (std::string_view line : PhysicalLines(text)) {
    current.text += line;
    if (Continues(line)) continue;
    absl::StatusOr<ExportTable> parsed = ParseExports(current.text, "exports");
    if (!parsed.ok()) return parsed.status();
    if (!parsed->exports.empty()) current.path = parsed->exports.front().path;
    entries.push_back(std::move(current));
    current = Entry();
  }
  if (!current.text.empty()) entries.push_back(std::move(current));
  return entries;
}

std::string Join(const std::vector<Entry>& entries) {
  std::string out;
  for (const Entry& e : entries) out += e.text;
  return out;
}

}  // namespace

absl::StatusOr<std::string> AddExportLine(std::string_view text, std::string_view line) {
  absl::StatusOr<ExportTable> added = ParseExports(line, "new export");
  if (!added.ok()) return added.status();
  if (added->exports.size() != 1) {
    return absl::InvalidArgumentError("give exactly one export: PATH CLIENT(OPTIONS)...");
  }
  absl::StatusOr<std::vector<Entry>> entries = Entries(text);
  if (!entries.ok()) return entries.status();
  std::string new_line(line);
  while (!new_line.empty() && new_line.back() == '\n') new_line.pop_back();
  new_line += '\n';
  const std::string& path = added->exports.front().path;
  bool replaced = false;
  for (Entry& e : *entries) {
    if (e.path == path) {
      e.text = new_line;
      replaced = true;
    }
  }
  if (!replaced) {
    if (!entries->empty() && !entries->back().text.empty() && entries->back().text.back() != '\n') {
      entries->back().text += '\n';
    }
    entries->push_back({new_line, path});
  }
  std::string result = Join(*entries);
  if (absl::StatusOr<ExportTable> all = ParseExports(result, "exports"); !all.ok()) {
    return all.status();
  }
  return result;
}

absl::StatusOr<std::string> RemoveExportLine(std::string_view text, std::string_view path) {
  std::optional<std::string> wanted = NormalizeExportPath(path);
  if (!wanted) return absl::InvalidArgumentError(text::Cat("'", path, "' is not an export path"));
  absl::StatusOr<std::vector<Entry>> entries = Entries(text);
  if (!entries.ok()) return entries.status();
  std::vector<Entry> kept;
  for (Entry& e : *entries) {
    if (e.path != *wanted) kept.push_back(std::move(e));
  }
  if (kept.size() == entries->size()) {
    return absl::NotFoundError(text::Cat(*wanted, " is not exported"));
  }
  return Join(kept);
}

std::string StampChange(std::string_view text, std::string_view change) {
  if (text.substr(0, kChangeMarker.size()) == kChangeMarker) {
    size_t end = text.find('\n');
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return text::Cat(kChangeMarker, change, "\n", text);
}

std::string ChangeOf(std::string_view text) {
  if (text.substr(0, kChangeMarker.size()) != kChangeMarker) return "";
  text.remove_prefix(kChangeMarker.size());
  return std::string(text.substr(0, text.find('\n')));
}

}  // namespace nfs3d::conf
