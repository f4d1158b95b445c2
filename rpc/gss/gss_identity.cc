#include "rpc/gss/gss_identity.h"

#include <gssapi/gssapi_ext.h>

#include <optional>
#include <string>

#include "common/unix_accounts.h"

namespace nfs3d::rpc::gss {
namespace {

std::string BufferString(const gss_buffer_desc& b) {
  return std::string(static_cast<const char*>(b.value), b.length);
}

}  // namespace

GssIdentity LocalUserIdentity(std::string_view principal, std::string_view name) {
  GssIdentity id;
  id.principal = std::string(principal);
  std::optional<UnixAccount> account = AccountByName(name);
  if (!account) return id;
  id.mapped = true;
  id.uid = account->uid;
  id.gid = account->gid;
  id.gids = std::move(account->groups);
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
