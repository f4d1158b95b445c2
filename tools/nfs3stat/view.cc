#include "tools/nfs3stat/view.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace nfs3d::nfs3stat {
namespace {

// The procedure a sample belongs to, created in order of first appearance
// (the server lists procedures in number order).
ProcView& Proc(StatView& view, const stats::Sample& s) {
  std::vector<ProcView>& procs =
      view.programs[absl::StrCat(s.Label("program"), " v", s.Label("version"))];
  const std::string name = s.Label("proc");
  for (ProcView& p : procs) {
    if (p.name == name) return p;
  }
  procs.push_back(ProcView{name, static_cast<uint32_t>(procs.size())});
  return procs.back();
}

}  // namespace

StatView BuildView(const std::vector<stats::Sample>& samples) {
  StatView v;
  for (const stats::Sample& s : samples) {
    const std::string& n = s.name;
    if (n == "nfs3d_rpc_calls_total") {
      ProcView& p = Proc(v, s);
      p.calls += s.value;
      (s.Label("proto") == "udp" ? p.udp : p.tcp) += s.value;
    } else if (n == "nfs3d_rpc_errors_total") {
      Proc(v, s).errors += s.value;
    } else if (n == "nfs3d_rpc_duration_seconds_sum") {
      Proc(v, s).seconds = s.value;
    } else if (n == "nfs3d_rpc_duration_seconds_bucket") {
      std::string le = s.Label("le");
      double bound = le == "+Inf" ? HUGE_VAL : std::strtod(le.c_str(), nullptr);
      Proc(v, s).buckets.emplace_back(bound, s.value);
    } else if (n == "nfs3d_rpc_messages_total") {
      v.messages += s.value;
    } else if (n == "nfs3d_rpc_rejected_total") {
      v.rejected[s.Label("reason")] += s.value;
    } else if (n == "nfs3d_rpc_retransmits_total") {
      v.retransmits += s.value;
    } else if (n == "nfs3d_read_bytes_total") {
      v.read_bytes = s.value;
    } else if (n == "nfs3d_write_bytes_total") {
      v.write_bytes = s.value;
    } else if (n == "nfs3d_sync_requests_total") {
      v.sync_requests = s.value;
    } else if (n == "nfs3d_fsyncs_total") {
      v.fsyncs = s.value;
    } else if (n == "nfs3d_drc_hits_total") {
      v.drc_hits = s.value;
    } else if (n == "nfs3d_drc_in_progress_drops_total") {
      v.drc_in_progress = s.value;
    } else if (n == "nfs3d_drc_evictions_total") {
      v.drc_evictions = s.value;
    } else if (n == "nfs3d_tcp_connections") {
      v.tcp_connections = s.value;
    } else if (n == "nfs3d_config_reloads_total") {
      (s.Label("result") == "ok" ? v.reloads_ok : v.reloads_failed) = s.value;
    } else if (n == "nfs3d_start_time_seconds") {
      v.start_time = s.value;
    } else if (n == "nfs3d_cluster_info") {
      v.cluster = s.Label("cluster");
      v.node_id = s.Label("node_id");
    } else if (n == "nfs3d_nlm_in_grace") {
      v.nlm_in_grace = s.value != 0;
    }
  }
  return v;
}

StatView Subtract(const StatView& after, const StatView& before) {
  StatView d = after;
  for (auto& [program, procs] : d.programs) {
    auto old = before.programs.find(program);
    if (old == before.programs.end()) continue;
    for (ProcView& p : procs) {
      for (const ProcView& o : old->second) {
        if (o.name != p.name) continue;
        p.calls -= o.calls;
        p.tcp -= o.tcp;
        p.udp -= o.udp;
        p.errors -= o.errors;
        p.seconds -= o.seconds;
        for (size_t i = 0; i < p.buckets.size() && i < o.buckets.size(); ++i) {
          p.buckets[i].second -= o.buckets[i].second;
        }
      }
    }
  }
  d.messages -= before.messages;
  for (auto& [reason, count] : d.rejected) {
    auto it = before.rejected.find(reason);
    if (it != before.rejected.end()) count -= it->second;
  }
  d.retransmits -= before.retransmits;
  d.read_bytes -= before.read_bytes;
  d.write_bytes -= before.write_bytes;
  d.sync_requests -= before.sync_requests;
  d.fsyncs -= before.fsyncs;
  d.drc_hits -= before.drc_hits;
  d.drc_in_progress -= before.drc_in_progress;
  d.drc_evictions -= before.drc_evictions;
  d.reloads_ok -= before.reloads_ok;
  d.reloads_failed -= before.reloads_failed;
  return d;
}

double Quantile(const ProcView& proc, double q) {
  if (proc.buckets.empty()) return 0;
  const double total = proc.buckets.back().second;
  if (total <= 0) return 0;
  for (const auto& [le, cumulative] : proc.buckets) {
    if (cumulative >= q * total) return le;
  }
  return proc.buckets.back().first;
}

const ProcView* FindProc(const StatView& view, const std::string& program,
                         const std::string& name) {
  auto it = view.programs.find(program);
  if (it == view.programs.end()) return nullptr;
  for (const ProcView& p : it->second) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace nfs3d::nfs3stat
