// A small parser for the Prometheus text format: enough to read nfs3d's own
// /metrics back (nfs3stat). Comment lines are skipped; timestamps ignored.
#ifndef NFS3D_STATS_PROM_TEXT_H_
#define NFS3D_STATS_PROM_TEXT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace nfs3d::stats {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;

  std::string Label(const std::string& key) const {
    auto it = labels.find(key);
    return it == labels.end() ? std::string() : it->second;
  }
};

absl::StatusOr<std::vector<Sample>> ParsePrometheusText(std::string_view text);

}  // namespace nfs3d::stats

#endif  // NFS3D_STATS_PROM_TEXT_H_
