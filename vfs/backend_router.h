// A Backend that serves each export from the backend it names: the daemon
// serves local directories (PosixBackend) and CephFS directories
// (CephfsBackend) side by side through this one object. Handles go to the
// backend whose handle type they carry (the backend then authenticates
// them); RootHandle goes by export id. Operations on two handles of
// different backends (RENAME, LINK) fail with EXDEV.
#ifndef NFS3D_VFS_BACKEND_ROUTER_H_
#define NFS3D_VFS_BACKEND_ROUTER_H_

#include <cstdint>
#include <map>

#include "vfs/backend.h"

namespace nfs3d::vfs {

class BackendRouter : public Backend {
 public:
  // Handles of every type not added with AddHandleType go to `fallback`.
  explicit BackendRouter(Backend* fallback) : fallback_(fallback) {}

  // Handles of this type belong to `backend`.
  void AddHandleType(int32_t handle_type, Backend* backend) { by_type_[handle_type] = backend; }
  // RootHandle(export_id) asks `backend` (default: the fallback).
  void AddExport(uint32_t export_id, Backend* backend) { by_export_[export_id] = backend; }

  absl::StatusOr<FileHandle> RootHandle(uint32_t export_id) override;
  absl::Status RefreshExport(uint32_t export_id) override;
  absl::StatusOr<uint32_t> ExportOf(const FileHandle& fh) override;
  absl::StatusOr<std::optional<Quota>> GetQuota(uint32_t export_id, QuotaKind kind,
                                                uint32_t id) override;
  absl::StatusOr<Attributes> GetAttr(const Cred& cred, const FileHandle& fh) override;
  absl::Status SetAttr(const Cred& cred, const FileHandle& fh, const SetAttributes& attrs,
                       std::optional<Time> guard_ctime, Wcc* wcc) override;
  absl::StatusOr<LookupResult> Lookup(const Cred& cred, const FileHandle& dir,
                                      std::string_view name,
                                      std::optional<Attributes>* dir_attributes) override;
  std::vector<absl::StatusOr<LookupResult>> LookupEach(
      const Cred& cred, const FileHandle& dir, absl::Span<const std::string_view> names) override;
  absl::StatusOr<AccessResult> Access(const Cred& cred, const FileHandle& fh, uint32_t requested,
                                      std::optional<Attributes>* attributes) override;
  absl::StatusOr<std::string> Readlink(const Cred& cred, const FileHandle& fh,
                                       std::optional<Attributes>* attributes) override;
  absl::StatusOr<ReadResult> Read(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, uint8_t* buf) override;
  absl::StatusOr<FileSlice> ReadSlice(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                      uint32_t count) override;
  absl::StatusOr<WriteResult> Write(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                    absl::Span<const uint8_t> data, StableHow stable,
                                    Wcc* wcc) override;
  absl::StatusOr<WriteResult> WriteSpliced(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                           absl::Span<const uint8_t> data, const PipedBytes& piped,
                                           StableHow stable, Wcc* wcc) override;
  absl::StatusOr<CreateResult> Create(const Cred& cred, const FileHandle& dir,
                                      std::string_view name, CreateMode mode,
                                      const SetAttributes& attrs, const Verifier& verifier,
                                      Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Mkdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                                     const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Symlink(const Cred& cred, const FileHandle& dir,
                                       std::string_view name, std::string_view target,
                                       const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Mknod(const Cred& cred, const FileHandle& dir, std::string_view name,
                                     FileType type, uint32_t major, uint32_t minor,
                                     const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::Status Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                      Wcc* dir_wcc) override;
  absl::Status Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                     Wcc* dir_wcc) override;
  absl::Status Rename(const Cred& cred, const FileHandle& from_dir, std::string_view from_name,
                      const FileHandle& to_dir, std::string_view to_name, Wcc* from_wcc,
                      Wcc* to_wcc) override;
  absl::Status Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                    std::string_view name, std::optional<Attributes>* file_attributes,
                    Wcc* dir_wcc) override;
  absl::Status ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie, Verifier* verifier,
                       const std::function<bool(const DirEntry&)>& emit, bool* eof,
                       std::optional<Attributes>* dir_attributes) override;
  absl::StatusOr<FsStat> StatFs(const Cred& cred, const FileHandle& fh,
                                std::optional<Attributes>* attributes) override;
  absl::StatusOr<PathConf> GetPathConf(const Cred& cred, const FileHandle& fh,
                                       std::optional<Attributes>* attributes) override;
  absl::StatusOr<Verifier> Commit(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, Wcc* wcc) override;
  // The fallback's: a client sees one verifier per server instance. (Each
  // backend checks its own in WRITE/COMMIT replies.)
  Verifier WriteVerifier() const override { return fallback_->WriteVerifier(); }
  absl::StatusOr<int> OpenForLocking(const FileHandle& fh) override;
  absl::StatusOr<AclPair> GetAcl(const Cred& cred, const FileHandle& fh,
                                 std::optional<Attributes>* attributes) override;
  absl::Status SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                      const Acl* default_acl, std::optional<Attributes>* attributes) override;

 private:
  Backend* For(const FileHandle& fh) const;
  Backend* ForExport(uint32_t export_id) const;

  Backend* const fallback_;
  std::map<int32_t, Backend*> by_type_;
  std::map<uint32_t, Backend*> by_export_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_BACKEND_ROUTER_H_
