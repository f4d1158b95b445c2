#!/bin/bash
# Says, one line per optional part, whether the build in BUILD_DIR has it and
# whether the tests will run it, and why. scripts/test.sh prints this before
# the tests, so no part is left out in silence.
# Usage: optional-parts.sh BUILD_DIR         print the lines
#        optional-parts.sh BUILD_DIR --check also exit 1 if a part whose
#                                            dependencies are installed is off
# Dependencies are looked up now, not read from the CMake cache: a build/
# configured before libcephfs-dev was installed keeps its old answer there.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${1:?usage: optional-parts.sh BUILD_DIR [--check]}
CHECK=0
[ "${2:-}" = --check ] && CHECK=1
CACHE=$BUILD_DIR/CMakeCache.txt
[ -f "$CACHE" ] || { echo "optional-parts: no $CACHE (configure first)" >&2; exit 2; }

cached() {  # cached NAME: the value of NAME in the CMake cache (empty if unset)
  sed -n "s/^$1:[A-Z]*=//p" "$CACHE" | head -1
}
on() { case "${1^^}" in ON | 1 | TRUE | YES | Y) return 0 ;; *) return 1 ;; esac; }

missing=0
line() { printf '  %-22s %s\n' "$1:" "$2"; }

echo "optional parts (build $BUILD_DIR):"

# The CephFS backend plugin (nfs3d loads it for cephfs= exports), its unit tests, the Ceph cluster tests (-L ceph) and the
# lab's CephFS tests.
cephfs_present=0
if [ -f /usr/include/cephfs/libcephfs.h ] && ldconfig -p 2>/dev/null | grep -q 'libcephfs\.so '; then
  cephfs_present=1
fi
if on "$(cached NFS3D_CEPHFS)"; then
  line "CephFS backend" "plugin built ($BUILD_DIR/plugins/backend-cephfs.so) and tested (NFS3D_CEPHFS=ON)"
elif [ $cephfs_present = 1 ]; then
  line "CephFS backend" "NOT built although libcephfs-dev is installed: reconfigure with -DNFS3D_CEPHFS=ON (scripts/build.sh does)"
  missing=1
else
  line "CephFS backend" "not built: libcephfs-dev is not installed (scripts/install-deps.sh --test installs it)"
fi

# RPCSEC_GSS is always built (libkrb5-dev is a build dependency); its
# end-to-end tests need a test KDC.
if command -v krb5kdc >/dev/null 2>&1 || [ -x /usr/sbin/krb5kdc ]; then
  line "Kerberos" "built; the krb5 tests run against a test KDC (krb5kdc)"
else
  line "Kerberos" "built; the krb5 tests will FAIL: no krb5kdc (scripts/install-deps.sh --test installs it)"
  missing=1
fi

# Tests with the real Linux client in the QEMU VM of ../shared/lab.
lab=${NFS_LAB:-$(cd "$REPO/.." && pwd)/shared/lab/nfs-lab}
if [ "${NFS3D_SKIP_LAB:-0}" = 1 ]; then
  line "lab VM tests" "not run: NFS3D_SKIP_LAB=1"
elif [ -x "$lab" ]; then
  line "lab VM tests" "run with $lab"
else
  line "lab VM tests" "not run: no lab at $lab (set NFS_LAB to its nfs-lab script)"
fi

if on "$(cached NFS3D_STATS)"; then
  line "statistics" "built (NFS3D_STATS=ON)"
else
  line "statistics" "compiled out (NFS3D_STATS=OFF): their tests check that they stay empty"
fi
if on "$(cached NFS3D_SANITIZE)"; then
  line "sanitizers" "this build runs under ASan+UBSan (NFS3D_SANITIZE=ON)"
else
  line "sanitizers" "not in this build; scripts/test-sanitize.sh runs the suite under them"
fi

if [ $CHECK = 1 ] && [ $missing = 1 ]; then
  echo "optional-parts: a part whose dependencies are installed is off (see above)" >&2
  exit 1
fi
exit 0
