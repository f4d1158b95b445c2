// Local user accounts from the server's name service (NSS: /etc/passwd,
// LDAP, ...): the uid, primary gid and every group of a user, as login and
// knfsd's rpc.mountd see them. Lookups may block on a remote directory;
// callers cache them.
#ifndef NFS3D_COMMON_UNIX_ACCOUNTS_H_
#define NFS3D_COMMON_UNIX_ACCOUNTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfs3d {

struct UnixAccount {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;              // primary group
  std::vector<uint32_t> groups;  // getgrouplist: the primary group and every other
};

// nullopt when the name service knows no such user.
std::optional<UnixAccount> AccountByName(std::string_view name);
std::optional<UnixAccount> AccountByUid(uint32_t uid);

}  // namespace nfs3d

#endif  // NFS3D_COMMON_UNIX_ACCOUNTS_H_
