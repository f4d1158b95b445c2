// Paths of this checkout and of the programs this build tree made, for tests
// that start them or read the checkout's files. They live in one source
// generated per build tree (tests/CMakeLists.txt), not in a -D on each test:
// a test's object is then the same in every tree and every checkout (the
// full tree, the quick start's bare one, CI's clone), so another tree takes
// it from ccache instead of compiling it again.
#ifndef NFS3D_TESTS_SUPPORT_BUILD_PATHS_H_
#define NFS3D_TESTS_SUPPORT_BUILD_PATHS_H_

namespace nfs3d::test_support {

// The top of the checkout the tree was configured from.
const char* SourceDir();
// The programs: the nfs3d daemon, nfs3stat, and the NLM test client.
const char* Nfs3dBinary();
const char* Nfs3statBinary();
const char* NlmLockTool();

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_BUILD_PATHS_H_
