// READ, WRITE, COMMIT (RFC 1813 §3.3.6, §3.3.7, §3.3.21).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "nfsd/nfs3_procs.h"
#include "vfs/backend_helpers.h"
#include "xdr/buffer_pool.h"
#include "xdr/nfs3_codec.h"

namespace nfs3d::nfsd::proc {

namespace {
// READs at least this big go out as file segments where the transport can; for
// smaller ones a pread into the reply costs less than the extra syscall.
constexpr uint32_t kSendfileMinBytes = 16 << 10;

void EncodeReadOk(xdr::Encoder& out, const std::optional<vfs::Attributes>& attributes,
                  uint32_t count, bool eof) {
  n3::READ3resok_head head;
  head.file_attributes = ToPostOpAttr(attributes);
  head.count = count;
  head.eof = eof;
  out.U32(n3::NFS3_OK);
  n3::EncodeReadHead(out, head);
  out.U32(count);
}

void PadOpaque(xdr::Encoder& out, uint32_t count) {
  static constexpr uint8_t kPad[4] = {};
  if (count % 4) out.chain()->Append(kPad, 4 - count % 4);
}
}  // namespace

// READ builds its reply by hand so file data is copied at most once. The
// reply is status, post_op_attr, count, eof, then the data opaque, and the
// head is known only once the file has been looked at. Over TCP and UDP
// (`[tcp] sendfile`, `[udp] sendfile`, on by default) the data is a file
// segment that the transport splices into the socket (no copy in user space;
// a UDP reply, at most 60 KiB of data, still fits one datagram). Otherwise
// (krb5i and krb5p calls, sendfile off) it is read into a pooled buffer of
// its own and attached to the reply chain by reference after the head: one
// pread into memory that goes to sendmsg as is.
rpc::ProcResult Read(void* service, const CallContext& ctx, xdr::Decoder& in, xdr::Encoder& out) {
  n3::READ3args args;
  if (!xdr::Decode(in, &args) || !in.ok()) return rpc::ProcResult::kGarbageArgs;
  NfsServer& s = *static_cast<NfsServer*>(service);
  CallAuth auth;
  n3::nfsstat3 status = s.Authorize(ctx, args.file, &auth);
  if (status != n3::NFS3_OK) {
    n3::EncodeReadFail(out, status, std::nullopt);
    return rpc::ProcResult::kSuccess;
  }
  // The server may return less than asked (§3.3.6); never more than rtmax.
  const uint32_t count = std::min(args.count, s.SizesFor(ctx).rsize_max);
  if (count >= kSendfileMinBytes && ctx.transport != nullptr && ctx.transport->file_segments) {
    absl::StatusOr<vfs::FileSlice> slice =
        s.backend().ReadSlice(auth.cred, auth.handle, args.offset, count);
    if (slice.ok()) {
      EncodeReadOk(out, slice->attributes, slice->count, slice->eof);
      const int fd = slice->fd;
      out.chain()->AppendFile(std::move(slice->owner), fd, args.offset, slice->count);
      PadOpaque(out, slice->count);
      return rpc::ProcResult::kSuccess;
    }
    if (!absl::IsUnimplemented(slice.status())) {
      n3::EncodeReadFail(out, StatusToNfsStat(slice.status()), std::nullopt);
      return rpc::ProcResult::kSuccess;
    }
  }
  // A pooled block: a fresh 1 MiB allocation per READ meant mmap, page
  // faults and munmap every call.
  std::shared_ptr<uint8_t[]> data = xdr::BlockPool::ForRead(std::max(count, 1u));
  absl::StatusOr<vfs::ReadResult> r =
      s.backend().Read(auth.cred, auth.handle, args.offset, count, data.get());
  if (!r.ok()) {
    n3::EncodeReadFail(out, StatusToNfsStat(r.status()), std::nullopt);
    return rpc::ProcResult::kSuccess;
  }
  const uint32_t got = std::min(r->count, count);
  // eof: the read reached the end of the file, as the backend saw it or as
  // the post-op size says (without one, only "nothing read" tells).
  const uint64_t size_after = r->attributes ? r->attributes->size : UINT64_MAX;
  EncodeReadOk(out, r->attributes, got,
               r->eof || vfs::ReadReachedEnd(args.offset, count, got, size_after));
  const uint8_t* bytes = data.get();
  out.chain()->AppendExternal(std::move(data), bytes, got);
  PadOpaque(out, got);
  return rpc::ProcResult::kSuccess;
}

void Write(NfsServer& s, const CallContext& ctx, const n3::WRITE3args& args, n3::WRITE3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.file, &auth)) != n3::NFS3_OK) return;
  // count promising more bytes than were sent is a broken request.
  if (args.data.size() < args.count || args.stable > n3::FILE_SYNC) {
    res->status = n3::NFS3ERR_INVAL;
    return;
  }
  // Over wtmax: write what is allowed and say so in count; the client sends
  // the rest (§3.3.7 lets the server write less).
  const uint32_t count = std::min(args.count, s.SizesFor(ctx).wsize_max);
  const absl::Span<const uint8_t> data = args.data.first(count);
  const auto stable = static_cast<vfs::StableHow>(args.stable);
  vfs::Wcc wcc;
  absl::StatusOr<vfs::WriteResult> r;
  const rpc::SplicedData* spliced = ctx.transport != nullptr ? ctx.transport->spliced : nullptr;
  if (spliced == nullptr) {
    r = s.backend().Write(auth.cred, auth.handle, args.offset, data, stable, &wcc);
  } else {
    // Part of the data is still in a pipe (rpc/write_splice.h); the
    // transport splices only inside a WRITE's data.
    const size_t at = static_cast<size_t>(spliced->hole - args.data.data());
    if (spliced->hole < args.data.data() || at + spliced->size > args.data.size()) {
      res->status = n3::NFS3ERR_SERVERFAULT;
      return;
    }
    vfs::PipedBytes piped;
    piped.offset = at;
    piped.size = at < count ? std::min<size_t>(spliced->size, count - at) : 0;
    piped.pipe_fd = spliced->pipe_fd;
    piped.memory = spliced->hole;
    r = s.backend().WriteSpliced(auth.cred, auth.handle, args.offset, data, piped, stable, &wcc);
  }
  res->file_wcc = ToWccData(wcc);
  if (!r.ok()) {
    res->status = StatusToNfsStat(r.status());
    return;
  }
  res->count = r->count;
  res->committed = static_cast<n3::stable_how>(r->committed);
  std::memcpy(res->verf, r->verifier.data(), sizeof(res->verf));
}

void Commit(NfsServer& s, const CallContext& ctx, const n3::COMMIT3args& args,
            n3::COMMIT3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.file, &auth)) != n3::NFS3_OK) return;
  vfs::Wcc wcc;
  absl::StatusOr<vfs::Verifier> verf =
      s.backend().Commit(auth.cred, auth.handle, args.offset, args.count, &wcc);
  res->file_wcc = ToWccData(wcc);
  if (!verf.ok()) {
    // A failed sync is reported, never swallowed: the client must not drop
    // its copy of the data.
    res->status = StatusToNfsStat(verf.status());
    return;
  }
  std::memcpy(res->verf, verf->data(), sizeof(res->verf));
}

}  // namespace nfs3d::nfsd::proc
