#include "tools/nfs3bench/lab_drops.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

#include "tools/nfs3bench/sweep.h"

namespace nfs3d::bench {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string ProcNet(pid_t pid, const char* file) {
  return absl::StrCat(pid == 0 ? std::string("/proc/self") : absl::StrCat("/proc/", pid), "/net/",
                      file);
}

// The value under `field` in the two-line block of `table` ("Udp", "Ip").
bool SnmpField(absl::string_view text, absl::string_view table, absl::string_view field,
               uint64_t* value) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  const std::string head = absl::StrCat(table, ":");
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], head) || !absl::StartsWith(lines[i + 1], head)) continue;
    std::vector<absl::string_view> names = absl::StrSplit(lines[i], ' ', absl::SkipEmpty());
    std::vector<absl::string_view> values = absl::StrSplit(lines[i + 1], ' ', absl::SkipEmpty());
    for (size_t k = 1; k < names.size() && k < values.size(); ++k) {
      if (names[k] == field) return absl::SimpleAtoi(values[k], value);
    }
    return false;
  }
  return false;
}

}  // namespace

const std::vector<std::string>& DropPlaces() {
  static const std::vector<std::string> places = {
      "server sndbuf",    "server qdisc",      "server veth",   "client reassembly",
      "client rcvbuf",    "client socket",     "client sndbuf", "client qdisc",
      "client veth",      "server reassembly", "server rcvbuf", "server socket",
      "backlog (machine)"};
  return places;
}

bool ParseSnmp(absl::string_view text, const std::string& prefix, DropCounts* out) {
  uint64_t rcvbuf, sndbuf, fails, timeouts;
  if (!SnmpField(text, "Udp", "RcvbufErrors", &rcvbuf) ||
      !SnmpField(text, "Udp", "SndbufErrors", &sndbuf) ||
      !SnmpField(text, "Ip", "ReasmFails", &fails) ||
      !SnmpField(text, "Ip", "ReasmTimeout", &timeouts)) {
    return false;
  }
  (*out)[prefix + " rcvbuf"] = rcvbuf;
  (*out)[prefix + " sndbuf"] = sndbuf;
  (*out)[prefix + " reassembly"] = fails;
  (*out)[prefix + " reassembly timeouts"] = timeouts;
  return true;
}

bool ParseSocketDrops(absl::string_view text, uint64_t* drops) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.empty() || lines[0].find("drops") == absl::string_view::npos) return false;
  uint64_t sum = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> cols = absl::StrSplit(lines[i], ' ', absl::SkipEmpty());
    uint64_t v;
    if (!cols.empty() && absl::SimpleAtoi(cols.back(), &v)) sum += v;
  }
  *drops = sum;
  return true;
}

bool ParseQdiscDrops(absl::string_view text, uint64_t* drops) {
  uint64_t sum = 0;
  bool found = false;
  size_t pos = 0;
  while ((pos = text.find("(dropped ", pos)) != absl::string_view::npos) {
    pos += 9;
    size_t end = text.find(',', pos);
    uint64_t v;
    if (end != absl::string_view::npos && absl::SimpleAtoi(text.substr(pos, end - pos), &v)) {
      sum += v;
      found = true;
    }
  }
  if (found) *drops = sum;
  return found;
}

bool ParseDevDrops(absl::string_view text, absl::string_view dev, uint64_t* drops) {
  // "  nbs0: rx_bytes rx_packets rx_errs rx_drop ... (8 rx) tx_bytes
  // tx_packets tx_errs tx_drop ..."
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, dev) || !absl::ConsumePrefix(&line, ":")) continue;
    std::vector<absl::string_view> cols = absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t rx, tx;
    if (cols.size() < 12 || !absl::SimpleAtoi(cols[3], &rx) || !absl::SimpleAtoi(cols[11], &tx)) {
      return false;
    }
    *drops = rx + tx;
    return true;
  }
  return false;
}

void ReadEnd(const std::string& end, pid_t netns_pid, const char* netns, const char* dev,
             DropCounts* out) {
  ParseSnmp(ReadText(ProcNet(netns_pid, "snmp")), end, out);
  uint64_t v4 = 0, v6 = 0;
  if (ParseSocketDrops(ReadText(ProcNet(netns_pid, "udp")), &v4)) {
    ParseSocketDrops(ReadText(ProcNet(netns_pid, "udp6")), &v6);
    (*out)[end + " socket"] = v4 + v6;
  }
  uint64_t v;
  if (ParseDevDrops(ReadText(ProcNet(netns_pid, "dev")), dev, &v)) (*out)[end + " veth"] = v;
  std::string tc;
  if (RunCommand({"tc", "-s", "-n", netns, "qdisc", "show", "dev", dev}, absl::Seconds(5), &tc) ==
          0 &&
      ParseQdiscDrops(tc, &v)) {
    (*out)[end + " qdisc"] = v;
  }
  // The per-CPU input backlog (netdev_max_backlog) that veth hands frames
  // to: one set of counters for the whole machine, read once.
  if (out->count("backlog (machine)") == 0) {
    uint64_t sum = 0;
    std::istringstream lines(ReadText("/proc/net/softnet_stat"));
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream cols(line);
      std::string processed, dropped;
      uint64_t d;
      if (cols >> processed >> dropped && absl::SimpleHexAtoi(dropped, &d)) sum += d;
    }
    (*out)["backlog (machine)"] = sum;
  }
}

DropCounts DropDelta(const DropCounts& before, const DropCounts& after) {
  DropCounts delta;
  for (const auto& [place, value] : after) {
    auto it = before.find(place);
    if (it == before.end() || value <= it->second) continue;
    delta[place] = value - it->second;
  }
  return delta;
}

std::string DescribeDrops(const DropCounts& delta) {
  std::string text;
  for (const std::string& place : DropPlaces()) {
    auto it = delta.find(place);
    if (it == delta.end()) continue;
    absl::StrAppend(&text, text.empty() ? "" : ", ", place, " ", it->second);
    auto timeouts = delta.find(place + " timeouts");
    if (timeouts != delta.end()) absl::StrAppend(&text, " (timeouts ", timeouts->second, ")");
  }
  return text;
}

}  // namespace nfs3d::bench
