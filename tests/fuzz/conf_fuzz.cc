// libFuzzer target for the configuration parsers: the first byte picks the
// exports(5) parser or the nfs3d.conf (INI) parser, the rest is the file. A
// parsed exports table must describe itself without trouble and every export
// path must be normalized.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "conf/exports.h"
#include "conf/server_config.h"

namespace {

volatile size_t g_sink;

void Fuzz(const uint8_t* data, size_t size) {
  if (size == 0) return;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) {
    auto table = nfs3d::conf::ParseExports(text, "fuzz");
    if (!table.ok()) return;
    for (const auto& exp : table->exports) {
      std::string described = nfs3d::conf::DescribeExport(exp);
      g_sink = described.size();
      auto normal = nfs3d::conf::NormalizeExportPath(exp.path);
      if (!normal || *normal != exp.path) std::abort();
      if (table->FindById(exp.export_id) == nullptr) std::abort();
    }
  } else {
    auto config = nfs3d::conf::ParseServerConfig(text, "fuzz");
    if (!config.ok()) return;
    g_sink = nfs3d::conf::Describe(*config).size();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fuzz(data, size);
  return 0;
}
