#include "tools/nfs3bench/report.h"

#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d::bench {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

bool IsIo(const RunResult& r) { return r.xfer > 0; }

}  // namespace

std::string SizeName(uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return absl::StrCat(b >> 20, "m");
  if (b >= 1024 && b % 1024 == 0) return absl::StrCat(b >> 10, "k");
  return absl::StrCat(b);
}

std::string BlockSizeName(uint64_t bs) { return bs == kPreferredSize ? "pref" : SizeName(bs); }

bool ParseSize(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t mult = 1;
  std::string digits = text;
  switch (std::tolower(static_cast<unsigned char>(text.back()))) {
    case 'k':
      mult = 1ull << 10;
      break;
    case 'm':
      mult = 1ull << 20;
      break;
    case 'g':
      mult = 1ull << 30;
      break;
    default:
      break;
  }
  if (mult != 1) digits.pop_back();
  uint64_t v;
  if (!absl::SimpleAtoi(digits, &v) || v == 0) return false;
  *out = v * mult;
  return true;
}

std::string HumanLine(const RunResult& r) {
  std::string head = absl::StrFormat("%-11s %s", r.workload, r.proto);
  if (r.mtu) absl::StrAppendFormat(&head, " mtu=%d", r.mtu);
  if (IsIo(r)) {
    absl::StrAppendFormat(&head, " bs=%s", BlockSizeName(r.bs));
    if (r.xfer != r.bs) absl::StrAppendFormat(&head, "(rpc %s)", SizeName(r.xfer));
  }
  absl::StrAppendFormat(&head, " qd=%d", r.outstanding);
  if (r.stable != "-") absl::StrAppendFormat(&head, " %s", r.stable);
  std::string body;
  if (IsIo(r)) {
    body = absl::StrFormat(
        "%d bytes %.3f sec = %.2f MB/s %.2f Mbit/s  %d calls %.0f calls/s %.3f msec/call  "
        "%d retrans  verify=%s",
        r.bytes, r.seconds, r.MBps(), r.Mbitps(), r.calls, r.CallsPerSec(), r.msec_per_call,
        r.retransmits, r.verified);
  } else {
    body = absl::StrFormat(
        "%d ops %.3f sec = %.0f ops/s  %d calls %.0f calls/s %.3f msec/call  "
        "%d retrans",
        r.ops, r.seconds, r.OpsPerSec(), r.calls, r.CallsPerSec(), r.msec_per_call, r.retransmits);
  }
  std::string line = absl::StrCat(head, ": ", body);
  if (r.connections > 0) {
    absl::StrAppendFormat(&line,
                          "  conns=%d p50=%.3f p99=%.3f max=%.3f msec  %d errors %d reconnects",
                          r.connections, r.p50_ms, r.p99_ms, r.max_ms, r.errors, r.reconnects);
    absl::StrAppendFormat(&line, "  slowest/median window: 100ms %.0f/%.0f, 1s %.0f/%.0f calls/s",
                          r.min_100ms, r.median_100ms, r.min_1s, r.median_1s);
  }
  if (r.wire_mbps > 0 && IsIo(r)) {
    absl::StrAppendFormat(&line, "  %.0f%% of wire", 100.0 * r.Mbitps() / r.wire_mbps);
  }
  if (!r.error.empty()) absl::StrAppend(&line, "\n  ERROR: ", r.error);
  return line;
}

std::string JsonLine(const RunResult& r) {
  return absl::StrFormat(
      "{\"workload\":%s,\"proto\":%s,\"mtu\":%d,\"bs\":%d,\"rpc_size\":%d,\"outstanding\":%d,"
      "\"stable\":%s,\"bytes\":%d,\"seconds\":%.6f,\"MBps\":%.3f,\"Mbitps\":%.3f,\"calls\":%d,"
      "\"calls_per_sec\":%.1f,\"ops\":%d,\"ops_per_sec\":%.1f,\"msec_per_call\":%.4f,"
      "\"retransmits\":%d,\"timeouts\":%d,\"verified\":%s,\"wire_Mbitps\":%.1f,"
      "\"server_cpu_sec\":%.3f,\"client_cpu_sec\":%.3f,\"machine_cpu_sec\":%.3f,"
      "\"connections\":%d,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f,\"errors\":%d,"
      "\"reconnects\":%d,\"min_100ms\":%.1f,\"median_100ms\":%.1f,\"min_1s\":%.1f,"
      "\"median_1s\":%.1f,\"error\":%s}",
      JsonString(r.workload), JsonString(r.proto), r.mtu, r.bs, r.xfer, r.outstanding,
      JsonString(r.stable), r.bytes, r.seconds, r.MBps(), r.Mbitps(), r.calls, r.CallsPerSec(),
      r.ops, r.OpsPerSec(), r.msec_per_call, r.retransmits, r.timeouts, JsonString(r.verified),
      r.wire_mbps, r.server_cpu_sec, r.client_cpu_sec, r.machine_cpu_sec, r.connections, r.p50_ms,
      r.p99_ms, r.max_ms, r.errors, r.reconnects, r.min_100ms, r.median_100ms, r.min_1s,
      r.median_1s, JsonString(r.error));
}

std::string CsvHeader() {
  return "workload,proto,mtu,bs,rpc_size,outstanding,stable,bytes,seconds,MBps,Mbitps,calls,"
         "calls_per_sec,ops_per_sec,msec_per_call,retransmits,verified,wire_Mbitps,pct_of_wire,"
         "error";
}

std::string CsvRow(const RunResult& r) {
  std::string err = r.error;
  for (char& c : err) {
    if (c == ',' || c == '\n' || c == '"') c = ' ';
  }
  double pct = r.wire_mbps > 0 ? 100.0 * r.Mbitps() / r.wire_mbps : 0;
  return absl::StrFormat(
      "%s,%s,%d,%d,%d,%d,%s,%d,%.6f,%.3f,%.3f,%d,%.1f,%.1f,%.4f,%d,%s,%.1f,%.1f,%s", r.workload,
      r.proto, r.mtu, r.bs, r.xfer, r.outstanding, r.stable, r.bytes, r.seconds, r.MBps(),
      r.Mbitps(), r.calls, r.CallsPerSec(), r.OpsPerSec(), r.msec_per_call, r.retransmits,
      r.verified, r.wire_mbps, pct, err);
}

}  // namespace nfs3d::bench
