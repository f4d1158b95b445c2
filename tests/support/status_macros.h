// gtest helpers for absl::StatusOr. Header-only.
#ifndef NFS3D_TESTS_SUPPORT_STATUS_MACROS_H_
#define NFS3D_TESTS_SUPPORT_STATUS_MACROS_H_

#include <utility>

// Declares `lhs` as the value of `expr` (a StatusOr), or fails the test with
// its status.
#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

#endif  // NFS3D_TESTS_SUPPORT_STATUS_MACROS_H_
