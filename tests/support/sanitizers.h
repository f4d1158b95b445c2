// Whether this build runs under AddressSanitizer, with gcc
// (__SANITIZE_ADDRESS__) or clang (__has_feature): tests that look at glibc's
// malloc or time the server skip or relax under it.
#ifndef NFS3D_TESTS_SUPPORT_SANITIZERS_H_
#define NFS3D_TESTS_SUPPORT_SANITIZERS_H_

namespace nfs3d::test_support {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_SANITIZERS_H_
