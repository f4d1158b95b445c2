#include "tools/nfs3powercut/nfs_calls.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

#include "common/auth_flavor.h"
#include "tools/nfs3powercut/journal.h"
#include "xdr/nfs3_client_codec.h"

namespace nfs3d::powercut {

namespace {

// The reply handler of a call made here and drained at once: marks it done,
// turns a transport failure into UNAVAILABLE, and hands the results to
// `decode`, which sets *result when they are not what it wants. `decode`
// must outlive the call (a named local of the caller, which drains it).
auto OnReply(bool* done, absl::Status* result,
             absl::FunctionRef<void(xdr::Decoder&, absl::Status*)> decode) {
  return [done, result, decode](const absl::Status& st, absl::Span<const uint8_t> results) {
    *done = true;
    if (!st.ok()) {
      *result = absl::UnavailableError(st.message());
      return;
    }
    xdr::Decoder d(results);
    decode(d, result);
  };
}

}  // namespace

absl::Status SendJournaled(bench::Session& s, JournalWriter& journal, uint32_t proc,
                           const std::string& args, absl::FunctionRef<bool(xdr::Decoder&)> decode) {
  bool done = false;
  absl::Status result;
  const auto bytes =
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(args.data()), args.size());
  const auto check = [&](xdr::Decoder& d, absl::Status* r) {
    if (!decode(d)) *r = absl::DataLossError("malformed results");
  };
  const uint32_t xid = s.rpc().Start(
      nfs3::kProgram, nfs3::kVersion, proc, [&](xdr::Encoder& e) { e.FixedOpaque(bytes); },
      OnReply(&done, &result, check));
  if (absl::Status st = journal.Append({"sent", absl::StrCat(xid), absl::StrCat(proc), Hex(bytes)});
      !st.ok()) {
    return st;
  }
  absl::Status drained = s.rpc().Drain(absl::Now() + s.options().timeout);
  if (!done) return absl::UnavailableError(drained.message());
  return result;
}

absl::StatusOr<client::RpcReply> Resend(const bench::Session& s, uint32_t xid, uint32_t proc,
                                        const std::string& args_hex) {
  std::vector<uint8_t> args;
  if (!FromHex(args_hex, &args)) return absl::DataLossError("bad arguments in a sent line");
  client::RpcClientOptions o;
  o.transport = s.options().transport;
  o.timeout = s.options().timeout;
  o.cred.flavor = kAuthSys;
  o.cred.machine = "nfs3powercut";
  o.cred.uid = s.options().uid;
  o.cred.gid = s.options().gid;
  o.cred.gids = {s.options().gid};
  absl::StatusOr<std::unique_ptr<client::RpcClient>> c =
      client::RpcClient::Connect(s.target().host, s.nfs_port(), o);
  if (!c.ok()) return c.status();
  return (*c)->CallWithXid(xid, nfs3::kProgram, nfs3::kVersion, proc, args);
}

absl::Status NfsFailure(const char* proc, nfs3::nfsstat3 status, const std::string& what) {
  return absl::FailedPreconditionError(
      absl::StrCat(proc, " ", what, ": ", nfs3::StatusName(status)));
}

absl::StatusOr<Found> LookupName(bench::Session& s, const nfs3::nfs_fh3& dir,
                                 const std::string& name) {
  nfs3::LOOKUP3res res;
  if (absl::Status st = Call(s, nfs3::kLookup, nfs3::LOOKUP3args{{dir, name}}, &res); !st.ok()) {
    return st;
  }
  Found f;
  if (res.status == nfs3::NFS3ERR_NOENT) return f;
  if (res.status != nfs3::NFS3_OK) return NfsFailure("LOOKUP", res.status, name);
  f.exists = true;
  f.fh = res.object;
  if (res.obj_attributes) {
    f.attrs = *res.obj_attributes;
    return f;
  }
  absl::StatusOr<nfs3::fattr3> attrs = s.Getattr(f.fh);
  if (!attrs.ok()) return attrs.status();
  f.attrs = *attrs;
  return f;
}

absl::Status ReadAt(bench::Session& s, const nfs3::nfs_fh3& fh, uint64_t offset, uint32_t count,
                    std::string* data) {
  bool done = false;
  absl::Status result;
  const auto take = [&](xdr::Decoder& d, absl::Status* r) {
    nfs3::READ3res res;
    if (!xdr::Decode(d, &res)) {
      *r = absl::DataLossError("READ: malformed reply");
    } else if (res.status != nfs3::NFS3_OK) {
      *r = NfsFailure("READ", res.status, absl::StrCat("at ", offset));
    } else {
      data->assign(reinterpret_cast<const char*>(res.data.data()), res.data.size());
    }
  };
  s.rpc().StartCall(nfs3::kProgram, nfs3::kVersion, nfs3::kRead, nfs3::READ3args{fh, offset, count},
                    OnReply(&done, &result, take));
  absl::Status drained = s.rpc().Drain(absl::Now() + s.options().timeout);
  if (!done) return absl::UnavailableError(absl::StrCat("READ: ", drained.message()));
  return result;
}

std::string FhHex(const nfs3::nfs_fh3& fh) { return Hex(fh.bytes()); }

bool FhFromHex(const std::string& hex, nfs3::nfs_fh3* fh) {
  std::vector<uint8_t> bytes;
  if (!FromHex(hex, &bytes) || bytes.empty() || bytes.size() > sizeof(fh->data)) return false;
  fh->len = static_cast<uint8_t>(bytes.size());
  std::memcpy(fh->data, bytes.data(), bytes.size());
  return true;
}

}  // namespace nfs3d::powercut
