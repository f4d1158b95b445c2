#!/bin/bash
# Kerberos benchmark (a benchmark, not a test): what each RPCSEC_GSS
# service costs next to AUTH_SYS on the same nfs3d, the same tmpfs export and
# the same workloads, run interleaved (sys, krb5, krb5i, krb5p, then again)
# so machine noise hits all alike. A throw-away KDC (tests/fixtures/krb5-kdc.sh) and
# nfs3d run in a private network and mount namespace this script makes; the
# load client is nfs3bench with --sec. One row per (workload, flavor):
# median rate, its ratio to sys, server CPU per GB or per call, client CPU.
# Under the table, what the rows can reach here at most, from the crypto
# measured by bench/krb5_crypto_floor.cc: a bulk row when client and server
# share this machine's cores (the crypto that krb5i and krb5p add per GB at
# the two ends, on top of the server and client CPU of the sys row), and the
# krb5 GETATTR row when the server's CPU per call is the limit (its two
# MICs on top of the sys row's). Needs root.
#   bench/krb5.sh [--nfs3d BIN] [--nfs3bench BIN] [--rounds N] [--time SEC]
#                 [--floor BIN] [--workloads "write read getattr"]
#                 [--flavors "sys krb5 krb5i krb5p"]
#   env: NFS3D_KRB5_GSSAPI=1 makes both ends use MIT's GSS-API for every
#        message (the A/B against nfs3d's own OpenSSL tokens).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/bench/private_ns.sh" "$@"
. "$REPO/bench/one_server.sh"
FLOOR=$REPO/build-release/bench/krb5_crypto_floor
FLAVORS="sys krb5 krb5i krb5p"
while [ $# -gt 0 ]; do
  case $1 in
    --floor) FLOOR=$2 ;;
    --flavors) FLAVORS=$2 ;;
    *) bench_option "$1" "${2:-}" || { echo "usage: see the head of $0" >&2; exit 2; } ;;
  esac
  shift 2
done
bench_mode_args() { [ "$1" = sys ] || bench_krb5_args "$1"; }

bench_server_setup krb5bench
bench_kdc_start
bench_server_start "rw,insecure,no_root_squash,sec=sys:krb5:krb5i:krb5p" \
  "$(printf '[kerberos]\nkeytab = %s\nprincipal = *' "$D/kdc/nfs.keytab")"

CRYPTO_FLOOR=$("$FLOOR" 512)
export CRYPTO_FLOOR NCPU=$(nproc)
echo "# bench/krb5.sh: $ROUNDS rounds x ${TIME}s, $(nproc) CPUs, $(uptime | sed 's/.*load/load/')"
echo "# ${NFS3D_KRB5_GSSAPI:+NFS3D_KRB5_GSSAPI=1 (MIT GSS-API per message) }nfs3d $NFS3D"
bench_rows "$FLAVORS" | PYTHONPATH="$REPO/bench" python3 -c '
import json, os, sys
from mode_table import med, print_table, read_rows
rows = read_rows(sys.stdin)
print_table(rows, "flavor", "sys")

# Bulk: every GB costs at least the server and client CPU of the sys row plus
# the crypto of both ends, on NCPU shared cores (an upper bound: it leaves
# out the copies that sys avoids). GETATTR: one connection is bounded by the
# server CPU per call, which krb5 raises by the two MICs the server makes
# and checks (half of the four of a call).
floor = json.loads(os.environ["CRYPTO_FLOOR"])
added = {"krb5": 0.0, "krb5i": floor["mic_s_per_gb"] + floor["verify_s_per_gb"],
         "krb5p": floor["seal_s_per_gb"] + floor["unseal_s_per_gb"]}
ncpu = int(os.environ["NCPU"])
print()
print("crypto CPU per GB, one thread (bench/krb5_crypto_floor): MIC %.2f s, verify %.2f s, "
      "seal %.2f s, unseal %.2f s; the four MICs of a call %.2f us" % (
          floor["mic_s_per_gb"], floor["verify_s_per_gb"], floor["seal_s_per_gb"],
          floor["unseal_s_per_gb"], floor["call_mics_us"]))
print("| workload | flavor | ceiling | ceiling vs sys | measured / ceiling |")
print("|---|---|---|---|---|")
for (w, sec), runs in rows.items():
    sys_runs = rows.get((w, "sys"))
    if sec not in added or not sys_runs or (w == "getattr" and sec != "krb5"):
        continue
    if w == "getattr":
        rate = lambda r: r["calls_per_sec"]
        server_us = med(sys_runs, lambda r: r["server_cpu_sec"] / max(r["calls"], 1) * 1e6)
        ceiling = med(sys_runs, rate) * server_us / (server_us + floor["call_mics_us"] / 2)
        shown = "%.0f calls/s" % ceiling
    else:
        per_gb = lambda r: (r["server_cpu_sec"] + r["client_cpu_sec"]) / max(r["bytes"], 1) * 1e9
        ceiling = ncpu / (med(sys_runs, per_gb) + added[sec]) * 1000  # MB/s
        rate = lambda r: r["MBps"]
        shown = "%.0f MB/s" % ceiling
    print("| %s | %s | %s | %.2fx | %.2f |" % (
        w, sec, shown, ceiling / med(sys_runs, rate), med(runs, rate) / ceiling))
'
