#include "nfsd/nfs3_errors.h"

#include <cerrno>

#include "gtest/gtest.h"

#include "vfs/vfs_error.h"

namespace nfs3d::nfsd {
namespace {

using namespace nfs3;

TEST(Nfs3ErrorsTest, KernelErrnos) {
  EXPECT_EQ(ErrnoToNfsStat(0), NFS3_OK);
  EXPECT_EQ(ErrnoToNfsStat(EPERM), NFS3ERR_PERM);
  EXPECT_EQ(ErrnoToNfsStat(ENOENT), NFS3ERR_NOENT);
  EXPECT_EQ(ErrnoToNfsStat(EIO), NFS3ERR_IO);
  EXPECT_EQ(ErrnoToNfsStat(EACCES), NFS3ERR_ACCES);
  EXPECT_EQ(ErrnoToNfsStat(EEXIST), NFS3ERR_EXIST);
  EXPECT_EQ(ErrnoToNfsStat(EXDEV), NFS3ERR_XDEV);
  EXPECT_EQ(ErrnoToNfsStat(ENOTDIR), NFS3ERR_NOTDIR);
  EXPECT_EQ(ErrnoToNfsStat(EISDIR), NFS3ERR_ISDIR);
  EXPECT_EQ(ErrnoToNfsStat(EINVAL), NFS3ERR_INVAL);
  EXPECT_EQ(ErrnoToNfsStat(EFBIG), NFS3ERR_FBIG);
  EXPECT_EQ(ErrnoToNfsStat(ENOSPC), NFS3ERR_NOSPC);
  EXPECT_EQ(ErrnoToNfsStat(EROFS), NFS3ERR_ROFS);
  EXPECT_EQ(ErrnoToNfsStat(EMLINK), NFS3ERR_MLINK);
  EXPECT_EQ(ErrnoToNfsStat(ENAMETOOLONG), NFS3ERR_NAMETOOLONG);
  EXPECT_EQ(ErrnoToNfsStat(ENOTEMPTY), NFS3ERR_NOTEMPTY);
  EXPECT_EQ(ErrnoToNfsStat(EDQUOT), NFS3ERR_DQUOT);
  EXPECT_EQ(ErrnoToNfsStat(ESTALE), NFS3ERR_STALE);
  EXPECT_EQ(ErrnoToNfsStat(EOPNOTSUPP), NFS3ERR_NOTSUPP);
  EXPECT_EQ(ErrnoToNfsStat(EAGAIN), NFS3ERR_JUKEBOX);
  EXPECT_EQ(ErrnoToNfsStat(EWOULDBLOCK), NFS3ERR_JUKEBOX);
}

TEST(Nfs3ErrorsTest, PseudoErrnos) {
  EXPECT_EQ(ErrnoToNfsStat(vfs::kErrBadHandle), NFS3ERR_BADHANDLE);
  EXPECT_EQ(ErrnoToNfsStat(vfs::kErrNotSync), NFS3ERR_NOT_SYNC);
  EXPECT_EQ(ErrnoToNfsStat(vfs::kErrBadCookie), NFS3ERR_BAD_COOKIE);
  EXPECT_EQ(ErrnoToNfsStat(vfs::kErrTooSmall), NFS3ERR_TOOSMALL);
  EXPECT_EQ(ErrnoToNfsStat(vfs::kErrBadType), NFS3ERR_BADTYPE);
  EXPECT_EQ(ErrnoToNfsStat(vfs::kErrJukebox), NFS3ERR_JUKEBOX);
}

TEST(Nfs3ErrorsTest, UnknownErrors) {
  EXPECT_EQ(ErrnoToNfsStat(EHWPOISON), NFS3ERR_IO);
  EXPECT_EQ(ErrnoToNfsStat(10999), NFS3ERR_SERVERFAULT);
}

TEST(Nfs3ErrorsTest, FromStatus) {
  EXPECT_EQ(StatusToNfsStat(absl::OkStatus()), NFS3_OK);
  EXPECT_EQ(StatusToNfsStat(vfs::ErrnoError(ENOTEMPTY, "rmdir")), NFS3ERR_NOTEMPTY);
  EXPECT_EQ(StatusToNfsStat(vfs::ErrnoError(vfs::kErrBadHandle, "fh")), NFS3ERR_BADHANDLE);
  // A status without an errno is an I/O failure.
  EXPECT_EQ(StatusToNfsStat(absl::InternalError("x")), NFS3ERR_IO);
}

}  // namespace
}  // namespace nfs3d::nfsd
