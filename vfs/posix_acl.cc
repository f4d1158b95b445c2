#include "vfs/posix_acl.h"

#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

constexpr uint32_t kXattrVersion = 2;
constexpr size_t kHeaderSize = 4;
constexpr size_t kEntrySize = 8;  // u16 tag, u16 perm, u32 id

void PutLe(std::string* out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t GetLe(std::string_view in, size_t pos, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= uint32_t{static_cast<uint8_t>(in[pos + static_cast<size_t>(i)])} << (8 * i);
  }
  return v;
}

bool IsNamed(uint32_t tag) { return tag == kAclUser || tag == kAclGroup; }

}  // namespace

Acl AclFromMode(uint32_t mode) {
  return {{kAclUserObj, kAclUndefinedId, (mode >> 6) & 7},
          {kAclGroupObj, kAclUndefinedId, (mode >> 3) & 7},
          {kAclOther, kAclUndefinedId, mode & 7}};
}

void CanonicalizeAcl(Acl* acl) {
  for (AclEntry& e : *acl) {
    if (!IsNamed(e.tag)) e.id = kAclUndefinedId;
  }
  std::sort(acl->begin(), acl->end(), [](const AclEntry& a, const AclEntry& b) {
    return a.tag != b.tag ? a.tag < b.tag : a.id < b.id;
  });
}

bool AccessAclUnchanged(const Acl& stored, uint32_t mode, const Acl& wanted) {
  if (wanted.empty()) return stored.empty();
  return wanted == (stored.empty() ? AclFromMode(mode) : stored);
}

std::string EncodeAclXattr(const Acl& acl) {
  std::string out;
  out.reserve(kHeaderSize + kEntrySize * acl.size());
  PutLe(&out, kXattrVersion, 4);
  for (const AclEntry& e : acl) {
    PutLe(&out, e.tag, 2);
    PutLe(&out, e.perm, 2);
    PutLe(&out, IsNamed(e.tag) ? e.id : kAclUndefinedId, 4);
  }
  return out;
}

std::optional<Acl> DecodeAclXattr(std::string_view value) {
  if (value.size() < kHeaderSize || (value.size() - kHeaderSize) % kEntrySize != 0 ||
      GetLe(value, 0, 4) != kXattrVersion) {
    return std::nullopt;
  }
  Acl acl;
  for (size_t pos = kHeaderSize; pos < value.size(); pos += kEntrySize) {
    acl.push_back({GetLe(value, pos, 2), GetLe(value, pos + 4, 4), GetLe(value, pos + 2, 2)});
  }
  return acl;
}

absl::StatusOr<Acl> ReadAclXattr(const std::string& path, const char* name) {
  std::string value(kHeaderSize + 32 * kEntrySize, '\0');
  for (;;) {
    ssize_t n = getxattr(path.c_str(), name, value.data(), value.size());
    if (n >= 0) {
      value.resize(static_cast<size_t>(n));
      break;
    }
    if (errno == ENODATA || errno == EOPNOTSUPP) return Acl{};
    if (errno != ERANGE) return ErrnoError(errno, name);
    n = getxattr(path.c_str(), name, nullptr, 0);  // grew meanwhile: ask its size
    if (n < 0) return ErrnoError(errno, name);
    value.resize(static_cast<size_t>(n) + kEntrySize);
  }
  std::optional<Acl> acl = DecodeAclXattr(value);
  if (!acl) return ErrnoError(EIO, std::string("malformed ") + name);
  return *acl;
}

absl::Status WriteAclXattr(const std::string& path, const char* name, const Acl& acl) {
  if (acl.empty()) {
    if (removexattr(path.c_str(), name) != 0 && errno != ENODATA) {
      return ErrnoError(errno, name);
    }
    return absl::OkStatus();
  }
  const std::string value = EncodeAclXattr(acl);
  if (setxattr(path.c_str(), name, value.data(), value.size(), 0) != 0) {
    return ErrnoError(errno, name);
  }
  return absl::OkStatus();
}

}  // namespace nfs3d::vfs
