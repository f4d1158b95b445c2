// RPC authentication flavors (RFC 5531 §8.2, RFC 2203) and the pseudo-flavors
// of RPCSEC_GSS with Kerberos 5 (RFC 2623 §2.1): what a call's credential
// carries, what MNT lists and what an export's sec= names. The one mapping
// between their names and numbers.
#ifndef NFS3D_COMMON_AUTH_FLAVOR_H_
#define NFS3D_COMMON_AUTH_FLAVOR_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace nfs3d {

// A flavor number as on the wire. Unscoped, so that it compares with the
// uint32_t fields that carry flavors from the wire.
enum Flavor : uint32_t {
  kAuthNone = 0,
  kAuthSys = 1,
  kRpcsecGss = 6,
  kAuthTls = 7,     // RFC 9289: only in the NULL call that probes for RPC-with-TLS
  kKrb5 = 390003,   // RPCSEC_GSS with Kerberos 5: authentication
  kKrb5i = 390004,  // and integrity
  kKrb5p = 390005,  // and privacy
};

// A Kerberos pseudo-flavor (what a credential holds for an RPCSEC_GSS call).
constexpr bool IsKerberos(uint32_t flavor) { return flavor >= kKrb5 && flavor <= kKrb5p; }

// The sec= name of a flavor ("sys", "none", "krb5", "krb5i", "krb5p"); ""
// for a flavor that has none (RPCSEC_GSS itself, unknown numbers).
constexpr std::string_view FlavorName(uint32_t flavor) {
  switch (flavor) {
    case kAuthNone:
      return "none";
    case kAuthSys:
      return "sys";
    case kKrb5:
      return "krb5";
    case kKrb5i:
      return "krb5i";
    case kKrb5p:
      return "krb5p";
    default:
      return "";
  }
}

// The flavor a sec= name (lower case) stands for, with nfs-utils' aliases
// "unix" (sys) and "null" (none).
constexpr std::optional<Flavor> FlavorNamed(std::string_view name) {
  if (name == "unix") return kAuthSys;
  if (name == "null") return kAuthNone;
  for (Flavor f : {kAuthSys, kAuthNone, kKrb5, kKrb5i, kKrb5p}) {
    if (FlavorName(f) == name) return f;
  }
  return std::nullopt;
}

}  // namespace nfs3d

#endif  // NFS3D_COMMON_AUTH_FLAVOR_H_
