// libFuzzer target for the GET /connections text (stats/connections_text.h)
// as nfs3stat and nfs3top read it, and the table they print from it: the
// input is the page. Whatever it holds, every field read back is printable
// ASCII with no tab or newline, formatting and reading again gives the same
// rows, and the printed table has nothing a terminal would act on.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stats/connections_text.h"
#include "tests/fuzz/fuzz_check.h"
#include "tools/nfs3stat/connections.h"

namespace {

bool Printable(const std::string& s, bool lines) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (lines && (c == '\n' || c == '\t')) continue;
    if (u < 0x20 || u >= 0x7f) return false;
  }
  return true;
}

bool Same(const nfs3d::stats::ConnectionRow& a, const nfs3d::stats::ConnectionRow& b) {
  return a.client == b.client && a.port == b.port && a.security == b.security &&
         a.version == b.version && a.cipher == b.cipher && a.records == b.records &&
         a.subject == b.subject;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view page(reinterpret_cast<const char*>(data), size);
  const std::vector<nfs3d::stats::ConnectionRow> rows = nfs3d::stats::ParseConnections(page);
  for (const nfs3d::stats::ConnectionRow& r : rows) {
    for (const std::string* f :
         {&r.client, &r.security, &r.version, &r.cipher, &r.records, &r.subject}) {
      FUZZ_CHECK(Printable(*f, false));
      FUZZ_CHECK(f->size() <= nfs3d::stats::kConnectionFieldLimit);
    }
  }
  const std::vector<nfs3d::stats::ConnectionRow> again =
      nfs3d::stats::ParseConnections(nfs3d::stats::FormatConnections(rows));
  FUZZ_CHECK(again.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) FUZZ_CHECK(Same(rows[i], again[i]));
  FUZZ_CHECK(Printable(nfs3d::nfs3stat::FormatConnectionTable(rows, 20, 120), true));
  return 0;
}
