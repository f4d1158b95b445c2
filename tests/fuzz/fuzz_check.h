// The invariant check of the stateful fuzz targets (a sequence of operations
// against a real class, checked against a small model): a broken invariant is
// printed with where it broke, then traps, so libFuzzer keeps the input.
#ifndef NFS3D_TESTS_FUZZ_FUZZ_CHECK_H_
#define NFS3D_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>

#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      __builtin_trap();                                                                 \
    }                                                                                   \
  } while (0)

#endif  // NFS3D_TESTS_FUZZ_FUZZ_CHECK_H_
