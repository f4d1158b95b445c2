#include "stats/prometheus.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nfs3d::stats {
namespace {

void Header(std::string* out, const std::string& name, const std::string& type,
            const std::string& help) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

std::string Braced(const std::string& labels) {
  return labels.empty() ? std::string() : absl::StrCat("{", labels, "}");
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.9g", v);
}

std::string ProcLabels(const ProcSnapshot& p) {
  return absl::StrCat("program=\"", EscapeLabel(p.program), "\",version=\"", p.vers, "\",proc=\"",
                      EscapeLabel(p.name), "\"");
}

// One histogram series: cumulative _bucket lines, _sum and _count.
template <size_t N, typename BoundFn>
void Histogram(std::string* out, const std::string& name, const std::string& labels,
               const std::array<uint64_t, N>& buckets, BoundFn bound, double sum) {
  const std::string prefix = labels.empty() ? std::string() : absl::StrCat(labels, ",");
  uint64_t cumulative = 0;
  for (size_t b = 0; b + 1 < N; ++b) {
    cumulative += buckets[b];
    absl::StrAppend(out, name, "_bucket{", prefix, "le=\"", Number(bound(b)), "\"} ", cumulative,
                    "\n");
  }
  cumulative += buckets[N - 1];
  absl::StrAppend(out, name, "_bucket{", prefix, "le=\"+Inf\"} ", cumulative, "\n");
  absl::StrAppend(out, name, "_sum", Braced(labels), " ", Number(sum), "\n");
  absl::StrAppend(out, name, "_count", Braced(labels), " ", cumulative, "\n");
}

}  // namespace

std::string EscapeLabel(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderPrometheus(const Snapshot& s, const std::vector<Family>& extra) {
  std::string out;
  out.reserve(64 << 10);

  Header(&out, "nfs3d_rpc_calls_total", "counter",
         "RPC calls per procedure and transport (including retransmissions answered from the "
         "duplicate request cache).");
  for (const ProcSnapshot& p : s.procs) {
    for (int t = 0; t < kNumTransports; ++t) {
      absl::StrAppend(&out, "nfs3d_rpc_calls_total{", ProcLabels(p), ",proto=\"",
                      kTransportNames[t], "\"} ", p.calls[t], "\n");
    }
  }
  Header(&out, "nfs3d_rpc_errors_total", "counter",
         "Calls that failed: a non-OK nfsstat3/mountstat3 in the results, or an RPC-level "
         "failure (GARBAGE_ARGS, SYSTEM_ERR, AUTH_ERROR, dropped).");
  for (const ProcSnapshot& p : s.procs) {
    for (int t = 0; t < kNumTransports; ++t) {
      absl::StrAppend(&out, "nfs3d_rpc_errors_total{", ProcLabels(p), ",proto=\"",
                      kTransportNames[t], "\"} ", p.errors[t], "\n");
    }
  }
  Header(&out, "nfs3d_rpc_duration_seconds", "histogram",
         "Time from a call's arrival at the dispatcher to its encoded reply.");
  for (const ProcSnapshot& p : s.procs) {
    Histogram(&out, "nfs3d_rpc_duration_seconds", ProcLabels(p), p.latency, LatencyBound,
              static_cast<double>(p.latency_ns) * 1e-9);
  }

  Header(&out, "nfs3d_rpc_messages_total", "counter", "RPC call messages received.");
  for (int t = 0; t < kNumTransports; ++t) {
    absl::StrAppend(&out, "nfs3d_rpc_messages_total{proto=\"", kTransportNames[t], "\"} ",
                    s.messages[t], "\n");
  }
  Header(&out, "nfs3d_rpc_flavor_calls_total", "counter",
         "Authenticated calls, by auth flavor (krb5*: RPCSEC_GSS services).");
  for (int t = 0; t < kNumTransports; ++t) {
    for (int f = 0; f < kNumFlavors; ++f) {
      absl::StrAppend(&out, "nfs3d_rpc_flavor_calls_total{proto=\"", kTransportNames[t],
                      "\",flavor=\"", FlavorSlotName(static_cast<FlavorSlot>(f)), "\"} ",
                      s.flavors[t][f], "\n");
    }
  }
  Header(&out, "nfs3d_rpc_rejected_total", "counter",
         "Call messages that did not get a normal reply, by reason.");
  for (int t = 0; t < kNumTransports; ++t) {
    for (int e = 1; e < kNumRpcEvents; ++e) {
      const auto event = static_cast<RpcEvent>(e);
      if (!IsRpcError(event)) continue;
      absl::StrAppend(&out, "nfs3d_rpc_rejected_total{proto=\"", kTransportNames[t], "\",reason=\"",
                      RpcEventName(event), "\"} ", s.events[t][e], "\n");
    }
  }
  Header(&out, "nfs3d_rpc_retransmits_total", "counter",
         "Retransmissions of non-idempotent calls seen by the duplicate request cache: "
         "replayed from the cache, or dropped while the original was running.");
  for (int t = 0; t < kNumTransports; ++t) {
    for (RpcEvent e : {RpcEvent::kDrcReplay, RpcEvent::kDrcInProgress}) {
      absl::StrAppend(&out, "nfs3d_rpc_retransmits_total{proto=\"", kTransportNames[t],
                      "\",outcome=\"",
                      e == RpcEvent::kDrcReplay ? "replayed" : "dropped_in_progress", "\"} ",
                      s.events[t][static_cast<int>(e)], "\n");
    }
  }

  Header(&out, "nfs3d_read_bytes_total", "counter", "File data bytes returned by READ.");
  absl::StrAppend(&out, "nfs3d_read_bytes_total ", s.read_bytes, "\n");
  Header(&out, "nfs3d_write_bytes_total", "counter", "File data bytes accepted by WRITE.");
  absl::StrAppend(&out, "nfs3d_write_bytes_total ", s.write_bytes, "\n");
  auto size_bound = [](size_t b) { return static_cast<double>(SizeBound(static_cast<int>(b))); };
  Header(&out, "nfs3d_read_size_bytes", "histogram", "Sizes of successful READs.");
  Histogram(&out, "nfs3d_read_size_bytes", "", s.read_sizes, size_bound,
            static_cast<double>(s.read_bytes));
  Header(&out, "nfs3d_write_size_bytes", "histogram", "Sizes of successful WRITEs.");
  Histogram(&out, "nfs3d_write_size_bytes", "", s.write_sizes, size_bound,
            static_cast<double>(s.write_bytes));

  for (const Family& f : extra) {
    Header(&out, f.name, f.type, f.help);
    for (const auto& [labels, value] : f.samples) {
      absl::StrAppend(&out, f.name, Braced(labels), " ", Number(value), "\n");
    }
  }
  return out;
}

}  // namespace nfs3d::stats
