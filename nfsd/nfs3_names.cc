#include "nfsd/nfs3_names.h"

namespace nfs3d::nfsd {

nfs3::nfsstat3 CheckName(std::string_view name, NameUse use) {
  if (name.empty() || name.find_first_of(std::string_view("/\0", 2)) != std::string_view::npos) {
    return nfs3::NFS3ERR_ACCES;
  }
  if (name.size() > nfs3::kMaxNameLen) return nfs3::NFS3ERR_NAMETOOLONG;
  const bool dot = name == ".";
  if (!dot && name != "..") return nfs3::NFS3_OK;
  switch (use) {
    case NameUse::kLookup:
      return nfs3::NFS3_OK;
    case NameUse::kCreate:
      return nfs3::NFS3ERR_EXIST;
    case NameUse::kRemove:
      return nfs3::NFS3ERR_ACCES;
    case NameUse::kRmdir:
      return dot ? nfs3::NFS3ERR_INVAL : nfs3::NFS3ERR_NOTEMPTY;
    case NameUse::kRename:
      return nfs3::NFS3ERR_INVAL;
  }
  return nfs3::NFS3ERR_INVAL;
}

}  // namespace nfs3d::nfsd
