#!/bin/bash
# RPC-with-TLS benchmark (a benchmark, not a test): plain RPC, TLS and
# Kerberos krb5p (the other way to encrypt NFSv3 traffic) on the same nfs3d,
# the same tmpfs export and the same workloads (1 MiB WRITE and READ, 16 in
# flight; GETATTR, 32 in flight), run interleaved (plain, tls, krb5p, then
# again) so machine noise hits all alike. nfs3d, a throw-away KDC and
# nfs3bench run in a private network and mount namespace this script makes;
# nfs3bench --tls encrypts in user space at its end, and nfs3d uses kTLS
# where the kernel has it (else user space: its log says "kTLS
# unavailable"). One row per (workload, mode): median rate, its ratio to
# plain, server CPU per GB or per call, client CPU; then TLS against krb5p.
# Needs root.
#   bench/tls.sh [--nfs3d BIN] [--nfs3bench BIN] [--rounds N] [--time SEC]
#                [--workloads "write read getattr"] [--modes "plain tls krb5p"]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/bench/private_ns.sh" "$@"
. "$REPO/bench/one_server.sh"
MODES="plain tls krb5p"
while [ $# -gt 0 ]; do
  case $1 in
    --modes) MODES=$2 ;;
    *) bench_option "$1" "${2:-}" || { echo "usage: see the head of $0" >&2; exit 2; } ;;
  esac
  shift 2
done
bench_mode_args() {
  case $1 in
    tls) MODE_ARGS=(--tls "$D/certs/ca.pem") ;;
    krb5p) bench_krb5_args krb5p ;;
  esac
}

bench_server_setup tlsbench
"$REPO/tests/integration/tls_make_certs.sh" "$D/certs" >/dev/null
conf=$(printf '[tls]\ncertificate = %s\nkey = %s' "$D/certs/server.pem" "$D/certs/server.key")
sec=sys
if [[ " $MODES " == *" krb5p "* ]]; then
  bench_kdc_start
  conf+=$(printf '\n[kerberos]\nkeytab = %s\nprincipal = *' "$D/kdc/nfs.keytab")
  sec=sys:krb5p
fi
bench_server_start "rw,insecure,no_root_squash,sec=$sec" "$conf"

echo "# bench/tls.sh: $ROUNDS rounds x ${TIME}s, $(nproc) CPUs, $(uptime | sed 's/.*load/load/')"
echo "# nfs3d $NFS3D"
bench_rows "$MODES" | PYTHONPATH="$REPO/bench" python3 -c '
import sys
from mode_table import med, print_table, read_rows
rows = read_rows(sys.stdin)
print_table(rows, "mode", "plain")
print()
for (w, mode), runs in rows.items():
    krb5p = rows.get((w, "krb5p"))
    if mode != "tls" or not krb5p:
        continue
    rate = lambda r: r["MBps"] if w != "getattr" else r["calls_per_sec"]
    print("%s: TLS %.2fx krb5p" % (w, med(runs, rate) / med(krb5p, rate)))
'
grep -h "kTLS unavailable" "$D/nfs3d.log" | head -1 | sed 's/^/# /' || true
