// libFuzzer target for every NFSv3 and MOUNT argument decoder. The first byte
// picks the procedure, the rest is the argument body. Decoders must never
// read outside the input (ASan) nor hit UB (UBSan); on success every returned
// span is touched so a bad borrow shows up as an ASan report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "xdr/mount3_codec.h"
#include "xdr/nfs3_codec.h"

namespace nfs3d {
namespace {

using xdr::Decoder;

volatile uint8_t g_sink;

void Touch(absl::Span<const uint8_t> s) {
  uint8_t x = 0;
  for (uint8_t b : s) x ^= b;
  g_sink = x;
}
void Touch(std::string_view s) {
  Touch(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}
void Touch(const nfs3::nfs_fh3& fh) {
  if (fh.len > nfs3::kFhSize) std::abort();
  Touch(fh.bytes());
}
void Touch(const nfs3::diropargs3& a) {
  Touch(a.dir);
  Touch(a.name);
}

// Decodes Args from d; on success checks invariants with `check`.
template <typename Args, typename Check>
void Run(Decoder& d, Check check) {
  Args args{};
  const size_t size = d.remaining();
  const bool ok = Decode(d, &args) && d.ok();
  if (d.position() > size) std::abort();  // read past the end of the body
  if (ok) check(args);
}

void Fuzz(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint8_t selector = data[0];
  Decoder d(data + 1, size - 1);
  using namespace nfs3;  // NOLINT: keeps the table below readable
  switch (selector % 28) {
    case kNull:
      Run<Void>(d, [](const Void&) {});
      break;
    case kGetattr:
      Run<GETATTR3args>(d, [](const auto& a) { Touch(a.object); });
      break;
    case kSetattr:
      Run<SETATTR3args>(d, [](const auto& a) {
        Touch(a.object);
        if (a.new_attributes.atime_how > SET_TO_CLIENT_TIME) std::abort();
        if (a.new_attributes.mtime_how > SET_TO_CLIENT_TIME) std::abort();
      });
      break;
    case kLookup:
      Run<LOOKUP3args>(d, [](const auto& a) { Touch(a.what); });
      break;
    case kAccess:
      Run<ACCESS3args>(d, [](const auto& a) { Touch(a.object); });
      break;
    case kReadlink:
      Run<READLINK3args>(d, [](const auto& a) { Touch(a.symlink); });
      break;
    case kRead:
      Run<READ3args>(d, [](const auto& a) { Touch(a.file); });
      break;
    case kWrite:
      Run<WRITE3args>(d, [](const auto& a) {
        Touch(a.file);
        Touch(a.data);
        if (a.data.size() != a.count || a.stable > FILE_SYNC) std::abort();
      });
      break;
    case kCreate:
      Run<CREATE3args>(d, [](const auto& a) {
        Touch(a.where);
        if (a.mode > EXCLUSIVE) std::abort();
      });
      break;
    case kMkdir:
      Run<MKDIR3args>(d, [](const auto& a) { Touch(a.where); });
      break;
    case kSymlink:
      Run<SYMLINK3args>(d, [](const auto& a) {
        Touch(a.where);
        Touch(a.symlink_data);
      });
      break;
    case kMknod:
      Run<MKNOD3args>(d, [](const auto& a) {
        Touch(a.where);
        if (a.type < NF3REG || a.type > NF3FIFO) std::abort();
      });
      break;
    case kRemove:
      Run<REMOVE3args>(d, [](const auto& a) { Touch(a.object); });
      break;
    case kRmdir:
      Run<RMDIR3args>(d, [](const auto& a) { Touch(a.object); });
      break;
    case kRename:
      Run<RENAME3args>(d, [](const auto& a) {
        Touch(a.from);
        Touch(a.to);
      });
      break;
    case kLink:
      Run<LINK3args>(d, [](const auto& a) {
        Touch(a.file);
        Touch(a.link);
      });
      break;
    case kReaddir:
      Run<READDIR3args>(d, [](const auto& a) { Touch(a.dir); });
      break;
    case kReaddirplus:
      Run<READDIRPLUS3args>(d, [](const auto& a) { Touch(a.dir); });
      break;
    case kFsstat:
      Run<FSSTAT3args>(d, [](const auto& a) { Touch(a.fsroot); });
      break;
    case kFsinfo:
      Run<FSINFO3args>(d, [](const auto& a) { Touch(a.fsroot); });
      break;
    case kPathconf:
      Run<PATHCONF3args>(d, [](const auto& a) { Touch(a.object); });
      break;
    case kCommit:
      Run<COMMIT3args>(d, [](const auto& a) { Touch(a.file); });
      break;
    // MOUNT: MNT and UMNT take a dirpath; NULL, DUMP, UMNTALL and EXPORT take nothing.
    case 22 + mount3::kMnt:
    case 22 + mount3::kUmnt:
      Run<mount3::DirpathArgs>(d, [](const auto& a) {
        if (a.dirpath.size() > mount3::kMntPathLen) std::abort();
        Touch(a.dirpath);
      });
      break;
    default:
      Run<Void>(d, [](const Void&) {});
      break;
  }
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::Fuzz(data, size);
  return 0;
}
