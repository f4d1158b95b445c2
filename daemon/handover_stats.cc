#include "daemon/handover_stats.h"

#include <algorithm>
#include <array>
#include <vector>

namespace nfs3d::daemon {
namespace {

template <size_t N>
void Append(const std::array<uint64_t, N>& from, std::vector<uint64_t>* to) {
  to->insert(to->end(), from.begin(), from.end());
}

// Elements [offset, offset + N) of `from`, as many as it has.
template <size_t N>
void Fill(const std::vector<uint64_t>& from, size_t offset, std::array<uint64_t, N>* to) {
  for (size_t i = 0; i < N && offset + i < from.size(); ++i) (*to)[i] = from[offset + i];
}

}  // namespace

handover::StatsState StatsToHandover(const stats::Snapshot& snapshot) {
  handover::StatsState out;
  Append(snapshot.messages, &out.messages);
  for (int t = 0; t < stats::kNumTransports; ++t) {
    Append(snapshot.events[t], &out.events);
    Append(snapshot.flavors[t], &out.flavors);
  }
  out.read_bytes = snapshot.read_bytes;
  out.write_bytes = snapshot.write_bytes;
  Append(snapshot.read_sizes, &out.read_sizes);
  Append(snapshot.write_sizes, &out.write_sizes);
  for (const stats::ProcSnapshot& p : snapshot.procs) {
    handover::StatsProcEntry e;
    e.program = p.program;
    e.prog = p.prog;
    e.vers = p.vers;
    e.proc = p.proc;
    e.name = p.name;
    Append(p.calls, &e.calls);
    Append(p.errors, &e.errors);
    Append(p.latency, &e.latency);
    e.latency_ns = p.latency_ns;
    out.procs.push_back(std::move(e));
  }
  return out;
}

stats::Snapshot StatsFromHandover(const handover::StatsState& state) {
  stats::Snapshot out;
  Fill(state.messages, 0, &out.messages);
  for (int t = 0; t < stats::kNumTransports; ++t) {
    Fill(state.events, t * size_t{stats::kNumRpcEvents}, &out.events[t]);
    Fill(state.flavors, t * size_t{stats::kNumFlavors}, &out.flavors[t]);
  }
  out.read_bytes = state.read_bytes;
  out.write_bytes = state.write_bytes;
  Fill(state.read_sizes, 0, &out.read_sizes);
  Fill(state.write_sizes, 0, &out.write_sizes);
  for (const handover::StatsProcEntry& e : state.procs) {
    stats::ProcSnapshot p;
    p.program = e.program;
    p.prog = e.prog;
    p.vers = e.vers;
    p.proc = e.proc;
    p.name = e.name;
    Fill(e.calls, 0, &p.calls);
    Fill(e.errors, 0, &p.errors);
    Fill(e.latency, 0, &p.latency);
    p.latency_ns = e.latency_ns;
    out.procs.push_back(std::move(p));
  }
  return out;
}

}  // namespace nfs3d::daemon
