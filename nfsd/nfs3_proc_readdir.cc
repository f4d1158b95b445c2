// READDIR, READDIRPLUS (RFC 1813 §3.3.16, §3.3.17).
//
// Sizes are counted in encoded XDR bytes, exactly as the client's count /
// maxcount mean them: the reply never exceeds them. The directory's own
// attributes arrive only with the listing, so their room is always reserved.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "nfsd/nfs3_attr.h"
#include "nfsd/nfs3_errors.h"
#include "nfsd/nfs3_procs.h"
#include "xdr/nfs3_codec.h"

namespace nfs3d::nfsd::proc {
namespace {

const size_t kOverhead = n3::ReaddirReplyOverhead(n3::fattr3{});

vfs::Verifier ToVerifier(const uint8_t (&v)[n3::kCookieVerfSize]) {
  vfs::Verifier out;
  std::copy(std::begin(v), std::end(v), out.begin());
  return out;
}

// The listing both procedures share: reads the directory through emit (which
// fills res->entries within the budget), then sets the directory attributes,
// cookie verifier and eof. False, with res->status set and no entries, on an
// error or when not even one entry fits.
template <typename Args, typename Res, typename Emit>
bool ListDirectory(NfsServer& s, const CallAuth& auth, const Args& args, Emit& emit, Res* res) {
  vfs::Verifier verf = ToVerifier(args.cookieverf);
  bool eof = false;
  std::optional<vfs::Attributes> dir_attrs;
  absl::Status st =
      s.backend().ReadDir(auth.cred, auth.handle, args.cookie, &verf, emit, &eof, &dir_attrs);
  res->dir_attributes = ToPostOpAttr(dir_attrs);
  if (!st.ok() || (res->entries.empty() && !eof)) {
    res->status = st.ok() ? n3::NFS3ERR_TOOSMALL : StatusToNfsStat(st);
    res->entries.clear();
    return false;
  }
  std::memcpy(res->cookieverf, verf.data(), sizeof(res->cookieverf));
  res->eof = eof;
  return true;
}

}  // namespace

void Readdir(NfsServer& s, const CallContext& ctx, const n3::READDIR3args& args,
             n3::READDIR3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.dir, &auth)) != n3::NFS3_OK) return;
  const size_t count = std::min(args.count, s.SizesFor(ctx).rsize_max);
  size_t used = kOverhead;
  auto emit = [&](const vfs::DirEntry& e) {
    n3::entry3 entry{e.fileid, std::string(e.name), e.cookie};
    const size_t size = n3::EncodedSize(entry);
    if (used + size > count) return false;
    used += size;
    res->entries.push_back(std::move(entry));
    return true;
  };
  ListDirectory(s, auth, args, emit, res);
}

void Readdirplus(NfsServer& s, const CallContext& ctx, const n3::READDIRPLUS3args& args,
                 n3::READDIRPLUS3res* res) {
  CallAuth auth;
  if ((res->status = s.Authorize(ctx, args.dir, &auth)) != n3::NFS3_OK) return;
  if (!auth.readdirplus) {  // `nordirplus`: the client falls back to READDIR
    res->status = n3::NFS3ERR_NOTSUPP;
    return;
  }
  const size_t maxcount = std::min(args.maxcount, s.SizesFor(ctx).rsize_max);
  // Entries are sized with the largest attributes and handle they can get:
  // the lookups happen after the listing, so the budget must hold whatever
  // they return.
  n3::entryplus3 probe;
  probe.name_attributes = n3::fattr3{};
  probe.name_handle = n3::nfs_fh3{};
  probe.name_handle->len = n3::kFhSize;
  size_t used = kOverhead;
  size_t dir_used = 0;
  auto emit = [&](const vfs::DirEntry& e) {
    probe.name.assign(e.name);
    const size_t size = n3::EncodedSize(probe);
    const size_t dir_size = n3::DircountSize(probe);
    if (used + size > maxcount) return false;
    // dircount bounds the directory part (fileid, name, cookie). It never
    // refuses the first entry: some clients send a tiny dircount, and maxcount
    // alone decides TOOSMALL.
    if (!res->entries.empty() && dir_used + dir_size > args.dircount) return false;
    used += size;
    dir_used += dir_size;
    n3::entryplus3& entry = res->entries.emplace_back();
    entry.fileid = e.fileid;
    entry.name = probe.name;
    entry.cookie = e.cookie;
    return true;
  };
  if (!ListDirectory(s, auth, args, emit, res)) return;
  // Handles and attributes per entry; one that vanished meanwhile is sent
  // without them (both are optional on the wire).
  std::vector<std::string_view> names;
  names.reserve(res->entries.size());
  for (const n3::entryplus3& entry : res->entries) names.push_back(entry.name);
  std::vector<absl::StatusOr<vfs::LookupResult>> found =
      s.backend().LookupEach(auth.cred, auth.handle, names);
  for (size_t i = 0; i < res->entries.size() && i < found.size(); ++i) {
    if (!found[i].ok()) continue;
    res->entries[i].name_attributes = ToFattr3(found[i]->attributes);
    res->entries[i].name_handle = ToNfsHandle(found[i]->handle);
  }
}

}  // namespace nfs3d::nfsd::proc
