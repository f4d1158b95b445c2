#!/bin/bash
# Fails if a source file includes a header of a layer above its own. The
# layers, lowest first (a folder may include its own and any lower folder):
#   common xdr stats rpc client vfs conf nlm nfsd daemon tools
# client/ is the RPC client (nlm calls clients back with it); nfsd/ holds the
# NFS side of locking (nfsd knows nlm, nlm does not know nfsd); daemon/
# assembles the process.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
LAYERS=(common xdr stats rpc client vfs conf nlm nfsd daemon tools)
declare -A rank
for i in "${!LAYERS[@]}"; do rank[${LAYERS[$i]}]=$i; done

bad=0
for dir in "${LAYERS[@]}"; do
  while IFS=: read -r file line text; do
    target=$(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' <<<"$text")
    [ -n "$target" ] && [ -n "${rank[$target]+x}" ] || continue
    if [ "${rank[$target]}" -gt "${rank[$dir]}" ]; then
      echo "$file:$line: $dir/ includes $target/, a layer above it: $text" >&2
      bad=1
    fi
  done < <(grep -rn --include='*.cc' --include='*.h' '^#include "' "$dir" || true)
done
[ $bad = 0 ] && echo "check-layers: no include runs up (${LAYERS[*]})"
exit $bad
