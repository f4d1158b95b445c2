#include "vfs/cephfs/malloc_settings.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

#include "tests/support/sanitizers.h"

namespace nfs3d::vfs {
namespace {

TEST(MallocLimitsTest, OneMebibyteTransfersOnTwoCores) {
  const MallocLimits limits = MallocLimitsFor(1 << 20, 2);
  EXPECT_EQ(limits.mmap_threshold, 8u << 20);
  EXPECT_EQ(limits.trim_threshold, 32u << 20);
  EXPECT_EQ(limits.arena_max, 2);
}

TEST(MallocLimitsTest, ThresholdsStayWithinGlibcsRange) {
  EXPECT_EQ(MallocLimitsFor(4096, 2).mmap_threshold, 128u << 10);
  EXPECT_EQ(MallocLimitsFor(16 << 20, 2).mmap_threshold, 32u << 20);
  EXPECT_EQ(MallocLimitsFor(1, 2).trim_threshold, 1u << 20);
  // A transfer always fits below the mmap threshold, so it is reused.
  for (size_t transfer : {size_t{4096}, size_t{64} << 10, size_t{1} << 20, size_t{4} << 20}) {
    EXPECT_GT(MallocLimitsFor(transfer, 4).mmap_threshold, transfer);
  }
}

TEST(MallocLimitsTest, ArenasAreBoundedWhateverTheCores) {
  EXPECT_EQ(MallocLimitsFor(1 << 20, 1).arena_max, 2);
  EXPECT_EQ(MallocLimitsFor(1 << 20, 4).arena_max, 4);
  EXPECT_EQ(MallocLimitsFor(1 << 20, 128).arena_max, 8);
}

TEST(MallocLimitsTest, AdministratorsTunablesWin) {
  EXPECT_FALSE(TunablesSetMalloc(nullptr));
  EXPECT_FALSE(TunablesSetMalloc(""));
  EXPECT_FALSE(TunablesSetMalloc("glibc.pthread.rseq=0"));
  EXPECT_TRUE(TunablesSetMalloc("glibc.malloc.arena_max=4"));
  EXPECT_TRUE(TunablesSetMalloc("glibc.pthread.rseq=0:glibc.malloc.trim_threshold=1"));
}

// After the settings, a 1 MiB block comes from an arena (no mmap), a block
// past the threshold is still mmap'ed and unmapped on free.
TEST(MallocSettingsTest, TransferSizedBlocksStayInTheArenas) {
  if (test_support::kAddressSanitizer) {
    // ASan's allocator replaces glibc's: mallopt and mallinfo2 say nothing
    // about it. The plain build runs this test.
    GTEST_SKIP() << "AddressSanitizer replaces glibc malloc; checked in the plain build";
  }
  if (TunablesSetMalloc(std::getenv("GLIBC_TUNABLES")))
    GTEST_SKIP() << "GLIBC_TUNABLES sets malloc";
  KeepWriteBuffersInMallocArenas();
  const size_t mapped_before = mallinfo2().hblks;
  void* transfer = std::malloc(1 << 20);
  ASSERT_NE(transfer, nullptr);
  std::memset(transfer, 1, 1 << 20);
  EXPECT_EQ(mallinfo2().hblks, mapped_before);
  void* huge = std::malloc(16 << 20);
  ASSERT_NE(huge, nullptr);
  EXPECT_EQ(mallinfo2().hblks, mapped_before + 1);
  std::free(huge);
  std::free(transfer);
  EXPECT_EQ(mallinfo2().hblks, mapped_before);
}

}  // namespace
}  // namespace nfs3d::vfs
