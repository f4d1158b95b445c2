#include "rpc/gss/gss_util.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace nfs3d::rpc::gss {

std::string GssErrorText(OM_uint32 major, OM_uint32 minor) {
  std::string text;
  for (auto [code, type] : {std::pair{major, GSS_C_GSS_CODE}, std::pair{minor, GSS_C_MECH_CODE}}) {
    OM_uint32 more = 0;
    do {
      OM_uint32 ignored = 0;
      OutBuffer msg;
      if (GSS_ERROR(gss_display_status(&ignored, code, type, GSS_C_NO_OID, &more, &msg.b))) break;
      absl::StrAppend(&text, text.empty() ? "" : "; ",
                      std::string(static_cast<const char*>(msg.b.value), msg.b.length));
    } while (more != 0);
  }
  return text;
}

}  // namespace nfs3d::rpc::gss
