#include "vfs/backend_router.h"

#include <cerrno>

#include "vfs/file_handle_codec.h"

namespace nfs3d::vfs {

Backend* BackendRouter::For(const FileHandle& fh) const {
  std::optional<int32_t> type = PeekHandleType(fh);
  if (type) {
    auto it = by_type_.find(*type);
    if (it != by_type_.end()) return it->second;
  }
  return fallback_;  // which also rejects malformed handles
}

Backend* BackendRouter::ForExport(uint32_t export_id) const {
  auto it = by_export_.find(export_id);
  return it == by_export_.end() ? fallback_ : it->second;
}

absl::StatusOr<FileHandle> BackendRouter::RootHandle(uint32_t export_id) {
  return ForExport(export_id)->RootHandle(export_id);
}
absl::Status BackendRouter::RefreshExport(uint32_t export_id) {
  return ForExport(export_id)->RefreshExport(export_id);
}
absl::StatusOr<uint32_t> BackendRouter::ExportOf(const FileHandle& fh) {
  return For(fh)->ExportOf(fh);
}
absl::StatusOr<std::optional<Quota>> BackendRouter::GetQuota(uint32_t export_id, QuotaKind kind,
                                                             uint32_t id) {
  return ForExport(export_id)->GetQuota(export_id, kind, id);
}
absl::StatusOr<Attributes> BackendRouter::GetAttr(const Cred& cred, const FileHandle& fh) {
  return For(fh)->GetAttr(cred, fh);
}
absl::Status BackendRouter::SetAttr(const Cred& cred, const FileHandle& fh,
                                    const SetAttributes& attrs, std::optional<Time> guard_ctime,
                                    Wcc* wcc) {
  return For(fh)->SetAttr(cred, fh, attrs, guard_ctime, wcc);
}
absl::StatusOr<LookupResult> BackendRouter::Lookup(const Cred& cred, const FileHandle& dir,
                                                   std::string_view name,
                                                   std::optional<Attributes>* dir_attributes) {
  return For(dir)->Lookup(cred, dir, name, dir_attributes);
}
std::vector<absl::StatusOr<LookupResult>> BackendRouter::LookupEach(
    const Cred& cred, const FileHandle& dir, absl::Span<const std::string_view> names) {
  return For(dir)->LookupEach(cred, dir, names);
}
absl::StatusOr<AccessResult> BackendRouter::Access(const Cred& cred, const FileHandle& fh,
                                                   uint32_t requested,
                                                   std::optional<Attributes>* attributes) {
  return For(fh)->Access(cred, fh, requested, attributes);
}
absl::StatusOr<std::string> BackendRouter::Readlink(const Cred& cred, const FileHandle& fh,
                                                    std::optional<Attributes>* attributes) {
  return For(fh)->Readlink(cred, fh, attributes);
}
absl::StatusOr<ReadResult> BackendRouter::Read(const Cred& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count, uint8_t* buf) {
  return For(fh)->Read(cred, fh, offset, count, buf);
}
absl::StatusOr<FileSlice> BackendRouter::ReadSlice(const Cred& cred, const FileHandle& fh,
                                                   uint64_t offset, uint32_t count) {
  return For(fh)->ReadSlice(cred, fh, offset, count);
}
absl::StatusOr<WriteResult> BackendRouter::Write(const Cred& cred, const FileHandle& fh,
                                                 uint64_t offset, absl::Span<const uint8_t> data,
                                                 StableHow stable, Wcc* wcc) {
  return For(fh)->Write(cred, fh, offset, data, stable, wcc);
}
absl::StatusOr<WriteResult> BackendRouter::WriteSpliced(const Cred& cred, const FileHandle& fh,
                                                        uint64_t offset,
                                                        absl::Span<const uint8_t> data,
                                                        const PipedBytes& piped, StableHow stable,
                                                        Wcc* wcc) {
  return For(fh)->WriteSpliced(cred, fh, offset, data, piped, stable, wcc);
}
absl::StatusOr<CreateResult> BackendRouter::Create(const Cred& cred, const FileHandle& dir,
                                                   std::string_view name, CreateMode mode,
                                                   const SetAttributes& attrs,
                                                   const Verifier& verifier, Wcc* dir_wcc) {
  return For(dir)->Create(cred, dir, name, mode, attrs, verifier, dir_wcc);
}
absl::StatusOr<CreateResult> BackendRouter::Mkdir(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name, const SetAttributes& attrs,
                                                  Wcc* dir_wcc) {
  return For(dir)->Mkdir(cred, dir, name, attrs, dir_wcc);
}
absl::StatusOr<CreateResult> BackendRouter::Symlink(const Cred& cred, const FileHandle& dir,
                                                    std::string_view name, std::string_view target,
                                                    const SetAttributes& attrs, Wcc* dir_wcc) {
  return For(dir)->Symlink(cred, dir, name, target, attrs, dir_wcc);
}
absl::StatusOr<CreateResult> BackendRouter::Mknod(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name, FileType type,
                                                  uint32_t major, uint32_t minor,
                                                  const SetAttributes& attrs, Wcc* dir_wcc) {
  return For(dir)->Mknod(cred, dir, name, type, major, minor, attrs, dir_wcc);
}
absl::Status BackendRouter::Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                                   Wcc* dir_wcc) {
  return For(dir)->Remove(cred, dir, name, dir_wcc);
}
absl::Status BackendRouter::Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                                  Wcc* dir_wcc) {
  return For(dir)->Rmdir(cred, dir, name, dir_wcc);
}
absl::Status BackendRouter::Rename(const Cred& cred, const FileHandle& from_dir,
                                   std::string_view from_name, const FileHandle& to_dir,
                                   std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  Backend* backend = For(from_dir);
  if (For(to_dir) != backend) return ErrnoError(EXDEV, "rename between backends");
  return backend->Rename(cred, from_dir, from_name, to_dir, to_name, from_wcc, to_wcc);
}
absl::Status BackendRouter::Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                                 std::string_view name, std::optional<Attributes>* file_attributes,
                                 Wcc* dir_wcc) {
  Backend* backend = For(fh);
  if (For(dir) != backend) return ErrnoError(EXDEV, "link between backends");
  return backend->Link(cred, fh, dir, name, file_attributes, dir_wcc);
}
absl::Status BackendRouter::ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie,
                                    Verifier* verifier,
                                    const std::function<bool(const DirEntry&)>& emit, bool* eof,
                                    std::optional<Attributes>* dir_attributes) {
  return For(dir)->ReadDir(cred, dir, cookie, verifier, emit, eof, dir_attributes);
}
absl::StatusOr<FsStat> BackendRouter::StatFs(const Cred& cred, const FileHandle& fh,
                                             std::optional<Attributes>* attributes) {
  return For(fh)->StatFs(cred, fh, attributes);
}
absl::StatusOr<PathConf> BackendRouter::GetPathConf(const Cred& cred, const FileHandle& fh,
                                                    std::optional<Attributes>* attributes) {
  return For(fh)->GetPathConf(cred, fh, attributes);
}
absl::StatusOr<Verifier> BackendRouter::Commit(const Cred& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count, Wcc* wcc) {
  return For(fh)->Commit(cred, fh, offset, count, wcc);
}
absl::StatusOr<int> BackendRouter::OpenForLocking(const FileHandle& fh) {
  return For(fh)->OpenForLocking(fh);
}
absl::StatusOr<AclPair> BackendRouter::GetAcl(const Cred& cred, const FileHandle& fh,
                                              std::optional<Attributes>* attributes) {
  return For(fh)->GetAcl(cred, fh, attributes);
}
absl::Status BackendRouter::SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                                   const Acl* default_acl, std::optional<Attributes>* attributes) {
  return For(fh)->SetAcl(cred, fh, access, default_acl, attributes);
}

}  // namespace nfs3d::vfs
