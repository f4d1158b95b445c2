// NFSv3 codec tests: every args type round-trips through a hand-written
// test-side encoder; key results are decoded back by a test-side decoder and
// checked byte for byte; malformed input is rejected without crashing.
#include "xdr/nfs3_codec.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "xdr/encode_to_string.h"

namespace nfs3d::nfs3 {
namespace {

using xdr::BufferChain;
using xdr::Decoder;
using xdr::Encoder;
using xdr::EncodeToString;

// ---- Helpers.

absl::Span<const uint8_t> AsSpan(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string Hex(const std::string& s) {
  std::string out;
  char buf[3];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

nfs_fh3 MakeFh(uint8_t seed, uint8_t len) {
  nfs_fh3 fh;
  fh.len = len;
  for (uint8_t i = 0; i < len; ++i) fh.data[i] = static_cast<uint8_t>(seed + i);
  return fh;
}

bool FhEq(const nfs_fh3& a, const nfs_fh3& b) {
  return a.len == b.len && std::equal(a.data, a.data + a.len, b.data);
}

fattr3 MakeAttr(uint32_t seed) {
  fattr3 a;
  a.type = NF3DIR;
  a.mode = 0755 + seed;
  a.nlink = 2 + seed;
  a.uid = 1000 + seed;
  a.gid = 100 + seed;
  a.size = 0x100000000ull + seed;
  a.used = 4096 + seed;
  a.rdev = {3 + seed, 4 + seed};
  a.fsid = 0xabcdef0000000000ull + seed;
  a.fileid = 77 + seed;
  a.atime = {10 + seed, 11};
  a.mtime = {20 + seed, 21};
  a.ctime = {30 + seed, 31};
  return a;
}

// Decodes wire into *args; true only if it decoded and consumed every byte.
template <typename Args>
bool DecodeAll(const std::string& wire, Args* args) {
  Decoder d(AsSpan(wire));
  bool ok = Decode(d, args) && d.ok();
  return ok && d.remaining() == 0;
}

// Decoded args borrow from the wire bytes, so a temporary wire is kept alive
// until the test binary exits.
template <typename Args>
bool DecodeAll(std::string&& wire, Args* args) {
  static std::deque<std::string>* kept = new std::deque<std::string>;
  kept->push_back(std::move(wire));
  return DecodeAll(static_cast<const std::string&>(kept->back()), args);
}

template <typename Args>
bool DecodeOk(const std::string& wire) {
  Args args{};
  Decoder d(AsSpan(wire));
  return Decode(d, &args) && d.ok();
}

// Every strict prefix of a valid encoding must be rejected.
template <typename Args>
void ExpectEveryTruncationFails(const std::string& wire) {
  ASSERT_TRUE(DecodeOk<Args>(wire));
  for (size_t n = 0; n < wire.size(); ++n) {
    std::string cut = wire.substr(0, n);
    EXPECT_FALSE(DecodeOk<Args>(cut)) << "prefix of " << n << " bytes decoded";
  }
}

// ---- Test-side args encoder.

class ArgsWriter {
 public:
  ArgsWriter() : e_(&chain_) {}
  ArgsWriter& U32(uint32_t v) {
    e_.U32(v);
    return *this;
  }
  ArgsWriter& U64(uint64_t v) {
    e_.U64(v);
    return *this;
  }
  ArgsWriter& Fh(const nfs_fh3& fh) {
    e_.Opaque(fh.bytes());
    return *this;
  }
  ArgsWriter& Str(const std::string& s) {
    e_.String(s);
    return *this;
  }
  ArgsWriter& Fixed(const uint8_t* p, size_t n) {
    e_.FixedOpaque(absl::Span<const uint8_t>(p, n));
    return *this;
  }
  ArgsWriter& Dirop(const nfs_fh3& fh, const std::string& name) { return Fh(fh).Str(name); }
  ArgsWriter& Time(const nfstime3& t) { return U32(t.seconds).U32(t.nseconds); }
  ArgsWriter& SetTime(time_how how, const nfstime3& t) {
    U32(how);
    if (how == SET_TO_CLIENT_TIME) Time(t);
    return *this;
  }
  ArgsWriter& Sattr(const sattr3& s) {
    U32(s.mode.has_value());
    if (s.mode) U32(*s.mode);
    U32(s.uid.has_value());
    if (s.uid) U32(*s.uid);
    U32(s.gid.has_value());
    if (s.gid) U32(*s.gid);
    U32(s.size.has_value());
    if (s.size) U64(*s.size);
    SetTime(s.atime_how, s.atime);
    return SetTime(s.mtime_how, s.mtime);
  }
  std::string bytes() const { return chain_.Flatten(); }

 private:
  BufferChain chain_;
  Encoder e_;
};

sattr3 FullSattr() {
  sattr3 s;
  s.mode = 0640;
  s.uid = 12;
  s.gid = 34;
  s.size = 0x123456789ull;
  s.atime_how = SET_TO_CLIENT_TIME;
  s.atime = {1000, 2000};
  s.mtime_how = SET_TO_CLIENT_TIME;
  s.mtime = {3000, 4000};
  return s;
}

void ExpectSattrEq(const sattr3& a, const sattr3& b) {
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.gid, b.gid);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.atime_how, b.atime_how);
  EXPECT_EQ(a.mtime_how, b.mtime_how);
  if (a.atime_how == SET_TO_CLIENT_TIME) {
    EXPECT_EQ(a.atime.seconds, b.atime.seconds);
    EXPECT_EQ(a.atime.nseconds, b.atime.nseconds);
  }
  if (a.mtime_how == SET_TO_CLIENT_TIME) {
    EXPECT_EQ(a.mtime.seconds, b.mtime.seconds);
    EXPECT_EQ(a.mtime.nseconds, b.mtime.nseconds);
  }
}

// ---- Test-side result decoder.

class ResReader {
 public:
  explicit ResReader(const std::string& wire) : d_(AsSpan(wire)) {}
  Decoder& d() { return d_; }
  uint32_t U32() { return d_.U32(); }
  uint64_t U64() { return d_.U64(); }
  bool Bool() { return d_.Bool(); }
  nfstime3 Time() {
    nfstime3 t;
    t.seconds = d_.U32();
    t.nseconds = d_.U32();
    return t;
  }
  nfs_fh3 Fh() {
    nfs_fh3 fh;
    absl::Span<const uint8_t> b = d_.Opaque(kFhSize);
    fh.len = static_cast<uint8_t>(b.size());
    std::copy(b.begin(), b.end(), fh.data);
    return fh;
  }
  fattr3 Attr() {
    fattr3 a;
    a.type = static_cast<ftype3>(U32());
    a.mode = U32();
    a.nlink = U32();
    a.uid = U32();
    a.gid = U32();
    a.size = U64();
    a.used = U64();
    a.rdev.specdata1 = U32();
    a.rdev.specdata2 = U32();
    a.fsid = U64();
    a.fileid = U64();
    a.atime = Time();
    a.mtime = Time();
    a.ctime = Time();
    return a;
  }
  post_op_attr PostOp() {
    if (!Bool()) return std::nullopt;
    return Attr();
  }
  post_op_fh3 PostOpFh() {
    if (!Bool()) return std::nullopt;
    return Fh();
  }
  wcc_data Wcc() {
    wcc_data w;
    if (Bool()) {
      wcc_attr a;
      a.size = U64();
      a.mtime = Time();
      a.ctime = Time();
      w.before = a;
    }
    w.after = PostOp();
    return w;
  }
  std::string Str() { return std::string(d_.String(1u << 20)); }
  bool AtEnd() { return d_.ok() && d_.remaining() == 0; }

 private:
  Decoder d_;
};

void ExpectAttrEq(const fattr3& a, const fattr3& b) {
  EXPECT_EQ(Hex(EncodeToString(a)), Hex(EncodeToString(b)));
}

void ExpectPostOpEq(const post_op_attr& a, const post_op_attr& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (a) ExpectAttrEq(*a, *b);
}

void ExpectWccEq(const wcc_data& a, const wcc_data& b) {
  ASSERT_EQ(a.before.has_value(), b.before.has_value());
  if (a.before) {
    EXPECT_EQ(a.before->size, b.before->size);
    EXPECT_EQ(a.before->mtime.seconds, b.before->mtime.seconds);
    EXPECT_EQ(a.before->mtime.nseconds, b.before->mtime.nseconds);
    EXPECT_EQ(a.before->ctime.seconds, b.before->ctime.seconds);
    EXPECT_EQ(a.before->ctime.nseconds, b.before->ctime.nseconds);
  }
  ExpectPostOpEq(a.after, b.after);
}

wcc_data MakeWcc() {
  wcc_data w;
  w.before = wcc_attr{99, {5, 6}, {7, 8}};
  w.after = MakeAttr(3);
  return w;
}

// ================= Args round trips =================

TEST(Nfs3ArgsTest, FileHandleOnlyArgs) {
  for (uint8_t len : {0, 1, 7, 32, 64}) {
    nfs_fh3 fh = MakeFh(len, len);
    std::string wire = ArgsWriter().Fh(fh).bytes();
    GETATTR3args g;
    ASSERT_TRUE(DecodeAll(wire, &g));
    EXPECT_TRUE(FhEq(g.object, fh));
    READLINK3args rl;
    ASSERT_TRUE(DecodeAll(wire, &rl));
    EXPECT_TRUE(FhEq(rl.symlink, fh));
    FSSTAT3args fs;
    ASSERT_TRUE(DecodeAll(wire, &fs));
    EXPECT_TRUE(FhEq(fs.fsroot, fh));
    FSINFO3args fi;
    ASSERT_TRUE(DecodeAll(wire, &fi));
    EXPECT_TRUE(FhEq(fi.fsroot, fh));
    PATHCONF3args pc;
    ASSERT_TRUE(DecodeAll(wire, &pc));
    EXPECT_TRUE(FhEq(pc.object, fh));
  }
}

TEST(Nfs3ArgsTest, HandleBytesBeyondLengthAreZeroed) {
  GETATTR3args g;
  std::fill(g.object.data, g.object.data + kFhSize, 0xee);
  ASSERT_TRUE(DecodeAll(ArgsWriter().Fh(MakeFh(1, 3)).bytes(), &g));
  EXPECT_EQ(g.object.len, 3);
  for (size_t i = 3; i < kFhSize; ++i) EXPECT_EQ(g.object.data[i], 0);
}

TEST(Nfs3ArgsTest, Null) {
  Void v;
  EXPECT_TRUE(DecodeAll(std::string(), &v));
  EXPECT_EQ(EncodeToString(Void{}), "");
}

TEST(Nfs3ArgsTest, Setattr) {
  nfs_fh3 fh = MakeFh(9, 20);
  // All fields set, with guard.
  {
    sattr3 s = FullSattr();
    std::string wire = ArgsWriter().Fh(fh).Sattr(s).U32(1).Time({55, 66}).bytes();
    SETATTR3args a;
    ASSERT_TRUE(DecodeAll(wire, &a));
    EXPECT_TRUE(FhEq(a.object, fh));
    ExpectSattrEq(a.new_attributes, s);
    ASSERT_TRUE(a.guard.has_value());
    EXPECT_EQ(a.guard->seconds, 55u);
    EXPECT_EQ(a.guard->nseconds, 66u);
  }
  // Nothing set, server time, no guard.
  {
    sattr3 s;
    s.mtime_how = SET_TO_SERVER_TIME;
    std::string wire = ArgsWriter().Fh(fh).Sattr(s).U32(0).bytes();
    EXPECT_EQ(wire.size(), 4 + 20 + 6 * 4 + 4u);
    SETATTR3args a;
    a.guard = nfstime3{1, 1};
    a.new_attributes.mode = 1;
    ASSERT_TRUE(DecodeAll(wire, &a));
    ExpectSattrEq(a.new_attributes, s);
    EXPECT_FALSE(a.guard.has_value());
    EXPECT_FALSE(a.new_attributes.mode.has_value());
  }
}

TEST(Nfs3ArgsTest, Lookup) {
  nfs_fh3 fh = MakeFh(3, 64);
  for (const std::string& name :
       {std::string(""), std::string("a"), std::string("file.txt"), std::string(255, 'n')}) {
    LOOKUP3args a;
    ASSERT_TRUE(DecodeAll(ArgsWriter().Dirop(fh, name).bytes(), &a));
    EXPECT_TRUE(FhEq(a.what.dir, fh));
    EXPECT_EQ(a.what.name, name);
  }
}

TEST(Nfs3ArgsTest, Access) {
  ACCESS3args a;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Fh(MakeFh(1, 8)).U32(0x3f).bytes(), &a));
  EXPECT_EQ(a.access, 0x3fu);
  EXPECT_TRUE(FhEq(a.object, MakeFh(1, 8)));
}

TEST(Nfs3ArgsTest, Read) {
  READ3args a;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Fh(MakeFh(1, 8)).U64(1ull << 40).U32(65536).bytes(), &a));
  EXPECT_EQ(a.offset, 1ull << 40);
  EXPECT_EQ(a.count, 65536u);
}

TEST(Nfs3ArgsTest, Write) {
  const std::string data = "hello, world";  // 12 bytes
  for (uint32_t stable : {UNSTABLE, DATA_SYNC, FILE_SYNC}) {
    std::string wire =
        ArgsWriter().Fh(MakeFh(2, 16)).U64(8192).U32(12).U32(stable).Str(data).bytes();
    WRITE3args a;
    ASSERT_TRUE(DecodeAll(wire, &a));
    EXPECT_TRUE(FhEq(a.file, MakeFh(2, 16)));
    EXPECT_EQ(a.offset, 8192u);
    EXPECT_EQ(a.count, 12u);
    EXPECT_EQ(a.stable, stable);
    EXPECT_EQ(std::string(a.data.begin(), a.data.end()), data);
    // The data borrows from the call buffer.
    EXPECT_GE(reinterpret_cast<const char*>(a.data.data()), wire.data());
    EXPECT_LT(reinterpret_cast<const char*>(a.data.data()), wire.data() + wire.size());
  }
}

TEST(Nfs3ArgsTest, WriteCountVersusDataLength) {
  // count larger than the data: malformed.
  WRITE3args a;
  EXPECT_FALSE(
      DecodeAll(ArgsWriter().Fh(MakeFh(2, 16)).U64(0).U32(13).U32(0).Str("hello").bytes(), &a));
  // count smaller than the data: data is trimmed to count.
  ASSERT_TRUE(
      DecodeAll(ArgsWriter().Fh(MakeFh(2, 16)).U64(0).U32(3).U32(0).Str("hello").bytes(), &a));
  EXPECT_EQ(a.data.size(), 3u);
  EXPECT_EQ(std::string(a.data.begin(), a.data.end()), "hel");
  // Zero-length write.
  ASSERT_TRUE(DecodeAll(ArgsWriter().Fh(MakeFh(2, 16)).U64(0).U32(0).U32(0).Str("").bytes(), &a));
  EXPECT_TRUE(a.data.empty());
}

TEST(Nfs3ArgsTest, CreateUncheckedGuarded) {
  for (uint32_t mode : {UNCHECKED, GUARDED}) {
    sattr3 s = FullSattr();
    s.atime_how = SET_TO_SERVER_TIME;
    std::string wire = ArgsWriter().Dirop(MakeFh(4, 12), "new").U32(mode).Sattr(s).bytes();
    CREATE3args a;
    ASSERT_TRUE(DecodeAll(wire, &a));
    EXPECT_TRUE(FhEq(a.where.dir, MakeFh(4, 12)));
    EXPECT_EQ(a.where.name, "new");
    EXPECT_EQ(a.mode, mode);
    ExpectSattrEq(a.obj_attributes, s);
  }
}

TEST(Nfs3ArgsTest, CreateExclusive) {
  const uint8_t verf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::string wire = ArgsWriter().Dirop(MakeFh(4, 12), "x").U32(EXCLUSIVE).Fixed(verf, 8).bytes();
  CREATE3args a;
  ASSERT_TRUE(DecodeAll(wire, &a));
  EXPECT_EQ(a.mode, EXCLUSIVE);
  EXPECT_TRUE(std::equal(verf, verf + 8, a.verf));
}

TEST(Nfs3ArgsTest, Mkdir) {
  sattr3 s;
  s.mode = 0700;
  MKDIR3args a;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Dirop(MakeFh(5, 10), "dir").Sattr(s).bytes(), &a));
  EXPECT_EQ(a.where.name, "dir");
  ExpectSattrEq(a.attributes, s);
}

TEST(Nfs3ArgsTest, Symlink) {
  sattr3 s;
  s.uid = 5;
  SYMLINK3args a;
  ASSERT_TRUE(DecodeAll(
      ArgsWriter().Dirop(MakeFh(5, 10), "lnk").Sattr(s).Str("../target/path").bytes(), &a));
  EXPECT_EQ(a.where.name, "lnk");
  ExpectSattrEq(a.symlink_attributes, s);
  EXPECT_EQ(a.symlink_data, "../target/path");
  // A target of exactly kMaxPathLen is fine, one more byte is not.
  EXPECT_TRUE(DecodeAll(
      ArgsWriter().Dirop(MakeFh(5, 10), "l").Sattr(s).Str(std::string(kMaxPathLen, 'p')).bytes(),
      &a));
  EXPECT_FALSE(DecodeAll(ArgsWriter()
                             .Dirop(MakeFh(5, 10), "l")
                             .Sattr(s)
                             .Str(std::string(kMaxPathLen + 1, 'p'))
                             .bytes(),
                         &a));
}

TEST(Nfs3ArgsTest, MknodDevice) {
  for (uint32_t type : {NF3CHR, NF3BLK}) {
    sattr3 s = FullSattr();
    std::string wire =
        ArgsWriter().Dirop(MakeFh(6, 8), "dev").U32(type).Sattr(s).U32(8).U32(1).bytes();
    MKNOD3args a;
    ASSERT_TRUE(DecodeAll(wire, &a));
    EXPECT_EQ(a.type, type);
    ExpectSattrEq(a.dev_attributes, s);
    EXPECT_EQ(a.spec.specdata1, 8u);
    EXPECT_EQ(a.spec.specdata2, 1u);
  }
}

TEST(Nfs3ArgsTest, MknodPipe) {
  for (uint32_t type : {NF3SOCK, NF3FIFO}) {
    sattr3 s;
    s.mode = 0600;
    std::string wire = ArgsWriter().Dirop(MakeFh(6, 8), "p").U32(type).Sattr(s).bytes();
    MKNOD3args a;
    ASSERT_TRUE(DecodeAll(wire, &a));
    EXPECT_EQ(a.type, type);
    ExpectSattrEq(a.pipe_attributes, s);
  }
}

TEST(Nfs3ArgsTest, MknodVoidArms) {
  for (uint32_t type : {NF3REG, NF3DIR, NF3LNK}) {
    MKNOD3args a;
    ASSERT_TRUE(DecodeAll(ArgsWriter().Dirop(MakeFh(6, 8), "r").U32(type).bytes(), &a));
    EXPECT_EQ(a.type, type);
  }
}

TEST(Nfs3ArgsTest, RemoveRmdir) {
  REMOVE3args a;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Dirop(MakeFh(7, 9), "gone").bytes(), &a));
  EXPECT_TRUE(FhEq(a.object.dir, MakeFh(7, 9)));
  EXPECT_EQ(a.object.name, "gone");
  RMDIR3args r;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Dirop(MakeFh(7, 9), "d").bytes(), &r));
  EXPECT_EQ(r.object.name, "d");
}

TEST(Nfs3ArgsTest, Rename) {
  RENAME3args a;
  ASSERT_TRUE(
      DecodeAll(ArgsWriter().Dirop(MakeFh(1, 5), "from").Dirop(MakeFh(2, 6), "to").bytes(), &a));
  EXPECT_TRUE(FhEq(a.from.dir, MakeFh(1, 5)));
  EXPECT_EQ(a.from.name, "from");
  EXPECT_TRUE(FhEq(a.to.dir, MakeFh(2, 6)));
  EXPECT_EQ(a.to.name, "to");
}

TEST(Nfs3ArgsTest, Link) {
  LINK3args a;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Fh(MakeFh(1, 5)).Dirop(MakeFh(2, 6), "hard").bytes(), &a));
  EXPECT_TRUE(FhEq(a.file, MakeFh(1, 5)));
  EXPECT_TRUE(FhEq(a.link.dir, MakeFh(2, 6)));
  EXPECT_EQ(a.link.name, "hard");
}

TEST(Nfs3ArgsTest, Readdir) {
  const uint8_t verf[8] = {9, 8, 7, 6, 5, 4, 3, 2};
  READDIR3args a;
  ASSERT_TRUE(
      DecodeAll(ArgsWriter().Fh(MakeFh(1, 5)).U64(42).Fixed(verf, 8).U32(4096).bytes(), &a));
  EXPECT_EQ(a.cookie, 42u);
  EXPECT_TRUE(std::equal(verf, verf + 8, a.cookieverf));
  EXPECT_EQ(a.count, 4096u);
}

TEST(Nfs3ArgsTest, Readdirplus) {
  const uint8_t verf[8] = {1, 1, 2, 3, 5, 8, 13, 21};
  READDIRPLUS3args a;
  ASSERT_TRUE(DecodeAll(
      ArgsWriter().Fh(MakeFh(1, 5)).U64(43).Fixed(verf, 8).U32(1024).U32(32768).bytes(), &a));
  EXPECT_EQ(a.cookie, 43u);
  EXPECT_TRUE(std::equal(verf, verf + 8, a.cookieverf));
  EXPECT_EQ(a.dircount, 1024u);
  EXPECT_EQ(a.maxcount, 32768u);
}

TEST(Nfs3ArgsTest, Commit) {
  COMMIT3args a;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Fh(MakeFh(1, 5)).U64(1ull << 33).U32(0).bytes(), &a));
  EXPECT_EQ(a.offset, 1ull << 33);
  EXPECT_EQ(a.count, 0u);
}

// ================= Malformed args =================

TEST(Nfs3MalformedTest, TruncatedWrite) {
  ExpectEveryTruncationFails<WRITE3args>(
      ArgsWriter().Fh(MakeFh(2, 13)).U64(1).U32(5).U32(FILE_SYNC).Str("hello").bytes());
}

TEST(Nfs3MalformedTest, TruncatedCreate) {
  ExpectEveryTruncationFails<CREATE3args>(
      ArgsWriter().Dirop(MakeFh(2, 13), "abcde").U32(GUARDED).Sattr(FullSattr()).bytes());
  const uint8_t verf[8] = {};
  ExpectEveryTruncationFails<CREATE3args>(
      ArgsWriter().Dirop(MakeFh(2, 13), "abc").U32(EXCLUSIVE).Fixed(verf, 8).bytes());
}

TEST(Nfs3MalformedTest, TruncatedSetattr) {
  ExpectEveryTruncationFails<SETATTR3args>(
      ArgsWriter().Fh(MakeFh(2, 13)).Sattr(FullSattr()).U32(1).Time({1, 2}).bytes());
  ExpectEveryTruncationFails<SETATTR3args>(
      ArgsWriter().Fh(MakeFh(2, 13)).Sattr(sattr3{}).U32(0).bytes());
}

TEST(Nfs3MalformedTest, TruncatedMknod) {
  ExpectEveryTruncationFails<MKNOD3args>(ArgsWriter()
                                             .Dirop(MakeFh(2, 13), "dev")
                                             .U32(NF3CHR)
                                             .Sattr(FullSattr())
                                             .U32(1)
                                             .U32(2)
                                             .bytes());
  ExpectEveryTruncationFails<MKNOD3args>(
      ArgsWriter().Dirop(MakeFh(2, 13), "fifo").U32(NF3FIFO).Sattr(FullSattr()).bytes());
}

TEST(Nfs3MalformedTest, TruncatedOthers) {
  ExpectEveryTruncationFails<RENAME3args>(
      ArgsWriter().Dirop(MakeFh(1, 5), "from").Dirop(MakeFh(2, 6), "to").bytes());
  ExpectEveryTruncationFails<LINK3args>(
      ArgsWriter().Fh(MakeFh(1, 5)).Dirop(MakeFh(2, 6), "hard").bytes());
  const uint8_t verf[8] = {};
  ExpectEveryTruncationFails<READDIRPLUS3args>(
      ArgsWriter().Fh(MakeFh(1, 5)).U64(43).Fixed(verf, 8).U32(1024).U32(32768).bytes());
  ExpectEveryTruncationFails<SYMLINK3args>(
      ArgsWriter().Dirop(MakeFh(5, 10), "lnk").Sattr(FullSattr()).Str("tgt").bytes());
  ExpectEveryTruncationFails<COMMIT3args>(ArgsWriter().Fh(MakeFh(1, 5)).U64(1).U32(2).bytes());
}

TEST(Nfs3MalformedTest, BadStableHow) {
  EXPECT_FALSE(
      DecodeOk<WRITE3args>(ArgsWriter().Fh(MakeFh(2, 4)).U64(0).U32(1).U32(3).Str("x").bytes()));
  EXPECT_FALSE(DecodeOk<WRITE3args>(
      ArgsWriter().Fh(MakeFh(2, 4)).U64(0).U32(1).U32(0xffffffff).Str("x").bytes()));
}

TEST(Nfs3MalformedTest, BadCreateMode) {
  EXPECT_FALSE(
      DecodeOk<CREATE3args>(ArgsWriter().Dirop(MakeFh(2, 4), "f").U32(3).Sattr(sattr3{}).bytes()));
}

TEST(Nfs3MalformedTest, BadTimeHow) {
  sattr3 s;
  std::string good = ArgsWriter().Fh(MakeFh(2, 4)).Sattr(s).U32(0).bytes();
  ASSERT_TRUE(DecodeOk<SETATTR3args>(good));
  // atime's time_how is the word after 4 FALSE set_* discriminants.
  std::string bad =
      ArgsWriter().Fh(MakeFh(2, 4)).U32(0).U32(0).U32(0).U32(0).U32(3).U32(0).U32(0).bytes();
  EXPECT_FALSE(DecodeOk<SETATTR3args>(bad));
  bad = ArgsWriter().Fh(MakeFh(2, 4)).U32(0).U32(0).U32(0).U32(0).U32(0).U32(7).U32(0).bytes();
  EXPECT_FALSE(DecodeOk<SETATTR3args>(bad));
}

TEST(Nfs3MalformedTest, BadBoolInSattr) {
  std::string bad = ArgsWriter()
                        .Fh(MakeFh(2, 4))
                        .U32(2)
                        .U32(0644)
                        .U32(0)
                        .U32(0)
                        .U32(0)
                        .U32(0)
                        .U32(0)
                        .U32(0)
                        .bytes();
  EXPECT_FALSE(DecodeOk<SETATTR3args>(bad));
  // Guard discriminant that is not a bool.
  bad = ArgsWriter().Fh(MakeFh(2, 4)).Sattr(sattr3{}).U32(5).Time({1, 1}).bytes();
  EXPECT_FALSE(DecodeOk<SETATTR3args>(bad));
}

TEST(Nfs3MalformedTest, BadMknodType) {
  for (uint32_t type : {0u, 8u, 0xffffffffu}) {
    EXPECT_FALSE(DecodeOk<MKNOD3args>(
        ArgsWriter().Dirop(MakeFh(2, 4), "x").U32(type).Sattr(sattr3{}).bytes()))
        << type;
  }
}

TEST(Nfs3MalformedTest, OversizeHandle) {
  // 65-byte handle: written by hand since nfs_fh3 cannot hold it.
  ArgsWriter w;
  w.Str(std::string(65, 'h'));
  std::string wire = w.bytes();
  EXPECT_FALSE(DecodeOk<GETATTR3args>(wire));
  EXPECT_FALSE(DecodeOk<LOOKUP3args>(wire + ArgsWriter().Str("n").bytes()));
  EXPECT_FALSE(DecodeOk<GETATTR3args>(ArgsWriter().U32(0xffffffff).bytes()));
}

TEST(Nfs3MalformedTest, NameLengths) {
  // Names over NAME_MAX but within the path limit decode, so the procedure
  // can answer NFS3ERR_NAMETOOLONG (see nfs3_codec.cc).
  LOOKUP3args a;
  ASSERT_TRUE(DecodeAll(ArgsWriter().Dirop(MakeFh(1, 4), std::string(256, 'n')).bytes(), &a));
  EXPECT_EQ(a.what.name.size(), 256u);
  EXPECT_GT(a.what.name.size(), kMaxNameLen);
  ASSERT_TRUE(
      DecodeAll(ArgsWriter().Dirop(MakeFh(1, 4), std::string(kMaxPathLen, 'n')).bytes(), &a));
  // Beyond that it is garbage.
  EXPECT_FALSE(DecodeOk<LOOKUP3args>(
      ArgsWriter().Dirop(MakeFh(1, 4), std::string(kMaxPathLen + 1, 'n')).bytes()));
  // A length word claiming more bytes than present.
  EXPECT_FALSE(DecodeOk<LOOKUP3args>(ArgsWriter().Fh(MakeFh(1, 4)).U32(100).U32(0).bytes()));
}

TEST(Nfs3MalformedTest, WriteDataOverLimit) {
  // Length word above kMaxData: rejected before any bytes are examined.
  EXPECT_FALSE(DecodeOk<WRITE3args>(
      ArgsWriter().Fh(MakeFh(2, 4)).U64(0).U32(kMaxData + 1).U32(0).U32(kMaxData + 1).bytes()));
}

TEST(Nfs3MalformedTest, GarbageNeverCrashes) {
  // A cheap deterministic fuzz pass; the libFuzzer target goes further.
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1103515245 + 12345;
    return static_cast<uint8_t>(state >> 16);
  };
  for (int iter = 0; iter < 2000; ++iter) {
    std::string wire(next() % 200, '\0');
    for (char& c : wire) {
      uint8_t b = next();
      c = static_cast<char>(b < 160 ? 0 : b);  // mostly zeros: small lengths, valid enums
    }
    DecodeOk<SETATTR3args>(wire);
    DecodeOk<WRITE3args>(wire);
    DecodeOk<CREATE3args>(wire);
    DecodeOk<MKNOD3args>(wire);
    DecodeOk<SYMLINK3args>(wire);
    DecodeOk<RENAME3args>(wire);
    DecodeOk<READDIRPLUS3args>(wire);
  }
}

// ================= Results =================

TEST(Nfs3ResultTest, GetattrOkExactBytes) {
  GETATTR3res r;
  r.status = NFS3_OK;
  r.obj_attributes.type = NF3REG;
  r.obj_attributes.mode = 0644;
  r.obj_attributes.nlink = 1;
  r.obj_attributes.uid = 1000;
  r.obj_attributes.gid = 100;
  r.obj_attributes.size = 0x0000000100000002ull;
  r.obj_attributes.used = 4096;
  r.obj_attributes.rdev = {0, 0};
  r.obj_attributes.fsid = 7;
  r.obj_attributes.fileid = 0x1122334455667788ull;
  r.obj_attributes.atime = {1, 2};
  r.obj_attributes.mtime = {3, 4};
  r.obj_attributes.ctime = {5, 6};
  std::string wire = EncodeToString(r);
  EXPECT_EQ(Hex(wire),
            "00000000"            // status NFS3_OK
            "00000001"            // type NF3REG
            "000001a4"            // mode 0644
            "00000001"            // nlink
            "000003e8"            // uid 1000
            "00000064"            // gid 100
            "0000000100000002"    // size
            "0000000000001000"    // used
            "0000000000000000"    // rdev
            "0000000000000007"    // fsid
            "1122334455667788"    // fileid
            "0000000100000002"    // atime
            "0000000300000004"    // mtime
            "0000000500000006");  // ctime
  EXPECT_EQ(wire.size(), 88u);

  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  ExpectAttrEq(rd.Attr(), r.obj_attributes);
  EXPECT_TRUE(rd.AtEnd());
}

TEST(Nfs3ResultTest, GetattrFailIsStatusOnly) {
  GETATTR3res r;
  r.status = NFS3ERR_STALE;
  EXPECT_EQ(Hex(EncodeToString(r)), "00000046");
}

TEST(Nfs3ResultTest, LookupFailExactBytes) {
  LOOKUP3res r;
  r.status = NFS3ERR_NOENT;
  r.object = MakeFh(1, 8);         // must not be sent
  r.obj_attributes = MakeAttr(1);  // must not be sent
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000002"
            "00000000");
  r.dir_attributes = MakeAttr(2);
  std::string wire = EncodeToString(r);
  EXPECT_EQ(wire.size(), 4 + 4 + 84u);
  EXPECT_EQ(Hex(wire.substr(0, 8)),
            "00000002"
            "00000001");
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3ERR_NOENT);
  ExpectPostOpEq(rd.PostOp(), r.dir_attributes);
  EXPECT_TRUE(rd.AtEnd());
}

TEST(Nfs3ResultTest, LookupOk) {
  LOOKUP3res r;
  r.object = MakeFh(10, 6);
  r.obj_attributes = MakeAttr(4);
  r.dir_attributes = std::nullopt;
  std::string wire = EncodeToString(r);
  EXPECT_EQ(Hex(wire.substr(0, 16)),
            "00000000"
            "00000006"
            "0a0b0c0d0e0f0000");
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  EXPECT_TRUE(FhEq(rd.Fh(), r.object));
  ExpectPostOpEq(rd.PostOp(), r.obj_attributes);
  EXPECT_FALSE(rd.PostOp().has_value());
  EXPECT_TRUE(rd.AtEnd());
}

TEST(Nfs3ResultTest, WriteOkAndFail) {
  WRITE3res r;
  r.file_wcc = MakeWcc();
  r.count = 4096;
  r.committed = FILE_SYNC;
  for (int i = 0; i < 8; ++i) r.verf[i] = static_cast<uint8_t>(0xa0 + i);
  std::string wire = EncodeToString(r);
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  ExpectWccEq(rd.Wcc(), r.file_wcc);
  EXPECT_EQ(rd.U32(), 4096u);
  EXPECT_EQ(rd.U32(), FILE_SYNC);
  EXPECT_EQ(Hex(std::string(reinterpret_cast<const char*>(rd.d().FixedOpaque(8).data()), 8)),
            "a0a1a2a3a4a5a6a7");
  EXPECT_TRUE(rd.AtEnd());
  EXPECT_EQ(wire.size(), 4 + (4 + 24) + (4 + 84) + 4 + 4 + 8u);

  r.status = NFS3ERR_NOSPC;
  r.file_wcc = wcc_data{};
  EXPECT_EQ(Hex(EncodeToString(r)),
            "0000001c"
            "00000000"
            "00000000");
}

TEST(Nfs3ResultTest, FsinfoOkAndFail) {
  FSINFO3res r;
  r.obj_attributes = MakeAttr(0);
  r.rtmax = 1 << 20;
  r.rtpref = 1 << 17;
  r.rtmult = 4096;
  r.wtmax = 1 << 20;
  r.wtpref = 1 << 17;
  r.wtmult = 4096;
  r.dtpref = 8192;
  r.maxfilesize = ~0ull;
  r.time_delta = {0, 1};
  r.properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
  std::string wire = EncodeToString(r);
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  ExpectPostOpEq(rd.PostOp(), r.obj_attributes);
  EXPECT_EQ(rd.U32(), r.rtmax);
  EXPECT_EQ(rd.U32(), r.rtpref);
  EXPECT_EQ(rd.U32(), r.rtmult);
  EXPECT_EQ(rd.U32(), r.wtmax);
  EXPECT_EQ(rd.U32(), r.wtpref);
  EXPECT_EQ(rd.U32(), r.wtmult);
  EXPECT_EQ(rd.U32(), r.dtpref);
  EXPECT_EQ(rd.U64(), r.maxfilesize);
  nfstime3 t = rd.Time();
  EXPECT_EQ(t.seconds, 0u);
  EXPECT_EQ(t.nseconds, 1u);
  EXPECT_EQ(rd.U32(), 0x1bu);
  EXPECT_TRUE(rd.AtEnd());

  r.status = NFS3ERR_STALE;
  r.obj_attributes = std::nullopt;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000046"
            "00000000");
}

TEST(Nfs3ResultTest, ReaddirplusRoundTrip) {
  READDIRPLUS3res r;
  r.dir_attributes = MakeAttr(1);
  for (int i = 0; i < 8; ++i) r.cookieverf[i] = static_cast<uint8_t>(i + 1);
  entryplus3 a{11, ".", 1, MakeAttr(2), MakeFh(1, 16)};
  entryplus3 b{12, "no-attrs-or-handle", 2, std::nullopt, std::nullopt};
  entryplus3 c{13, "abcde", 3, std::nullopt, MakeFh(2, 5)};
  r.entries = {a, b, c};
  r.eof = true;
  std::string wire = EncodeToString(r);

  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  ExpectPostOpEq(rd.PostOp(), r.dir_attributes);
  EXPECT_EQ(Hex(std::string(reinterpret_cast<const char*>(rd.d().FixedOpaque(8).data()), 8)),
            "0102030405060708");
  for (const entryplus3& want : r.entries) {
    ASSERT_TRUE(rd.Bool());
    EXPECT_EQ(rd.U64(), want.fileid);
    EXPECT_EQ(rd.Str(), want.name);
    EXPECT_EQ(rd.U64(), want.cookie);
    ExpectPostOpEq(rd.PostOp(), want.name_attributes);
    post_op_fh3 fh = rd.PostOpFh();
    ASSERT_EQ(fh.has_value(), want.name_handle.has_value());
    if (fh) {
      EXPECT_TRUE(FhEq(*fh, *want.name_handle));
    }
  }
  EXPECT_FALSE(rd.Bool());
  EXPECT_TRUE(rd.Bool());  // eof
  EXPECT_TRUE(rd.AtEnd());
}

TEST(Nfs3ResultTest, ReaddirplusFailIsDirAttributesOnly) {
  READDIRPLUS3res r;
  r.status = NFS3ERR_BAD_COOKIE;
  r.entries.push_back(entryplus3{1, "x", 1, std::nullopt, std::nullopt});
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00002713"
            "00000000");
}

TEST(Nfs3ResultTest, ReaddirLayout) {
  READDIR3res r;
  r.entries.push_back(entry3{5, "ab", 100});
  r.eof = false;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000000"          // status
            "00000000"          // no dir attributes
            "0000000000000000"  // cookieverf
            "00000001"          // value_follows
            "0000000000000005"  // fileid
            "00000002"
            "61620000"
            "0000000000000064"  // cookie
            "00000000"          // end of list
            "00000000");        // eof
  r.status = NFS3ERR_NOTDIR;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000014"
            "00000000");
}

// READDIR sizing: an encoded successful reply is exactly
// ReaddirReplyOverhead(dir_attributes) + sum(EncodedSize(entry)); the
// overhead includes the status word.
TEST(Nfs3SizeTest, ReaddirSizeIsExact) {
  for (bool with_attrs : {false, true}) {
    READDIR3res r;
    if (with_attrs) r.dir_attributes = MakeAttr(1);
    size_t expected = ReaddirReplyOverhead(r.dir_attributes);
    EXPECT_EQ(EncodeToString(r).size(), expected);  // empty directory
    for (size_t len = 0; len < 12; ++len) {
      entry3 e{len, std::string(len, 'x'), len * 7};
      expected += EncodedSize(e);
      r.entries.push_back(e);
      EXPECT_EQ(EncodeToString(r).size(), expected) << len;
    }
  }
  EXPECT_EQ(ReaddirReplyOverhead(std::nullopt), 4 + 4 + 8 + 4 + 4u);
  EXPECT_EQ(ReaddirReplyOverhead(MakeAttr(0)), 4 + 88 + 8 + 4 + 4u);
  EXPECT_EQ(EncodedSize(entry3{1, "abc", 2}), 4 + 8 + 4 + 4 + 8u);
}

TEST(Nfs3SizeTest, ReaddirplusSizeIsExact) {
  for (bool with_attrs : {false, true}) {
    READDIRPLUS3res r;
    if (with_attrs) r.dir_attributes = MakeAttr(1);
    size_t expected = ReaddirReplyOverhead(r.dir_attributes);
    EXPECT_EQ(EncodeToString(r).size(), expected);
    for (size_t i = 0; i < 24; ++i) {
      entryplus3 e;
      e.fileid = i;
      e.name = std::string(i % 9, 'y');
      e.cookie = i + 1;
      if (i % 2) e.name_attributes = MakeAttr(static_cast<uint32_t>(i));
      if (i % 3) e.name_handle = MakeFh(static_cast<uint8_t>(i), static_cast<uint8_t>(i * 3 % 65));
      expected += EncodedSize(e);
      r.entries.push_back(e);
      EXPECT_EQ(EncodeToString(r).size(), expected) << i;
    }
  }
}

TEST(Nfs3SizeTest, DircountSize) {
  entryplus3 e{1, "hello", 2, MakeAttr(0), MakeFh(0, 32)};
  EXPECT_EQ(DircountSize(e), 8 + 4 + 8 + 8u);  // fileid + name + cookie
  EXPECT_EQ(EncodedSize(e), 4 + DircountSize(e) + 88 + 4 + 4 + 32u);
}

// Remaining result encoders: layout by a test-side reader.

TEST(Nfs3ResultTest, SetattrRemoveBothArmsCarryWcc) {
  SETATTR3res s;
  s.obj_wcc = MakeWcc();
  for (nfsstat3 st : {NFS3_OK, NFS3ERR_NOT_SYNC}) {
    s.status = st;
    std::string wire = EncodeToString(s);
    ResReader rd(wire);
    EXPECT_EQ(rd.U32(), st);
    ExpectWccEq(rd.Wcc(), s.obj_wcc);
    EXPECT_TRUE(rd.AtEnd());
  }
  REMOVE3res rm;
  rm.status = NFS3ERR_NOENT;
  rm.dir_wcc.after = MakeAttr(1);
  std::string wire = EncodeToString(rm);
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3ERR_NOENT);
  ExpectWccEq(rd.Wcc(), rm.dir_wcc);
  EXPECT_TRUE(rd.AtEnd());
}

TEST(Nfs3ResultTest, Access) {
  ACCESS3res r;
  r.obj_attributes = MakeAttr(1);
  r.access = ACCESS3_READ | ACCESS3_LOOKUP;
  std::string wire = EncodeToString(r);
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  ExpectPostOpEq(rd.PostOp(), r.obj_attributes);
  EXPECT_EQ(rd.U32(), 3u);
  EXPECT_TRUE(rd.AtEnd());
  r.status = NFS3ERR_ACCES;
  r.obj_attributes.reset();
  EXPECT_EQ(Hex(EncodeToString(r)),
            "0000000d"
            "00000000");
}

TEST(Nfs3ResultTest, Readlink) {
  READLINK3res r;
  r.data = "/a/b";
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000000"
            "00000000"
            "00000004"
            "2f612f62");
  r.status = NFS3ERR_INVAL;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000016"
            "00000000");
}

TEST(Nfs3ResultTest, ReadPieces) {
  BufferChain chain;
  Encoder e(&chain);
  e.U32(NFS3_OK);
  EncodeReadHead(e, READ3resok_head{std::nullopt, 3, true});
  uint8_t* p = e.ReserveOpaque(16);
  std::memcpy(p, "abc", 3);
  e.CommitOpaque(3);
  EXPECT_EQ(Hex(chain.Flatten()),
            "00000000"
            "00000000"
            "00000003"
            "00000001"
            "00000003"
            "61626300");
  BufferChain fail;
  Encoder f(&fail);
  EncodeReadFail(f, NFS3ERR_IO, std::nullopt);
  EXPECT_EQ(Hex(fail.Flatten()),
            "00000005"
            "00000000");
}

TEST(Nfs3ResultTest, Diropres) {
  diropres3 r;
  r.obj = MakeFh(1, 4);
  r.obj_attributes = MakeAttr(1);
  r.dir_wcc = MakeWcc();
  std::string wire = EncodeToString(r);
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  post_op_fh3 fh = rd.PostOpFh();
  ASSERT_TRUE(fh.has_value());
  EXPECT_TRUE(FhEq(*fh, *r.obj));
  ExpectPostOpEq(rd.PostOp(), r.obj_attributes);
  ExpectWccEq(rd.Wcc(), r.dir_wcc);
  EXPECT_TRUE(rd.AtEnd());

  r.status = NFS3ERR_EXIST;
  r.dir_wcc = wcc_data{};
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000011"
            "00000000"
            "00000000");
  r.status = NFS3_OK;
  r.obj.reset();
  r.obj_attributes.reset();
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000000"
            "00000000"
            "00000000"
            "00000000"
            "00000000");
}

TEST(Nfs3ResultTest, RenameAndLink) {
  RENAME3res rn;
  rn.status = NFS3ERR_XDEV;
  EXPECT_EQ(Hex(EncodeToString(rn)),
            "00000012"
            "00000000"
            "00000000"
            "00000000"
            "00000000");
  LINK3res ln;
  ln.file_attributes = MakeAttr(1);
  ln.linkdir_wcc = MakeWcc();
  std::string wire = EncodeToString(ln);
  ResReader rd(wire);
  EXPECT_EQ(rd.U32(), NFS3_OK);
  ExpectPostOpEq(rd.PostOp(), ln.file_attributes);
  ExpectWccEq(rd.Wcc(), ln.linkdir_wcc);
  EXPECT_TRUE(rd.AtEnd());
}

TEST(Nfs3ResultTest, Fsstat) {
  FSSTAT3res r;
  r.tbytes = 1;
  r.fbytes = 2;
  r.abytes = 3;
  r.tfiles = 4;
  r.ffiles = 5;
  r.afiles = 6;
  r.invarsec = 7;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000000"
            "00000000"
            "0000000000000001"
            "0000000000000002"
            "0000000000000003"
            "0000000000000004"
            "0000000000000005"
            "0000000000000006"
            "00000007");
  r.status = NFS3ERR_IO;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000005"
            "00000000");
}

TEST(Nfs3ResultTest, Pathconf) {
  PATHCONF3res r;
  r.linkmax = 32000;
  r.name_max = 255;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000000"
            "00000000"
            "00007d00"
            "000000ff"
            "00000001"
            "00000001"
            "00000000"
            "00000001");
  r.status = NFS3ERR_STALE;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000046"
            "00000000");
}

TEST(Nfs3ResultTest, Commit) {
  COMMIT3res r;
  for (int i = 0; i < 8; ++i) r.verf[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000000"
            "00000000"
            "00000000"
            "0001020304050607");
  r.status = NFS3ERR_IO;
  EXPECT_EQ(Hex(EncodeToString(r)),
            "00000005"
            "00000000"
            "00000000");
}

TEST(Nfs3ResultTest, WccPreOpLayout) {
  wcc_data w;
  w.before = wcc_attr{0x10, {1, 2}, {3, 4}};
  EXPECT_EQ(Hex(EncodeToString(w)),
            "00000001"
            "0000000000000010"
            "0000000100000002"
            "0000000300000004"
            "00000000");
}

}  // namespace
}  // namespace nfs3d::nfs3
