#include "tools/nfs3bench/session.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "client/rpc_client.h"
#include "xdr/buffer_chain.h"
#include "xdr/mount3_codec.h"
#include "xdr/nfs3_client_codec.h"

namespace nfs3d::bench {
namespace {

constexpr uint32_t kPmapProgram = 100000;
constexpr uint32_t kPmapVersion = 2;
constexpr uint32_t kPmapGetport = 3;
constexpr uint32_t kMaxUdpTransfer = 32768;

// A context for options.sec, made over a connection of its own (contexts
// are not tied to one).
absl::StatusOr<std::unique_ptr<client::GssInitiator>> EstablishGss(const Target& target,
                                                                   uint16_t nfs_port,
                                                                   const SessionOptions& options,
                                                                   absl::Duration timeout) {
  using rpc::gss::GssService;
  client::GssInitiatorOptions go;
  if (options.sec == "krb5") {
    go.service = GssService::kNone;
  } else if (options.sec == "krb5i") {
    go.service = GssService::kIntegrity;
  } else if (options.sec == "krb5p") {
    go.service = GssService::kPrivacy;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--sec ", options.sec, ": krb5, krb5i or krb5p"));
  }
  go.principal = options.krb5_principal;
  go.client_keytab = options.krb5_keytab;
  go.target = options.krb5_target.empty() ? absl::StrCat("nfs@", target.host) : options.krb5_target;
  client::RpcClientOptions ro;
  ro.transport = options.transport;
  ro.timeout = timeout;
  auto rpc = client::RpcClient::Connect(target.host, nfs_port, ro);
  if (!rpc.ok()) return rpc.status();
  uint32_t xid = static_cast<uint32_t>(getpid()) << 8;
  auto gss = client::GssInitiator::Establish(
      go, nfs3::kProgram, nfs3::kVersion, xid,
      [&](const std::string& m) -> absl::StatusOr<std::string> {
        return (*rpc)->SendRaw(
            absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(m.data()), m.size()),
            timeout);
      });
  if (!gss.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("RPCSEC_GSS context with ", go.target, ": ", gss.status().message()));
  }
  return std::move(*gss);
}

rpc::Credential MakeCred(const SessionOptions& o) {
  rpc::Credential c;
  c.flavor = kAuthSys;
  c.machine = "nfs3bench";
  c.uid = o.uid;
  c.gid = o.gid;
  c.gids = {o.gid};
  return c;
}

std::string Bytes(xdr::BufferChain& chain) { return chain.Flatten(); }

absl::Span<const uint8_t> AsSpan(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Blocking call that returns the result bytes or a clear error.
absl::StatusOr<std::string> SyncCall(const std::string& host, uint16_t port,
                                     const client::RpcClientOptions& o, uint32_t prog,
                                     uint32_t vers, uint32_t proc, const std::string& args,
                                     const std::string& what) {
  auto c = client::RpcClient::Connect(host, port, o);
  if (!c.ok()) return absl::UnavailableError(absl::StrCat(what, ": ", c.status().message()));
  auto reply = (*c)->Call(prog, vers, proc, AsSpan(args));
  if (!reply.ok()) {
    return absl::UnavailableError(absl::StrCat(what, ": ", reply.status().message()));
  }
  if (reply->reply_stat != 0 || reply->accept_stat != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": RPC rejected (reply_stat=", reply->reply_stat,
                     " accept_stat=", reply->accept_stat, " auth_stat=", reply->auth_stat, ")"));
  }
  return reply->results;
}

absl::StatusOr<uint16_t> GetPort(const std::string& host, uint32_t prog, uint32_t vers,
                                 rpc::Transport transport, absl::Duration timeout) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  e.U32(prog);
  e.U32(vers);
  e.U32(transport == rpc::Transport::kTcp ? 6 : 17);
  e.U32(0);
  client::RpcClientOptions o;
  o.transport = rpc::Transport::kTcp;
  o.timeout = timeout;
  auto results = SyncCall(host, 111, o, kPmapProgram, kPmapVersion, kPmapGetport, Bytes(chain),
                          absl::StrCat("portmapper at ", host,
                                       ":111 (give --port and "
                                       "--mount-port to skip it)"));
  if (!results.ok()) return results.status();
  xdr::Decoder d(AsSpan(*results));
  uint32_t port = d.U32();
  if (!d.ok() || port == 0 || port > 65535) {
    return absl::NotFoundError(absl::StrCat("portmapper at ", host, " has no program ", prog,
                                            " version ", vers, " over ",
                                            transport == rpc::Transport::kTcp ? "tcp" : "udp"));
  }
  return static_cast<uint16_t>(port);
}

absl::Status NfsError(const char* proc, nfs3::nfsstat3 status, const std::string& name = "") {
  return absl::FailedPreconditionError(
      absl::StrCat(proc, name.empty() ? "" : " ", name, ": ", nfs3::StatusName(status)));
}

}  // namespace

absl::StatusOr<Target> ParseTarget(const std::string& text) {
  Target t;
  size_t colon;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat("bad target '", text, "': want [V6]:/export"));
    }
    t.host = text.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = text.find(':');
    if (colon == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("bad target '", text, "': want HOST:/export"));
    }
    t.host = text.substr(0, colon);
  }
  t.export_path = text.substr(colon + 1);
  if (t.host.empty() || t.export_path.empty() || t.export_path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("bad target '", text, "': want HOST:/export"));
  }
  return t;
}

absl::StatusOr<std::unique_ptr<Session>> Session::Open(const Target& target,
                                                       const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session());
  s->target_ = target;
  s->options_ = options;
  absl::Duration setup_timeout = std::min(options.timeout, absl::Seconds(10));
  s->mount_port_ = options.mount_port;
  if (s->mount_port_ == 0) {
    auto port =
        GetPort(target.host, mount3::kProgram, mount3::kVersion3, options.transport, setup_timeout);
    if (!port.ok()) return port.status();
    s->mount_port_ = *port;
  }
  uint16_t nfs_port = options.nfs_port;
  if (nfs_port == 0) {
    auto port =
        GetPort(target.host, nfs3::kProgram, nfs3::kVersion, options.transport, setup_timeout);
    if (!port.ok()) return port.status();
    nfs_port = *port;
  }
  s->nfs_port_ = nfs_port;

  // MNT over the transport under test (a server may serve MOUNT on one only).
  client::RpcClientOptions mo;
  mo.transport = options.transport;
  mo.timeout = setup_timeout;
  mo.udp_retransmit = absl::Milliseconds(500);
  mo.cred = MakeCred(options);
  mo.reserved_port = options.reserved_port;
  xdr::BufferChain args;
  xdr::Encoder e(&args);
  xdr::Encode(e, mount3::DirpathArgs{target.export_path});
  std::string where = absl::StrCat("mount ", target.host, ":", target.export_path, " (MOUNT port ",
                                   s->mount_port_, ")");
  auto results = SyncCall(target.host, s->mount_port_, mo, mount3::kProgram, mount3::kVersion3,
                          mount3::kMnt, Bytes(args), where);
  if (!results.ok()) return results.status();
  xdr::Decoder d(AsSpan(*results));
  mount3::MountRes3 mnt;
  if (!xdr::Decode(d, &mnt)) return absl::DataLossError(absl::StrCat(where, ": bad reply"));
  if (mnt.status != mount3::MNT3_OK) {
    return absl::PermissionDeniedError(
        absl::StrCat(where, ": refused: ", mount3::StatusName(mnt.status)));
  }
  s->root_ = mnt.fhandle;

  if (!options.sec.empty()) {
    absl::StatusOr<std::unique_ptr<client::GssInitiator>> gss =
        EstablishGss(target, nfs_port, options, setup_timeout);
    if (!gss.ok()) {
      s->Unmount().IgnoreError();
      return gss.status();
    }
    s->gss_ = std::move(*gss);
  }
  client::AsyncRpcOptions ao;
  ao.security = s->gss_.get();
  ao.transport = options.transport;
  ao.connect_timeout = setup_timeout;
  ao.call_timeout = options.timeout;
  ao.udp_timeout = options.udp_timeout;
  ao.cred = MakeCred(options);
  ao.reserved_port = options.reserved_port;
  ao.send_per_call = options.send_per_call;
  ao.tls = &options.tls;
  auto rpc = client::AsyncRpcClient::Connect(target.host, nfs_port, ao);
  if (!rpc.ok()) {
    s->Unmount().IgnoreError();
    return rpc.status();
  }
  s->rpc_ = std::move(*rpc);

  nfs3::FSINFO3res info;
  absl::Status st = s->rpc_->CallSync(nfs3::kProgram, nfs3::kVersion, nfs3::kFsinfo,
                                      nfs3::FSINFO3args{s->root_}, &info);
  if (!st.ok()) {
    s->Unmount().IgnoreError();
    return absl::UnavailableError(
        absl::StrCat("FSINFO on NFS port ", nfs_port, ": ", st.message()));
  }
  if (info.status != nfs3::NFS3_OK) return NfsError("FSINFO", info.status);
  s->rtmax_ = info.rtmax ? info.rtmax : 8192;
  s->wtmax_ = info.wtmax ? info.wtmax : 8192;
  if (options.transport == rpc::Transport::kUdp) {
    // A call or reply must fit one datagram; some servers (ganesha) announce
    // their TCP sizes on UDP too. Clamp like the Linux client does.
    s->rtmax_ = std::min(s->rtmax_, kMaxUdpTransfer);
    s->wtmax_ = std::min(s->wtmax_, kMaxUdpTransfer);
  }
  // A server that states no preference gets its maximum (as the Linux client).
  s->rtpref_ = info.rtpref ? std::min(info.rtpref, s->rtmax_) : s->rtmax_;
  s->wtpref_ = info.wtpref ? std::min(info.wtpref, s->wtmax_) : s->wtmax_;
  return s;
}

Session::~Session() { Unmount().IgnoreError(); }

absl::Status Session::Unmount() {
  if (mount_port_ == 0) return absl::OkStatus();
  client::RpcClientOptions mo;
  mo.transport = options_.transport;
  mo.timeout = absl::Seconds(2);
  mo.cred = MakeCred(options_);
  mo.reserved_port = options_.reserved_port;
  xdr::BufferChain args;
  xdr::Encoder e(&args);
  xdr::Encode(e, mount3::DirpathArgs{target_.export_path});
  uint16_t port = mount_port_;
  mount_port_ = 0;
  return SyncCall(target_.host, port, mo, mount3::kProgram, mount3::kVersion3, mount3::kUmnt,
                  Bytes(args), "UMNT")
      .status();
}

const char* Session::proto() const {
  return options_.transport == rpc::Transport::kTcp ? "tcp" : "udp";
}

absl::StatusOr<nfs3::nfs_fh3> Session::Lookup(const nfs3::nfs_fh3& dir, const std::string& name) {
  nfs3::LOOKUP3res res;
  absl::Status st = rpc_->CallSync(nfs3::kProgram, nfs3::kVersion, nfs3::kLookup,
                                   nfs3::LOOKUP3args{{dir, name}}, &res);
  if (!st.ok()) return st;
  if (res.status != nfs3::NFS3_OK) return NfsError("LOOKUP", res.status, name);
  return res.object;
}

absl::StatusOr<nfs3::nfs_fh3> Session::MkdirOrLookup(const nfs3::nfs_fh3& dir,
                                                     const std::string& name) {
  nfs3::MKDIR3args args{{dir, name}, {}};
  args.attributes.mode = 0755;
  nfs3::diropres3 res;
  absl::Status st = rpc_->CallSync(nfs3::kProgram, nfs3::kVersion, nfs3::kMkdir, args, &res);
  if (!st.ok()) return st;
  if (res.status == nfs3::NFS3ERR_EXIST) return Lookup(dir, name);
  if (res.status != nfs3::NFS3_OK) return NfsError("MKDIR", res.status, name);
  if (res.obj) return *res.obj;
  return Lookup(dir, name);
}

absl::StatusOr<nfs3::nfs_fh3> Session::CreateTruncate(const nfs3::nfs_fh3& dir,
                                                      const std::string& name) {
  nfs3::CREATE3args args;
  args.where = {dir, name};
  args.mode = nfs3::UNCHECKED;
  args.obj_attributes.mode = 0644;
  args.obj_attributes.size = 0;
  nfs3::diropres3 res;
  absl::Status st = rpc_->CallSync(nfs3::kProgram, nfs3::kVersion, nfs3::kCreate, args, &res);
  if (!st.ok()) return st;
  if (res.status != nfs3::NFS3_OK) return NfsError("CREATE", res.status, name);
  if (res.obj) return *res.obj;
  return Lookup(dir, name);
}

absl::StatusOr<nfs3::fattr3> Session::Getattr(const nfs3::nfs_fh3& fh) {
  nfs3::GETATTR3res res;
  absl::Status st =
      rpc_->CallSync(nfs3::kProgram, nfs3::kVersion, nfs3::kGetattr, nfs3::GETATTR3args{fh}, &res);
  if (!st.ok()) return st;
  if (res.status != nfs3::NFS3_OK) return NfsError("GETATTR", res.status);
  return res.obj_attributes;
}

absl::Status Session::Remove(const nfs3::nfs_fh3& dir, const std::string& name) {
  nfs3::REMOVE3res res;
  absl::Status st = rpc_->CallSync(nfs3::kProgram, nfs3::kVersion, nfs3::kRemove,
                                   nfs3::REMOVE3args{{dir, name}}, &res);
  if (!st.ok()) return st;
  if (res.status != nfs3::NFS3_OK && res.status != nfs3::NFS3ERR_NOENT) {
    return NfsError("REMOVE", res.status, name);
  }
  return absl::OkStatus();
}

absl::Status Session::Rmdir(const nfs3::nfs_fh3& dir, const std::string& name) {
  nfs3::REMOVE3res res;
  absl::Status st = rpc_->CallSync(nfs3::kProgram, nfs3::kVersion, nfs3::kRmdir,
                                   nfs3::REMOVE3args{{dir, name}}, &res);
  if (!st.ok()) return st;
  if (res.status != nfs3::NFS3_OK && res.status != nfs3::NFS3ERR_NOENT) {
    return NfsError("RMDIR", res.status, name);
  }
  return absl::OkStatus();
}

}  // namespace nfs3d::bench
