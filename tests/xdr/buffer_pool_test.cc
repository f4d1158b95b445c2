#include "xdr/buffer_pool.h"

#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::xdr {
namespace {

TEST(BlockPoolTest, BlocksComeBackAndAreReused) {
  BlockPool pool(4096, 2);
  uint8_t* first;
  {
    auto a = pool.Get();
    first = a.get();
    std::memset(a.get(), 0xab, pool.block_size());
    EXPECT_EQ(pool.free_blocks(), 0u);
  }
  EXPECT_EQ(pool.free_blocks(), 1u);
  auto b = pool.Get();
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(pool.free_blocks(), 0u);
}

TEST(BlockPoolTest, KeepsAtMostMaxFree) {
  BlockPool pool(1024, 2);
  {
    std::vector<std::shared_ptr<uint8_t[]>> held;
    for (int i = 0; i < 5; ++i) held.push_back(pool.Get());
  }
  EXPECT_EQ(pool.free_blocks(), 2u);
}

TEST(BlockPoolTest, ReturnedFromOtherThreads) {
  BlockPool pool(1024, 64);
  std::vector<std::shared_ptr<uint8_t[]>> held;
  for (int i = 0; i < 32; ++i) held.push_back(pool.Get());
  std::thread t([held = std::move(held)]() mutable { held.clear(); });
  t.join();
  EXPECT_EQ(pool.free_blocks(), 32u);
}

TEST(BlockPoolTest, ForReadFitsTheSize) {
  for (size_t size : {1u, 4096u, 65536u, 65537u, 1u << 20}) {
    auto b = BlockPool::ForRead(size);
    ASSERT_NE(b, nullptr);
    std::memset(b.get(), 1, size);  // ASan checks the block is big enough
  }
  auto huge = BlockPool::ForRead(3u << 20);
  std::memset(huge.get(), 1, 3u << 20);
}

TEST(VectorPoolTest, ReusesByCapacity) {
  VectorPool pool(1024, 4);
  std::vector<uint8_t> v(5000, 7);
  const uint8_t* data = v.data();
  pool.Put(std::move(v));
  EXPECT_EQ(pool.free_vectors(), 1u);
  std::vector<uint8_t> small_ask = pool.Get(2000);
  EXPECT_EQ(small_ask.size(), 5000u);  // keeps its size: no zero-fill to reuse it
  EXPECT_GE(small_ask.capacity(), 2000u);
  EXPECT_EQ(small_ask.data(), data);
  EXPECT_EQ(pool.free_vectors(), 0u);
  std::vector<uint8_t> fresh = pool.Get(100000);
  EXPECT_GE(fresh.capacity(), 100000u);
}

TEST(VectorPoolTest, SmallOnesAreNotKeptAndTheBoundHolds) {
  VectorPool pool(1024, 2);
  pool.Put(std::vector<uint8_t>(10));
  EXPECT_EQ(pool.free_vectors(), 0u);
  for (int i = 0; i < 5; ++i) pool.Put(std::vector<uint8_t>(2048));
  EXPECT_EQ(pool.free_vectors(), 2u);
}

TEST(VectorPoolTest, AFullPoolKeepsTheBiggerVectors) {
  VectorPool pool(1024, 2);
  pool.Put(std::vector<uint8_t>(2048));
  pool.Put(std::vector<uint8_t>(2048));
  std::vector<uint8_t> big(1 << 20, 1);
  const uint8_t* data = big.data();
  pool.Put(std::move(big));
  EXPECT_EQ(pool.free_vectors(), 2u);
  EXPECT_EQ(pool.Get(1 << 20).data(), data);  // reused, not allocated anew
}

}  // namespace
}  // namespace nfs3d::xdr
