#include "tests/nfsd/nfs3_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "gtest/gtest.h"

#include "xdr/buffer_chain.h"

namespace nfs3d::nfsd::testing {

void EncodeFh(xdr::Encoder& e, const n3::nfs_fh3& fh) { e.Opaque(fh.bytes()); }

namespace {

void EncodeDirop(xdr::Encoder& e, const n3::nfs_fh3& dir, std::string_view name) {
  EncodeFh(e, dir);
  e.String(name);
}

void EncodeTime(xdr::Encoder& e, n3::time_how how, const n3::nfstime3& t) {
  e.U32(how);
  if (how == n3::SET_TO_CLIENT_TIME) {
    e.U32(t.seconds);
    e.U32(t.nseconds);
  }
}

n3::nfstime3 DecodeTime(xdr::Decoder& d) {
  n3::nfstime3 t;
  t.seconds = d.U32();
  t.nseconds = d.U32();
  return t;
}

n3::post_op_fh3 DecodePostOpFh(xdr::Decoder& d) {
  if (!d.Bool()) return std::nullopt;
  n3::nfs_fh3 fh;
  auto bytes = d.Opaque(n3::kFhSize);
  fh.len = static_cast<uint8_t>(bytes.size());
  std::memcpy(fh.data, bytes.data(), bytes.size());
  return fh;
}

void DecodeVerf(xdr::Decoder& d, uint8_t* out) {
  auto bytes = d.FixedOpaque(8);
  if (bytes.size() == 8) std::memcpy(out, bytes.data(), 8);
}

n3::nfsstat3 Status(xdr::Decoder& d) { return static_cast<n3::nfsstat3>(d.U32()); }

}  // namespace

void EncodeSattr(xdr::Encoder& e, const n3::sattr3& s) {
  e.Bool(s.mode.has_value());
  if (s.mode) e.U32(*s.mode);
  e.Bool(s.uid.has_value());
  if (s.uid) e.U32(*s.uid);
  e.Bool(s.gid.has_value());
  if (s.gid) e.U32(*s.gid);
  e.Bool(s.size.has_value());
  if (s.size) e.U64(*s.size);
  EncodeTime(e, s.atime_how, s.atime);
  EncodeTime(e, s.mtime_how, s.mtime);
}

n3::fattr3 DecodeFattr(xdr::Decoder& d) {
  n3::fattr3 a;
  a.type = static_cast<n3::ftype3>(d.U32());
  a.mode = d.U32();
  a.nlink = d.U32();
  a.uid = d.U32();
  a.gid = d.U32();
  a.size = d.U64();
  a.used = d.U64();
  a.rdev.specdata1 = d.U32();
  a.rdev.specdata2 = d.U32();
  a.fsid = d.U64();
  a.fileid = d.U64();
  a.atime = DecodeTime(d);
  a.mtime = DecodeTime(d);
  a.ctime = DecodeTime(d);
  return a;
}

n3::post_op_attr DecodePostOpAttr(xdr::Decoder& d) {
  if (!d.Bool()) return std::nullopt;
  return DecodeFattr(d);
}

n3::wcc_data DecodeWcc(xdr::Decoder& d) {
  n3::wcc_data w;
  if (d.Bool()) {
    n3::wcc_attr a;
    a.size = d.U64();
    a.mtime = DecodeTime(d);
    a.ctime = DecodeTime(d);
    w.before = a;
  }
  w.after = DecodePostOpAttr(d);
  return w;
}

rpc::ProcResult Nfs3TestClient::Run(uint32_t proc, const std::function<void(xdr::Encoder&)>& args,
                                    std::string* reply) {
  xdr::BufferChain arg_chain;
  xdr::Encoder arg_encoder(&arg_chain);
  args(arg_encoder);
  const std::string arg_bytes = arg_chain.Flatten();

  rpc::TransportInfo transport;
  transport.transport = caller.transport;
  transport.mtu = caller.mtu;
  auto* sin = reinterpret_cast<sockaddr_in*>(&transport.peer);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(caller.port);
  sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  transport.peer_len = sizeof(sockaddr_in);

  const rpc::ProgramVersion& version = program_.versions.at(0);
  const rpc::Procedure& row = version.procedures[proc];
  rpc::CallContext ctx;
  ctx.xid = 1;
  ctx.prog = program_.number;
  ctx.vers = version.version;
  ctx.proc = proc;
  ctx.cred.flavor = caller.flavor;
  ctx.cred.uid = caller.uid;
  ctx.cred.gid = caller.gid;
  ctx.cred.gids = caller.gids;
  ctx.transport = &transport;
  ctx.procedure = &row;

  xdr::Decoder in(reinterpret_cast<const uint8_t*>(arg_bytes.data()), arg_bytes.size());
  xdr::BufferChain out_chain;
  xdr::Encoder out(&out_chain);
  rpc::ProcResult result = row.run(program_.service, ctx, in, out);
  *reply = out_chain.Flatten();
  last_reply_size_ = reply->size();
  if (row.max_reply != 0) {
    EXPECT_LE(reply->size(), row.max_reply) << row.name;
  }
  return result;
}

xdr::Decoder Nfs3TestClient::Call(uint32_t proc, const std::function<void(xdr::Encoder&)>& args) {
  EXPECT_EQ(Run(proc, args, &reply_), rpc::ProcResult::kSuccess);
  return xdr::Decoder(reinterpret_cast<const uint8_t*>(reply_.data()), reply_.size());
}

#define NFS3D_EXPECT_CONSUMED(d) \
  EXPECT_TRUE((d).ok());         \
  EXPECT_EQ((d).remaining(), 0u)

n3::GETATTR3res Nfs3TestClient::Getattr(const n3::nfs_fh3& fh) {
  xdr::Decoder d = Call(n3::kGetattr, [&](xdr::Encoder& e) { EncodeFh(e, fh); });
  n3::GETATTR3res r;
  r.status = Status(d);
  if (r.status == n3::NFS3_OK) r.obj_attributes = DecodeFattr(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::SETATTR3res Nfs3TestClient::Setattr(const n3::nfs_fh3& fh, const n3::sattr3& attrs,
                                        std::optional<n3::nfstime3> guard) {
  xdr::Decoder d = Call(n3::kSetattr, [&](xdr::Encoder& e) {
    EncodeFh(e, fh);
    EncodeSattr(e, attrs);
    e.Bool(guard.has_value());
    if (guard) {
      e.U32(guard->seconds);
      e.U32(guard->nseconds);
    }
  });
  n3::SETATTR3res r;
  r.status = Status(d);
  r.obj_wcc = DecodeWcc(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::LOOKUP3res Nfs3TestClient::Lookup(const n3::nfs_fh3& dir, std::string_view name) {
  xdr::Decoder d = Call(n3::kLookup, [&](xdr::Encoder& e) { EncodeDirop(e, dir, name); });
  n3::LOOKUP3res r;
  r.status = Status(d);
  if (r.status == n3::NFS3_OK) {
    auto bytes = d.Opaque(n3::kFhSize);
    r.object.len = static_cast<uint8_t>(bytes.size());
    std::memcpy(r.object.data, bytes.data(), bytes.size());
    r.obj_attributes = DecodePostOpAttr(d);
  }
  r.dir_attributes = DecodePostOpAttr(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::ACCESS3res Nfs3TestClient::Access(const n3::nfs_fh3& fh, uint32_t access) {
  xdr::Decoder d = Call(n3::kAccess, [&](xdr::Encoder& e) {
    EncodeFh(e, fh);
    e.U32(access);
  });
  n3::ACCESS3res r;
  r.status = Status(d);
  r.obj_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) r.access = d.U32();
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::READLINK3res Nfs3TestClient::Readlink(const n3::nfs_fh3& fh) {
  xdr::Decoder d = Call(n3::kReadlink, [&](xdr::Encoder& e) { EncodeFh(e, fh); });
  n3::READLINK3res r;
  r.status = Status(d);
  r.symlink_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) r.data = std::string(d.String(n3::kMaxPathLen));
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

ReadReply Nfs3TestClient::Read(const n3::nfs_fh3& fh, uint64_t offset, uint32_t count) {
  xdr::Decoder d = Call(n3::kRead, [&](xdr::Encoder& e) {
    EncodeFh(e, fh);
    e.U64(offset);
    e.U32(count);
  });
  ReadReply r;
  r.status = Status(d);
  r.file_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) {
    r.count = d.U32();
    r.eof = d.Bool();
    auto bytes = d.Opaque(n3::kMaxData);
    r.data.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::WRITE3res Nfs3TestClient::Write(const n3::nfs_fh3& fh, uint64_t offset, std::string_view data,
                                    n3::stable_how stable, std::optional<uint32_t> count) {
  xdr::Decoder d = Call(n3::kWrite, [&](xdr::Encoder& e) {
    EncodeFh(e, fh);
    e.U64(offset);
    e.U32(count.value_or(static_cast<uint32_t>(data.size())));
    e.U32(stable);
    e.String(data);
  });
  n3::WRITE3res r;
  r.status = Status(d);
  r.file_wcc = DecodeWcc(d);
  if (r.status == n3::NFS3_OK) {
    r.count = d.U32();
    r.committed = static_cast<n3::stable_how>(d.U32());
    DecodeVerf(d, r.verf);
  }
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

namespace {
n3::diropres3 DecodeDirop(xdr::Decoder& d) {
  n3::diropres3 r;
  r.status = Status(d);
  if (r.status == n3::NFS3_OK) {
    r.obj = DecodePostOpFh(d);
    r.obj_attributes = DecodePostOpAttr(d);
  }
  r.dir_wcc = DecodeWcc(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}
}  // namespace

n3::diropres3 Nfs3TestClient::Create(const n3::nfs_fh3& dir, std::string_view name,
                                     n3::createmode3 mode, const n3::sattr3& attrs, uint64_t verf) {
  xdr::Decoder d = Call(n3::kCreate, [&](xdr::Encoder& e) {
    EncodeDirop(e, dir, name);
    e.U32(mode);
    if (mode == n3::EXCLUSIVE) {
      e.U64(verf);
    } else {
      EncodeSattr(e, attrs);
    }
  });
  return DecodeDirop(d);
}

n3::diropres3 Nfs3TestClient::Mkdir(const n3::nfs_fh3& dir, std::string_view name,
                                    const n3::sattr3& attrs) {
  xdr::Decoder d = Call(n3::kMkdir, [&](xdr::Encoder& e) {
    EncodeDirop(e, dir, name);
    EncodeSattr(e, attrs);
  });
  return DecodeDirop(d);
}

n3::diropres3 Nfs3TestClient::Symlink(const n3::nfs_fh3& dir, std::string_view name,
                                      std::string_view target) {
  xdr::Decoder d = Call(n3::kSymlink, [&](xdr::Encoder& e) {
    EncodeDirop(e, dir, name);
    EncodeSattr(e, {});
    e.String(target);
  });
  return DecodeDirop(d);
}

n3::diropres3 Nfs3TestClient::Mknod(const n3::nfs_fh3& dir, std::string_view name, n3::ftype3 type,
                                    const n3::sattr3& attrs, n3::specdata3 spec) {
  xdr::Decoder d = Call(n3::kMknod, [&](xdr::Encoder& e) {
    EncodeDirop(e, dir, name);
    e.U32(type);
    if (type == n3::NF3CHR || type == n3::NF3BLK) {
      EncodeSattr(e, attrs);
      e.U32(spec.specdata1);
      e.U32(spec.specdata2);
    } else if (type == n3::NF3SOCK || type == n3::NF3FIFO) {
      EncodeSattr(e, attrs);
    }
  });
  return DecodeDirop(d);
}

n3::REMOVE3res Nfs3TestClient::Remove(const n3::nfs_fh3& dir, std::string_view name) {
  xdr::Decoder d = Call(n3::kRemove, [&](xdr::Encoder& e) { EncodeDirop(e, dir, name); });
  n3::REMOVE3res r;
  r.status = Status(d);
  r.dir_wcc = DecodeWcc(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::REMOVE3res Nfs3TestClient::Rmdir(const n3::nfs_fh3& dir, std::string_view name) {
  xdr::Decoder d = Call(n3::kRmdir, [&](xdr::Encoder& e) { EncodeDirop(e, dir, name); });
  n3::REMOVE3res r;
  r.status = Status(d);
  r.dir_wcc = DecodeWcc(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::RENAME3res Nfs3TestClient::Rename(const n3::nfs_fh3& from_dir, std::string_view from_name,
                                      const n3::nfs_fh3& to_dir, std::string_view to_name) {
  xdr::Decoder d = Call(n3::kRename, [&](xdr::Encoder& e) {
    EncodeDirop(e, from_dir, from_name);
    EncodeDirop(e, to_dir, to_name);
  });
  n3::RENAME3res r;
  r.status = Status(d);
  r.fromdir_wcc = DecodeWcc(d);
  r.todir_wcc = DecodeWcc(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::LINK3res Nfs3TestClient::Link(const n3::nfs_fh3& file, const n3::nfs_fh3& dir,
                                  std::string_view name) {
  xdr::Decoder d = Call(n3::kLink, [&](xdr::Encoder& e) {
    EncodeFh(e, file);
    EncodeDirop(e, dir, name);
  });
  n3::LINK3res r;
  r.status = Status(d);
  r.file_attributes = DecodePostOpAttr(d);
  r.linkdir_wcc = DecodeWcc(d);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::READDIR3res Nfs3TestClient::Readdir(const n3::nfs_fh3& dir, uint64_t cookie,
                                        const uint8_t* verf, uint32_t count) {
  static constexpr uint8_t kZero[8] = {};
  xdr::Decoder d = Call(n3::kReaddir, [&](xdr::Encoder& e) {
    EncodeFh(e, dir);
    e.U64(cookie);
    e.FixedOpaque({verf ? verf : kZero, 8});
    e.U32(count);
  });
  n3::READDIR3res r;
  r.status = Status(d);
  r.dir_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) {
    DecodeVerf(d, r.cookieverf);
    while (d.ok() && d.Bool()) {
      n3::entry3 entry;
      entry.fileid = d.U64();
      entry.name = std::string(d.String(n3::kMaxNameLen));
      entry.cookie = d.U64();
      r.entries.push_back(std::move(entry));
    }
    r.eof = d.Bool();
  }
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::READDIRPLUS3res Nfs3TestClient::Readdirplus(const n3::nfs_fh3& dir, uint64_t cookie,
                                                const uint8_t* verf, uint32_t dircount,
                                                uint32_t maxcount) {
  static constexpr uint8_t kZero[8] = {};
  xdr::Decoder d = Call(n3::kReaddirplus, [&](xdr::Encoder& e) {
    EncodeFh(e, dir);
    e.U64(cookie);
    e.FixedOpaque({verf ? verf : kZero, 8});
    e.U32(dircount);
    e.U32(maxcount);
  });
  n3::READDIRPLUS3res r;
  r.status = Status(d);
  r.dir_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) {
    DecodeVerf(d, r.cookieverf);
    while (d.ok() && d.Bool()) {
      n3::entryplus3 entry;
      entry.fileid = d.U64();
      entry.name = std::string(d.String(n3::kMaxNameLen));
      entry.cookie = d.U64();
      entry.name_attributes = DecodePostOpAttr(d);
      entry.name_handle = DecodePostOpFh(d);
      r.entries.push_back(std::move(entry));
    }
    r.eof = d.Bool();
  }
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::FSSTAT3res Nfs3TestClient::Fsstat(const n3::nfs_fh3& fh) {
  xdr::Decoder d = Call(n3::kFsstat, [&](xdr::Encoder& e) { EncodeFh(e, fh); });
  n3::FSSTAT3res r;
  r.status = Status(d);
  r.obj_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) {
    r.tbytes = d.U64();
    r.fbytes = d.U64();
    r.abytes = d.U64();
    r.tfiles = d.U64();
    r.ffiles = d.U64();
    r.afiles = d.U64();
    r.invarsec = d.U32();
  }
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::FSINFO3res Nfs3TestClient::Fsinfo(const n3::nfs_fh3& fh) {
  xdr::Decoder d = Call(n3::kFsinfo, [&](xdr::Encoder& e) { EncodeFh(e, fh); });
  n3::FSINFO3res r;
  r.status = Status(d);
  r.obj_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) {
    r.rtmax = d.U32();
    r.rtpref = d.U32();
    r.rtmult = d.U32();
    r.wtmax = d.U32();
    r.wtpref = d.U32();
    r.wtmult = d.U32();
    r.dtpref = d.U32();
    r.maxfilesize = d.U64();
    r.time_delta = DecodeTime(d);
    r.properties = d.U32();
  }
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::PATHCONF3res Nfs3TestClient::Pathconf(const n3::nfs_fh3& fh) {
  xdr::Decoder d = Call(n3::kPathconf, [&](xdr::Encoder& e) { EncodeFh(e, fh); });
  n3::PATHCONF3res r;
  r.status = Status(d);
  r.obj_attributes = DecodePostOpAttr(d);
  if (r.status == n3::NFS3_OK) {
    r.linkmax = d.U32();
    r.name_max = d.U32();
    r.no_trunc = d.Bool();
    r.chown_restricted = d.Bool();
    r.case_insensitive = d.Bool();
    r.case_preserving = d.Bool();
  }
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

n3::COMMIT3res Nfs3TestClient::Commit(const n3::nfs_fh3& fh, uint64_t offset, uint32_t count) {
  xdr::Decoder d = Call(n3::kCommit, [&](xdr::Encoder& e) {
    EncodeFh(e, fh);
    e.U64(offset);
    e.U32(count);
  });
  n3::COMMIT3res r;
  r.status = Status(d);
  r.file_wcc = DecodeWcc(d);
  if (r.status == n3::NFS3_OK) DecodeVerf(d, r.verf);
  NFS3D_EXPECT_CONSUMED(d);
  return r;
}

}  // namespace nfs3d::nfsd::testing
