#!/bin/bash
# Builds the Debian package from this checkout with Debian's own tools
# (dpkg-buildpackage -us -uc -b, debhelper 13) and checks it with lintian,
# which must report no errors and no warnings.
#   scripts/build-deb.sh [OUT_DIR]     (default build/deb)
# Then: apt install ./build/deb/nfs3d_*.deb
# The package is built from a copy of the tracked (and new, not ignored)
# files in OUT_DIR/src, so neither the checkout nor its parent directory gets
# build files.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$REPO/build/deb}" && cd "${1:-$REPO/build/deb}" && pwd)
SRC=$OUT/src

rm -rf "$SRC" "$OUT"/nfs3d_* "$OUT"/nfs3d-dbgsym_* "$OUT"/nfs3d-ceph_* "$OUT"/nfs3d-ceph-dbgsym_*
mkdir -p "$SRC"
git -C "$REPO" ls-files -z --cached --others --exclude-standard \
  | (cd "$REPO" && xargs -0 cp --parents -t "$SRC")
(cd "$SRC" && dpkg-buildpackage -us -uc -b -j"$(nproc)") > "$OUT/build.log" 2>&1 \
  || { tail -50 "$OUT/build.log" >&2; echo "build-deb: dpkg-buildpackage failed ($OUT/build.log)" >&2; exit 1; }
rm -rf "$SRC"

changes=$(ls "$OUT"/nfs3d_*.changes)
echo "build-deb: $(ls "$OUT"/*.deb | tr '\n' ' ')"
# Overrides, with their reasons, are in debian/nfs3d.lintian-overrides.
lintian --fail-on error,warning --info "$changes"
echo "build-deb: lintian: no errors, no warnings"
