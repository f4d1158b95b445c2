#include "common/unix_accounts.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>

namespace nfs3d {
namespace {

// getpwnam_r / getpwuid_r with a buffer that grows until the entry fits.
template <typename Fn>
std::optional<UnixAccount> LookUp(Fn get) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd pw{};
  passwd* found = nullptr;
  while (get(&pw, buf.data(), buf.size(), &found) == ERANGE && buf.size() < (1u << 20)) {
    buf.resize(buf.size() * 2);
  }
  if (found == nullptr) return std::nullopt;
  UnixAccount account;
  account.name = pw.pw_name;
  account.uid = pw.pw_uid;
  account.gid = pw.pw_gid;
  std::vector<gid_t> groups(64);
  int n = static_cast<int>(groups.size());
  // getgrouplist says how many there are when the array is too small.
  while (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0 &&
         static_cast<size_t>(n) > groups.size()) {
    groups.resize(static_cast<size_t>(n));
  }
  n = std::min(n, static_cast<int>(groups.size()));
  account.groups.assign(groups.begin(), groups.begin() + std::max(n, 0));
  return account;
}

}  // namespace

std::optional<UnixAccount> AccountByName(std::string_view name) {
  const std::string user(name);
  return LookUp([&](passwd* pw, char* buf, size_t len, passwd** found) {
    return getpwnam_r(user.c_str(), pw, buf, len, found);
  });
}

std::optional<UnixAccount> AccountByUid(uint32_t uid) {
  return LookUp([&](passwd* pw, char* buf, size_t len, passwd** found) {
    return getpwuid_r(static_cast<uid_t>(uid), pw, buf, len, found);
  });
}

}  // namespace nfs3d
