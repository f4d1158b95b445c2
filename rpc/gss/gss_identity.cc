#include "rpc/gss/gss_identity.h"

#include <gssapi/gssapi_ext.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace nfs3d::rpc::gss {
namespace {

std::string BufferString(const gss_buffer_desc& b) {
  return std::string(static_cast<const char*>(b.value), b.length);
}

}  // namespace

GssIdentity LocalUserIdentity(std::string_view principal, std::string_view name) {
  GssIdentity id;
  id.principal = std::string(principal);
  const std::string user(name);
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd pw{};
  passwd* found = nullptr;
  while (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == ERANGE &&
         buf.size() < (1u << 20)) {
    buf.resize(buf.size() * 2);
  }
  if (found == nullptr) return id;
  id.mapped = true;
  id.uid = pw.pw_uid;
  id.gid = pw.pw_gid;
  std::vector<gid_t> groups(32);
  int n = static_cast<int>(groups.size());
  while (getgrouplist(user.c_str(), pw.pw_gid, groups.data(), &n) < 0 &&
         static_cast<size_t>(n) > groups.size()) {
    groups.resize(static_cast<size_t>(n));
  }
  if (n > static_cast<int>(groups.size())) n = static_cast<int>(groups.size());
  id.gids.assign(groups.begin(), groups.begin() + (n > 0 ? n : 0));
  return id;
}

GssIdentity MapInitiator(gss_name_t initiator) {
  OM_uint32 minor = 0;
  gss_buffer_desc shown = GSS_C_EMPTY_BUFFER;
  std::string principal;
  if (!GSS_ERROR(gss_display_name(&minor, initiator, &shown, nullptr))) {
    principal = BufferString(shown);
    gss_release_buffer(&minor, &shown);
  }
  gss_buffer_desc local = GSS_C_EMPTY_BUFFER;
  if (GSS_ERROR(gss_localname(&minor, initiator, GSS_C_NO_OID, &local))) {
    GssIdentity id;
    id.principal = principal;
    return id;
  }
  const std::string name = BufferString(local);
  gss_release_buffer(&minor, &local);
  return LocalUserIdentity(principal, name);
}

}  // namespace nfs3d::rpc::gss
