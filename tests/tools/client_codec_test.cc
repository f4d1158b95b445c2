// The client codecs against the server codecs: arguments encoded by the
// client must decode on the server, results encoded by the server must
// decode on the client, field for field.
#include <cstring>
#include <string>

#include "gtest/gtest.h"

#include "xdr/buffer_chain.h"
#include "xdr/encode_to_string.h"
#include "xdr/mount3_codec.h"
#include "xdr/nfs3_client_codec.h"

namespace nfs3d::nfs3 {
namespace {

template <typename T>
bool Parse(const std::string& bytes, T* out) {
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return Decode(d, out) && d.remaining() == 0;
}

nfs_fh3 Fh(uint8_t seed, uint8_t len = 28) {
  nfs_fh3 fh;
  fh.len = len;
  for (uint8_t i = 0; i < len; ++i) fh.data[i] = static_cast<uint8_t>(seed + i);
  return fh;
}

bool SameFh(const nfs_fh3& a, const nfs_fh3& b) {
  return a.len == b.len && std::memcmp(a.data, b.data, a.len) == 0;
}

fattr3 Attr(uint64_t id) {
  fattr3 a;
  a.type = NF3REG;
  a.mode = 0644;
  a.nlink = 2;
  a.uid = 1000;
  a.gid = 100;
  a.size = 123456789012ull;
  a.used = 4096;
  a.rdev = {1, 2};
  a.fsid = 77;
  a.fileid = id;
  a.atime = {10, 11};
  a.mtime = {20, 21};
  a.ctime = {30, 31};
  return a;
}

void ExpectSameAttr(const fattr3& a, const fattr3& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.nlink, b.nlink);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.gid, b.gid);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.used, b.used);
  EXPECT_EQ(a.rdev.specdata1, b.rdev.specdata1);
  EXPECT_EQ(a.rdev.specdata2, b.rdev.specdata2);
  EXPECT_EQ(a.fsid, b.fsid);
  EXPECT_EQ(a.fileid, b.fileid);
  EXPECT_EQ(a.atime.seconds, b.atime.seconds);
  EXPECT_EQ(a.mtime.nseconds, b.mtime.nseconds);
  EXPECT_EQ(a.ctime.seconds, b.ctime.seconds);
}

wcc_data Wcc() {
  wcc_data w;
  w.before = wcc_attr{99, {1, 2}, {3, 4}};
  w.after = Attr(5);
  return w;
}

void ExpectSameWcc(const wcc_data& a, const wcc_data& b) {
  ASSERT_EQ(a.before.has_value(), b.before.has_value());
  if (a.before) {
    EXPECT_EQ(a.before->size, b.before->size);
    EXPECT_EQ(a.before->mtime.seconds, b.before->mtime.seconds);
    EXPECT_EQ(a.before->ctime.nseconds, b.before->ctime.nseconds);
  }
  ASSERT_EQ(a.after.has_value(), b.after.has_value());
  if (a.after) ExpectSameAttr(*a.after, *b.after);
}

// ---- Arguments: client Encode -> server Decode.

TEST(ClientArgsTest, HandleOnlyArgs) {
  GETATTR3args in{Fh(1)};
  GETATTR3args out;
  std::string w = xdr::EncodeToString(in);
  ASSERT_TRUE(Parse(w, &out));
  EXPECT_TRUE(SameFh(in.object, out.object));
  FSINFO3args fi{Fh(2, 64)}, fo;
  std::string w2 = xdr::EncodeToString(fi);
  ASSERT_TRUE(Parse(w2, &fo));
  EXPECT_TRUE(SameFh(fi.fsroot, fo.fsroot));
  FSSTAT3args si{Fh(3, 1)}, so;
  std::string w3 = xdr::EncodeToString(si);
  ASSERT_TRUE(Parse(w3, &so));
  EXPECT_TRUE(SameFh(si.fsroot, so.fsroot));
  PATHCONF3args pi{Fh(4)}, po;
  std::string w4 = xdr::EncodeToString(pi);
  ASSERT_TRUE(Parse(w4, &po));
  READLINK3args ri{Fh(5)}, ro;
  std::string w5 = xdr::EncodeToString(ri);
  ASSERT_TRUE(Parse(w5, &ro));
  EXPECT_TRUE(SameFh(ri.symlink, ro.symlink));
}

TEST(ClientArgsTest, SetattrWithEverySattrField) {
  SETATTR3args in;
  in.object = Fh(9);
  in.new_attributes.mode = 0600;
  in.new_attributes.uid = 5;
  in.new_attributes.gid = 6;
  in.new_attributes.size = 1ull << 40;
  in.new_attributes.atime_how = SET_TO_CLIENT_TIME;
  in.new_attributes.atime = {100, 200};
  in.new_attributes.mtime_how = SET_TO_SERVER_TIME;
  in.guard = nfstime3{7, 8};
  SETATTR3args out;
  std::string w = xdr::EncodeToString(in);
  ASSERT_TRUE(Parse(w, &out));
  EXPECT_EQ(out.new_attributes.mode, 0600u);
  EXPECT_EQ(out.new_attributes.uid, 5u);
  EXPECT_EQ(out.new_attributes.gid, 6u);
  EXPECT_EQ(out.new_attributes.size, 1ull << 40);
  EXPECT_EQ(out.new_attributes.atime_how, SET_TO_CLIENT_TIME);
  EXPECT_EQ(out.new_attributes.atime.nseconds, 200u);
  EXPECT_EQ(out.new_attributes.mtime_how, SET_TO_SERVER_TIME);
  ASSERT_TRUE(out.guard.has_value());
  EXPECT_EQ(out.guard->seconds, 7u);

  SETATTR3args empty{Fh(1)}, empty_out;
  std::string w2 = xdr::EncodeToString(empty);
  ASSERT_TRUE(Parse(w2, &empty_out));
  EXPECT_FALSE(empty_out.new_attributes.mode.has_value());
  EXPECT_FALSE(empty_out.guard.has_value());
}

TEST(ClientArgsTest, DiropArgs) {
  LOOKUP3args in{{Fh(1), "name-of-5"}};  // odd length: padding
  LOOKUP3args out;
  std::string w = xdr::EncodeToString(in);
  ASSERT_TRUE(Parse(w, &out));
  EXPECT_EQ(out.what.name, "name-of-5");
  EXPECT_TRUE(SameFh(out.what.dir, in.what.dir));

  REMOVE3args rin{{Fh(2), "x"}}, rout;
  std::string w2 = xdr::EncodeToString(rin);
  ASSERT_TRUE(Parse(w2, &rout));
  EXPECT_EQ(rout.object.name, "x");

  RENAME3args nin{{Fh(3), "from"}, {Fh(4), "to-name"}}, nout;
  std::string w3 = xdr::EncodeToString(nin);
  ASSERT_TRUE(Parse(w3, &nout));
  EXPECT_EQ(nout.from.name, "from");
  EXPECT_EQ(nout.to.name, "to-name");
  EXPECT_TRUE(SameFh(nout.to.dir, nin.to.dir));

  LINK3args lin{Fh(5), {Fh(6), "ln"}}, lout;
  std::string w4 = xdr::EncodeToString(lin);
  ASSERT_TRUE(Parse(w4, &lout));
  EXPECT_TRUE(SameFh(lout.file, lin.file));
  EXPECT_EQ(lout.link.name, "ln");

  MKDIR3args min{{Fh(7), "d"}, {}}, mout;
  min.attributes.mode = 0755;
  std::string w5 = xdr::EncodeToString(min);
  ASSERT_TRUE(Parse(w5, &mout));
  EXPECT_EQ(mout.attributes.mode, 0755u);

  SYMLINK3args sin{{Fh(8), "s"}, {}, "../target/path"}, sout;
  std::string w6 = xdr::EncodeToString(sin);
  ASSERT_TRUE(Parse(w6, &sout));
  EXPECT_EQ(sout.symlink_data, "../target/path");
}

TEST(ClientArgsTest, AccessReadWriteCommit) {
  ACCESS3args ain{Fh(1), ACCESS3_READ | ACCESS3_MODIFY}, aout;
  std::string w1 = xdr::EncodeToString(ain);
  ASSERT_TRUE(Parse(w1, &aout));
  EXPECT_EQ(aout.access, ain.access);

  READ3args rin{Fh(2), 1ull << 33, 65536}, rout;
  std::string w2 = xdr::EncodeToString(rin);
  ASSERT_TRUE(Parse(w2, &rout));
  EXPECT_EQ(rout.offset, 1ull << 33);
  EXPECT_EQ(rout.count, 65536u);

  std::string data = "abcdefg";  // 7 bytes: one padding byte
  WRITE3args win;
  win.file = Fh(3);
  win.offset = 4096;
  win.count = 7;
  win.stable = FILE_SYNC;
  win.data = absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  WRITE3args wout;
  std::string w3 = xdr::EncodeToString(win);
  ASSERT_TRUE(Parse(w3, &wout));
  EXPECT_EQ(wout.offset, 4096u);
  EXPECT_EQ(wout.count, 7u);
  EXPECT_EQ(wout.stable, FILE_SYNC);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(wout.data.data()), wout.data.size()), data);

  COMMIT3args cin{Fh(4), 10, 20}, cout;
  std::string w4 = xdr::EncodeToString(cin);
  ASSERT_TRUE(Parse(w4, &cout));
  EXPECT_EQ(cout.offset, 10u);
  EXPECT_EQ(cout.count, 20u);
}

TEST(ClientArgsTest, CreateEveryMode) {
  CREATE3args in;
  in.where = {Fh(1), "f"};
  in.mode = GUARDED;
  in.obj_attributes.mode = 0640;
  in.obj_attributes.size = 0;
  CREATE3args out;
  std::string w = xdr::EncodeToString(in);
  ASSERT_TRUE(Parse(w, &out));
  EXPECT_EQ(out.mode, GUARDED);
  EXPECT_EQ(out.obj_attributes.mode, 0640u);
  EXPECT_EQ(out.obj_attributes.size, 0u);

  CREATE3args ex;
  ex.where = {Fh(1), "e"};
  ex.mode = EXCLUSIVE;
  for (int i = 0; i < 8; ++i) ex.verf[i] = static_cast<uint8_t>(0xa0 + i);
  CREATE3args exout;
  std::string w2 = xdr::EncodeToString(ex);
  ASSERT_TRUE(Parse(w2, &exout));
  EXPECT_EQ(exout.mode, EXCLUSIVE);
  EXPECT_EQ(std::memcmp(exout.verf, ex.verf, 8), 0);
}

TEST(ClientArgsTest, MknodArms) {
  for (ftype3 type : {NF3CHR, NF3BLK, NF3SOCK, NF3FIFO, NF3REG}) {
    MKNOD3args in;
    in.where = {Fh(1), "dev"};
    in.type = type;
    in.dev_attributes.mode = 0600;
    in.pipe_attributes.mode = 0666;
    in.spec = {8, 1};
    MKNOD3args out;
    std::string w = xdr::EncodeToString(in);
    ASSERT_TRUE(Parse(w, &out)) << type;
    EXPECT_EQ(out.type, type);
    if (type == NF3CHR || type == NF3BLK) {
      EXPECT_EQ(out.spec.specdata1, 8u);
      EXPECT_EQ(out.dev_attributes.mode, 0600u);
    }
    if (type == NF3SOCK || type == NF3FIFO) {
      EXPECT_EQ(out.pipe_attributes.mode, 0666u);
    }
  }
}

TEST(ClientArgsTest, Readdir) {
  READDIR3args in{Fh(1), 42, {1, 2, 3, 4, 5, 6, 7, 8}, 4096}, out;
  std::string w = xdr::EncodeToString(in);
  ASSERT_TRUE(Parse(w, &out));
  EXPECT_EQ(out.cookie, 42u);
  EXPECT_EQ(out.count, 4096u);
  EXPECT_EQ(std::memcmp(out.cookieverf, in.cookieverf, 8), 0);

  READDIRPLUS3args pin{Fh(2), 7, {9, 9, 9, 9, 9, 9, 9, 9}, 1024, 32768}, pout;
  std::string w2 = xdr::EncodeToString(pin);
  ASSERT_TRUE(Parse(w2, &pout));
  EXPECT_EQ(pout.dircount, 1024u);
  EXPECT_EQ(pout.maxcount, 32768u);
}

// ---- Results: server Encode -> client Decode.

TEST(ClientResultsTest, GetattrAndSetattr) {
  GETATTR3res in{NFS3_OK, Attr(17)}, out;
  ASSERT_TRUE(Parse(xdr::EncodeToString(in), &out));
  ExpectSameAttr(in.obj_attributes, out.obj_attributes);
  GETATTR3res err{NFS3ERR_STALE, {}};
  ASSERT_TRUE(Parse(xdr::EncodeToString(err), &out));
  EXPECT_EQ(out.status, NFS3ERR_STALE);

  SETATTR3res sin{NFS3ERR_NOT_SYNC, Wcc()}, sout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(sin), &sout));
  EXPECT_EQ(sout.status, NFS3ERR_NOT_SYNC);
  ExpectSameWcc(sin.obj_wcc, sout.obj_wcc);
}

TEST(ClientResultsTest, LookupOkAndFail) {
  LOOKUP3res in;
  in.object = Fh(3);
  in.obj_attributes = Attr(1);
  in.dir_attributes = Attr(2);
  LOOKUP3res out;
  ASSERT_TRUE(Parse(xdr::EncodeToString(in), &out));
  EXPECT_TRUE(SameFh(out.object, in.object));
  ASSERT_TRUE(out.obj_attributes && out.dir_attributes);
  EXPECT_EQ(out.dir_attributes->fileid, 2u);

  LOOKUP3res fail;
  fail.status = NFS3ERR_NOENT;
  fail.dir_attributes = Attr(2);
  ASSERT_TRUE(Parse(xdr::EncodeToString(fail), &out));
  EXPECT_EQ(out.status, NFS3ERR_NOENT);
  ASSERT_TRUE(out.dir_attributes.has_value());
}

TEST(ClientResultsTest, AccessReadlink) {
  ACCESS3res in{NFS3_OK, Attr(1), ACCESS3_LOOKUP}, out;
  ASSERT_TRUE(Parse(xdr::EncodeToString(in), &out));
  EXPECT_EQ(out.access, ACCESS3_LOOKUP);
  READLINK3res rin{NFS3_OK, std::nullopt, "some/where"}, rout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(rin), &rout));
  EXPECT_EQ(rout.data, "some/where");
  EXPECT_FALSE(rout.symlink_attributes.has_value());
}

TEST(ClientResultsTest, ReadAsTheServerBuildsIt) {
  std::string data(1001, 'z');
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  e.U32(NFS3_OK);
  EncodeReadHead(e, READ3resok_head{Attr(4), 1001, true});
  uint8_t* body = e.ReserveOpaque(data.size());
  std::memcpy(body, data.data(), data.size());
  e.CommitOpaque(data.size());
  std::string wire = chain.Flatten();
  READ3res out;
  ASSERT_TRUE(Parse(wire, &out));
  EXPECT_EQ(out.count, 1001u);
  EXPECT_TRUE(out.eof);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(out.data.data()), out.data.size()), data);

  xdr::BufferChain fail_chain;
  xdr::Encoder f(&fail_chain);
  EncodeReadFail(f, NFS3ERR_IO, Attr(4));
  READ3res fail;
  ASSERT_TRUE(Parse(fail_chain.Flatten(), &fail));
  EXPECT_EQ(fail.status, NFS3ERR_IO);
}

TEST(ClientResultsTest, ReadCountMustMatchData) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  e.U32(NFS3_OK);
  EncodeReadHead(e, READ3resok_head{std::nullopt, 8, false});
  e.Opaque(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>("abcd"), 4));
  READ3res out;
  EXPECT_FALSE(Parse(chain.Flatten(), &out));
}

TEST(ClientResultsTest, WriteAndCommit) {
  WRITE3res in;
  in.file_wcc = Wcc();
  in.count = 65536;
  in.committed = FILE_SYNC;
  for (int i = 0; i < 8; ++i) in.verf[i] = static_cast<uint8_t>(i * 3);
  WRITE3res out;
  ASSERT_TRUE(Parse(xdr::EncodeToString(in), &out));
  EXPECT_EQ(out.count, 65536u);
  EXPECT_EQ(out.committed, FILE_SYNC);
  EXPECT_EQ(std::memcmp(out.verf, in.verf, 8), 0);
  ExpectSameWcc(in.file_wcc, out.file_wcc);

  COMMIT3res cin;
  cin.file_wcc = Wcc();
  std::memcpy(cin.verf, in.verf, 8);
  COMMIT3res cout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(cin), &cout));
  EXPECT_EQ(std::memcmp(cout.verf, in.verf, 8), 0);
  COMMIT3res cerr{NFS3ERR_IO, {}, {}};
  ASSERT_TRUE(Parse(xdr::EncodeToString(cerr), &cout));
  EXPECT_EQ(cout.status, NFS3ERR_IO);
}

TEST(ClientResultsTest, DiropresRemoveRenameLink) {
  diropres3 in;
  in.obj = Fh(5);
  in.obj_attributes = Attr(5);
  in.dir_wcc = Wcc();
  diropres3 out;
  ASSERT_TRUE(Parse(xdr::EncodeToString(in), &out));
  ASSERT_TRUE(out.obj.has_value());
  EXPECT_TRUE(SameFh(*out.obj, *in.obj));
  diropres3 exist;
  exist.status = NFS3ERR_EXIST;
  ASSERT_TRUE(Parse(xdr::EncodeToString(exist), &out));
  EXPECT_EQ(out.status, NFS3ERR_EXIST);

  REMOVE3res rin{NFS3_OK, Wcc()}, rout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(rin), &rout));
  ExpectSameWcc(rin.dir_wcc, rout.dir_wcc);
  RENAME3res nin{NFS3ERR_XDEV, Wcc(), {}}, nout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(nin), &nout));
  EXPECT_EQ(nout.status, NFS3ERR_XDEV);
  LINK3res lin{NFS3_OK, Attr(3), Wcc()}, lout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(lin), &lout));
  ASSERT_TRUE(lout.file_attributes.has_value());
}

TEST(ClientResultsTest, ReaddirAndReaddirplus) {
  READDIR3res in;
  in.dir_attributes = Attr(1);
  in.cookieverf[0] = 0x55;
  in.entries = {{1, ".", 1}, {2, "..", 2}, {33, "file-with-odd", 3}};
  in.eof = true;
  READDIR3res out;
  ASSERT_TRUE(Parse(xdr::EncodeToString(in), &out));
  ASSERT_EQ(out.entries.size(), 3u);
  EXPECT_EQ(out.entries[2].name, "file-with-odd");
  EXPECT_EQ(out.entries[2].fileid, 33u);
  EXPECT_EQ(out.cookieverf[0], 0x55);
  EXPECT_TRUE(out.eof);

  READDIRPLUS3res pin;
  pin.entries.resize(2);
  pin.entries[0] = {7, "a", 100, Attr(7), Fh(7)};
  pin.entries[1] = {8, "bb", 200, std::nullopt, std::nullopt};
  READDIRPLUS3res pout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(pin), &pout));
  ASSERT_EQ(pout.entries.size(), 2u);
  EXPECT_EQ(pout.entries[0].cookie, 100u);
  ASSERT_TRUE(pout.entries[0].name_handle.has_value());
  EXPECT_TRUE(SameFh(*pout.entries[0].name_handle, Fh(7)));
  EXPECT_FALSE(pout.entries[1].name_attributes.has_value());
  EXPECT_FALSE(pout.eof);
  READDIRPLUS3res bad{NFS3ERR_BAD_COOKIE, Attr(1), {}, {}, false};
  ASSERT_TRUE(Parse(xdr::EncodeToString(bad), &pout));
  EXPECT_EQ(pout.status, NFS3ERR_BAD_COOKIE);
  EXPECT_TRUE(pout.entries.empty());
}

TEST(ClientResultsTest, FsstatFsinfoPathconf) {
  FSSTAT3res sin;
  sin.tbytes = 1ull << 50;
  sin.afiles = 12345;
  sin.invarsec = 9;
  FSSTAT3res sout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(sin), &sout));
  EXPECT_EQ(sout.tbytes, 1ull << 50);
  EXPECT_EQ(sout.afiles, 12345u);
  EXPECT_EQ(sout.invarsec, 9u);

  FSINFO3res fin;
  fin.rtmax = 1 << 20;
  fin.rtpref = 1 << 19;
  fin.wtmax = 32768;
  fin.dtpref = 8192;
  fin.maxfilesize = ~0ull;
  fin.time_delta = {0, 1};
  fin.properties = FSF3_LINK | FSF3_CANSETTIME;
  FSINFO3res fout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(fin), &fout));
  EXPECT_EQ(fout.rtmax, 1u << 20);
  EXPECT_EQ(fout.rtpref, 1u << 19);
  EXPECT_EQ(fout.wtmax, 32768u);
  EXPECT_EQ(fout.maxfilesize, ~0ull);
  EXPECT_EQ(fout.properties, FSF3_LINK | FSF3_CANSETTIME);

  PATHCONF3res pin;
  pin.linkmax = 32000;
  pin.name_max = 255;
  pin.case_insensitive = true;
  PATHCONF3res pout;
  ASSERT_TRUE(Parse(xdr::EncodeToString(pin), &pout));
  EXPECT_EQ(pout.name_max, 255u);
  EXPECT_TRUE(pout.case_insensitive);
}

TEST(ClientResultsTest, TruncatedRepliesAreRejected) {
  WRITE3res in;
  in.file_wcc = Wcc();
  std::string w = xdr::EncodeToString(in);
  for (size_t cut = 0; cut < w.size(); cut += 7) {
    WRITE3res out;
    EXPECT_FALSE(Parse(w.substr(0, cut), &out)) << cut;
  }
}

TEST(ClientResultsTest, Names) {
  EXPECT_STREQ(StatusName(NFS3ERR_JUKEBOX), "NFS3ERR_JUKEBOX");
  EXPECT_STREQ(ProcName(kReaddirplus), "READDIRPLUS");
  EXPECT_STREQ(ProcName(99), "UNKNOWN");
}

}  // namespace
}  // namespace nfs3d::nfs3

namespace nfs3d::mount3 {
namespace {

TEST(ClientMountTest, MntArgsAndResult) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  Encode(e, DirpathArgs{"/srv/export"});
  std::string w = chain.Flatten();
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(w.data()), w.size());
  DirpathArgs args;
  ASSERT_TRUE(Decode(d, &args));
  EXPECT_EQ(args.dirpath, "/srv/export");

  MountRes3 res;
  res.fhandle.len = 12;
  res.fhandle.data[11] = 0xee;
  res.auth_flavors = {1, 0};
  xdr::BufferChain rc;
  xdr::Encoder re(&rc);
  Encode(re, res);
  std::string rw = rc.Flatten();
  xdr::Decoder rd(reinterpret_cast<const uint8_t*>(rw.data()), rw.size());
  MountRes3 out;
  ASSERT_TRUE(Decode(rd, &out));
  EXPECT_EQ(out.fhandle.len, 12);
  EXPECT_EQ(out.fhandle.data[11], 0xee);
  EXPECT_EQ(out.auth_flavors, (std::vector<uint32_t>{1, 0}));

  MountRes3 refused;
  refused.status = MNT3ERR_ACCES;
  xdr::BufferChain fc;
  xdr::Encoder fe(&fc);
  Encode(fe, refused);
  std::string fw = fc.Flatten();
  xdr::Decoder fd(reinterpret_cast<const uint8_t*>(fw.data()), fw.size());
  ASSERT_TRUE(Decode(fd, &out));
  EXPECT_EQ(out.status, MNT3ERR_ACCES);
  EXPECT_STREQ(StatusName(out.status), "MNT3ERR_ACCES");
}

TEST(ClientMountTest, ExportAndMountLists) {
  ExportList in;
  in.entries = {{"/a", {"10.0.0.0/8", "host"}}, {"/b", {}}};
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  Encode(e, in);
  std::string w = chain.Flatten();
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(w.data()), w.size());
  ExportList out;
  ASSERT_TRUE(Decode(d, &out));
  ASSERT_EQ(out.entries.size(), 2u);
  EXPECT_EQ(out.entries[0].groups[1], "host");
  EXPECT_TRUE(out.entries[1].groups.empty());

  MountList ml;
  ml.entries = {{"client", "/a"}};
  xdr::BufferChain mc;
  xdr::Encoder me(&mc);
  Encode(me, ml);
  std::string mw = mc.Flatten();
  xdr::Decoder md(reinterpret_cast<const uint8_t*>(mw.data()), mw.size());
  MountList mout;
  ASSERT_TRUE(Decode(md, &mout));
  ASSERT_EQ(mout.entries.size(), 1u);
  EXPECT_EQ(mout.entries[0].hostname, "client");
}

}  // namespace
}  // namespace nfs3d::mount3
