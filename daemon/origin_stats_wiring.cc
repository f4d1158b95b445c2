#include "daemon/origin_stats_wiring.h"

#include <utility>

namespace nfs3d::daemon {
namespace {

stats::ExportNamer MakeNamer(OriginStatsWiring::ExportsFn exports) {
  return [exports = std::move(exports)](uint32_t id) -> std::string {
    std::shared_ptr<const conf::ExportTable> table = exports ? exports() : nullptr;
    if (table == nullptr) return {};
    const conf::Export* exp = table->FindById(id);
    return exp != nullptr ? exp->path : std::string();
  };
}

}  // namespace

OriginStatsWiring::OriginStatsWiring(stats::ServerStats* stats, const conf::ServerConfig& config,
                                     ExportsFn exports)
    : stats_(stats), namer_(MakeNamer(std::move(exports))), slow_log_(namer_) {
  stats::OriginLimits limits;
  limits.clients = config.top_clients;
  limits.exports = config.top_exports;
  limits.users = config.top_users;
  stats_->SetOriginLimits(limits);
  slow_log_.SetThresholdMs(config.slow_call_ms);
  stats_->SetSlowCallLog(&slow_log_);
}

OriginStatsWiring::~OriginStatsWiring() { stats_->SetSlowCallLog(nullptr); }

void OriginStatsWiring::Reload(const conf::ServerConfig& config) {
  slow_log_.SetThresholdMs(config.slow_call_ms);
}

void OriginStatsWiring::AppendMetrics(std::string* out, bool identities) const {
  if (stats_->origin_limits().clients == 0) return;
  stats::RenderOrigins(stats_->TakeOrigins(), namer_, out, identities);
}

}  // namespace nfs3d::daemon
