# Sourced by the build scripts: CCACHE_ARGS has the cmake arguments that
# compile through ccache when it is installed (scripts/install-deps.sh --test
# installs it), else nothing. Trees of one checkout share the cache, so a
# second configuration of the same sources (the quick start's, without the
# optional parts) costs its links, not a rebuild.
CCACHE_ARGS=()
if command -v ccache >/dev/null 2>&1; then
  CCACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths below the checkout are hashed relative to it.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO} CCACHE_NOHASHDIR=1
fi
